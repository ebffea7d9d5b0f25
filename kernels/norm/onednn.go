//go:build onednn

package norm

// The onednn baseline calls oneDNN through cgo, so it exists only in
// builds with the onednn tag: default builds need no C library. Such a
// build links oneDNN into this package too, although nothing here calls
// it, so that the build fails at once where the library is missing
// (install Debian's libdnnl-dev), not at the first bench. The emitted code
// links it by its own cgo directive.

// #cgo LDFLAGS: -ldnnl
// #include <oneapi/dnnl/dnnl.h>
import "C"

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/onednn"
)

// onednnBaselines are LayerNorm's baselines of builds with the onednn
// tag: oneDNN's layer normalization on float32 and, for workloads of
// bf16 and f16, on their 16-bit buffers (onednn-bf16, onednn-f16), where
// oneDNN has it. oneDNN 2 has a layer normalization primitive but no
// RMSNorm, so RMSNorm has none.
var onednnBaselines = []kernels.Baseline{onednnBaseline(dtype.F32), onednnBaseline(dtype.BF16), onednnBaseline(dtype.F16)}

// onednnBaseline returns the onednn baseline of dt: named onednn for
// float32 and onednn-bf16 or onednn-f16 for a 16-bit dtype, whose
// primitive reads and writes dt (computing in float32 inside), left out
// where oneDNN has none for dt on this CPU.
func onednnBaseline(dt dtype.DType) kernels.Baseline {
	b := kernels.Baseline{
		Name: "onednn",
		Doc: "oneDNN's layer normalization primitive (forward inference, scale and shift, statistics computed by it) " +
			"through cgo, created once for the shape, on oneDNN's own threads (all cores unless OMP_NUM_THREADS says otherwise)",
		EmitGo: func(f *jen.File, name string, shape []int) { emitOneDNN(f, name, shape, dt) },
		Cgo:    true,
		// Its float32 statistics (E[x²]−E[x]², a sum of squares that
		// overflows) are wrong on these sets; TestOneDNN shows it.
		KnownWrong: []string{"large", "constant", "lowvar"},
	}
	if dt == dtype.F32 {
		return b
	}
	b.Name += "-" + string(dt)
	b.Doc = "oneDNN's layer normalization primitive on " + string(dt) + " source and destination" +
		strings.TrimPrefix(b.Doc, "oneDNN's layer normalization primitive") +
		"; its scale and shift are float32 in oneDNN 2, so each call first widens gamma and beta into float32 buffers " +
		"(cols elements each)"
	b.DType = dt
	// Its bf16 statistics are right on the constant and low-variance
	// rows, where the float32 ones are not, but its float32 sum of
	// squared deviations still overflows to +Inf for the large rows
	// (|x| near 1e18) beyond about 150 columns, and y is then beta:
	// wrong at 4096 columns, right up to 97 (TestOneDNNHalf shows it).
	// f16's sets stay far from float32's limits; its kernel was never
	// seen here (no AVX512-FP16).
	b.KnownWrong = nil
	if dt == dtype.BF16 {
		b.KnownWrong = []string{"large"}
	}
	b.Skip = func(shape []int) string {
		rows, cols := checkShape(shape)
		return onednn.LayerNorm(dt, onednn.MD{Dims: []int{rows, cols}, Strides: []int{cols, 1}}, float32(layer.eps))
	}
	return b
}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates oneDNN's layer normalization primitive over the rows of the
// row-major rows×cols matrix of dt at the first call and runs it on the
// buffers of each call, and a Go function that calls it. oneDNN 2 holds
// the scale and shift in float32 whatever dt is, so for a 16-bit dt the
// call first widens gamma and beta into float32 buffers of its own:
// cols elements each, against the rows×cols of x and y.
func emitOneDNN(f *jen.File, name string, shape []int, dt dtype.DType) {
	rows, cols := checkShape(shape)
	vmd, widen, gamma, beta := "P_md(1, vdim, vstride)", "", "gamma", "beta"
	if dt != dtype.F32 {
		vmd = "P_md32(vdim)"
		widen = "\n\tP_widen(P_gamma32, gamma);\n\tP_widen(P_beta32, beta);"
		gamma, beta = "P_gamma32", "P_beta32"
	}
	c := strings.NewReplacer("WIDEN_DEFS", widenC(dt), "VMD", vmd, "WIDEN", widen, "GAMMA", gamma, "BETA", beta).Replace(`
static dnnl_primitive_t P_lnorm;
static dnnl_memory_t P_src, P_dst, P_scale, P_shift;
WIDEN_DEFS
static void P_call(ELEM *dst, ELEM *src, ELEM *gamma, ELEM *beta) {
	if (!P_lnorm) {
		P_start();
		const dnnl_dim_t dims[] = DIMS, strides[] = STRIDES, vdim[] = VDIM, vstride[] = {1};
		dnnl_memory_desc_t md = P_md(2, dims, strides), vmd = VMD;
		dnnl_layer_normalization_desc_t d;
		P_ok(dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL, EPS,
			dnnl_use_scale | dnnl_use_shift), "layer normalization descriptor");
		P_lnorm = P_prim(&d, NULL);
		P_src = P_mem(&md);
		P_dst = P_mem(&md);
		P_scale = P_mem(&vmd);
		P_shift = P_mem(&vmd);
	}WIDEN
	dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, P_src}, {DNNL_ARG_DST, P_dst}, {DNNL_ARG_SCALE, P_scale}, {DNNL_ARG_SHIFT, P_shift}};
	void *bufs[] = {src, dst, GAMMA, BETA};
	P_exec(P_lnorm, 4, args, bufs);
}
`)
	c = kernels.OneDNNPrelude(name, dt) + strings.NewReplacer("P_", name+"_", "DIMS", kernels.OneDNNDims(rows, cols), "STRIDES", kernels.OneDNNDims(cols, 1),
		"VDIM", kernels.OneDNNDims(cols), "COLS", fmt.Sprint(cols), "EPS", fmt.Sprintf("%gf", layer.eps), "ELEM", kernels.CElem(dt)).Replace(c)
	f.CgoPreamble(c)
	of := ""
	if dt != dtype.F32 {
		of = " " + string(dt)
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to y the LayerNorm of each row of the %d×%d row-major%s matrix x "+
		"with oneDNN's layer normalization primitive; autotune bench compares tuned kernels with it.", name, rows, cols, of)))
	f.Func().Id(name).Params(jen.List(jen.Id("y"), jen.Id("x"), jen.Id("gamma"), jen.Id("beta")).Index().Add(kernels.GoElem(dt))).Block(
		kernels.CgoCallOf(name+"_call", dt, []string{"y", "x", "gamma", "beta"}, []int{rows * cols, rows * cols, cols, cols})...,
	)
}

// widenC returns the C a 16-bit dt's kernel has beyond the float32 one's
// (nothing for float32): the float32 buffers of gamma and beta, P_md32,
// a float32 descriptor of a vector of them, and P_widen, which decodes
// cols elements of dt into one of them exactly (bf16 is float32's upper
// half; f16 by its fields, subnormals, infinities and NaNs too).
func widenC(dt dtype.DType) string {
	if dt == dtype.F32 {
		return ""
	}
	decode := `	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;`
	if dt == dtype.F16 {
		decode = `	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
	if (e == 0x1f) {
		u = sign | 0x7f800000 | m << 13;
	} else if (e != 0) {
		u = sign | (e + 112) << 23 | m << 13;
	} else {
		float f = (float)m * 0x1p-24f; // a subnormal (or zero): m·2⁻²⁴, exact in float32
		return h & 0x8000 ? -f : f;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;`
	}
	return `
#include <string.h>

static float P_gamma32[COLS], P_beta32[COLS];

static dnnl_memory_desc_t P_md32(const dnnl_dim_t *vdim) {
	dnnl_memory_desc_t md;
	dnnl_dims_t d = {vdim[0]}, s = {1};
	P_ok(dnnl_memory_desc_init_by_strides(&md, 1, d, dnnl_f32, s), "float32 memory descriptor");
	return md;
}

static float P_float(uint16_t h) {
` + decode + `
}

static void P_widen(float *dst, const uint16_t *src) {
	for (int i = 0; i < COLS; i++) dst[i] = P_float(src[i]);
}
`
}
