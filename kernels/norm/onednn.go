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
)

// onednnBaselines are LayerNorm's baselines of builds with the onednn
// tag. oneDNN 2 has a layer normalization primitive but no RMSNorm, so
// RMSNorm has none.
var onednnBaselines = []kernels.Baseline{{
	Name: "onednn",
	Doc: "oneDNN's layer normalization primitive (forward inference, scale and shift, statistics computed by it) " +
		"through cgo, created once for the shape, on oneDNN's own threads (all cores unless OMP_NUM_THREADS says otherwise)",
	EmitGo: emitOneDNN,
	Cgo:    true,
	// Its float32 statistics (E[x²]−E[x]², a sum of squares that
	// overflows) are wrong on these sets; TestOneDNN shows it.
	KnownWrong: []string{"large", "constant", "lowvar"},
}}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates oneDNN's layer normalization primitive over the rows of the
// row-major rows×cols matrix at the first call and runs it on the buffers
// of each call, and a Go function that calls it.
func emitOneDNN(f *jen.File, name string, shape []int) {
	rows, cols := checkShape(shape)
	c := kernels.OneDNNPrelude(name, dtype.F32) + strings.NewReplacer("P_", name+"_", "DIMS", kernels.OneDNNDims(rows, cols),
		"STRIDES", kernels.OneDNNDims(cols, 1), "VDIM", kernels.OneDNNDims(cols), "EPS", fmt.Sprintf("%gf", layer.eps)).Replace(`
static dnnl_primitive_t P_lnorm;
static dnnl_memory_t P_src, P_dst, P_scale, P_shift;

static void P_call(float *dst, float *src, float *gamma, float *beta) {
	if (!P_lnorm) {
		P_start();
		const dnnl_dim_t dims[] = DIMS, strides[] = STRIDES, vdim[] = VDIM, vstride[] = {1};
		dnnl_memory_desc_t md = P_md(2, dims, strides), vmd = P_md(1, vdim, vstride);
		dnnl_layer_normalization_desc_t d;
		P_ok(dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL, EPS,
			dnnl_use_scale | dnnl_use_shift), "layer normalization descriptor");
		P_lnorm = P_prim(&d, NULL);
		P_src = P_mem(&md);
		P_dst = P_mem(&md);
		P_scale = P_mem(&vmd);
		P_shift = P_mem(&vmd);
	}
	dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, P_src}, {DNNL_ARG_DST, P_dst}, {DNNL_ARG_SCALE, P_scale}, {DNNL_ARG_SHIFT, P_shift}};
	void *bufs[] = {src, dst, gamma, beta};
	P_exec(P_lnorm, 4, args, bufs);
}
`)
	f.CgoPreamble(c)
	f.Add(golang.Comment(fmt.Sprintf("%s writes to y the LayerNorm of each row of the %d×%d row-major matrix x "+
		"with oneDNN's layer normalization primitive; autotune bench compares tuned kernels with it.", name, rows, cols)))
	f.Func().Id(name).Params(jen.List(jen.Id("y"), jen.Id("x"), jen.Id("gamma"), jen.Id("beta")).Index().Float32()).Block(
		kernels.CgoCall(name+"_call", []string{"y", "x", "gamma", "beta"}, []int{rows * cols, rows * cols, cols, cols})...,
	)
}
