//go:build onednn

package softmax

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

// onednnBaselines are the baselines of builds with the onednn tag:
// oneDNN's softmax on float32 and, for workloads of bf16 and f16, on
// their 16-bit buffers (onednn-bf16, onednn-f16), where oneDNN has it.
var onednnBaselines = []kernels.Baseline{onednnBaseline(dtype.F32), onednnBaseline(dtype.BF16), onednnBaseline(dtype.F16)}

// onednnBaseline returns the onednn baseline of dt: named onednn for
// float32 and onednn-bf16 or onednn-f16 for a 16-bit dtype, whose
// primitive reads and writes dt (computing in float32 inside), left out
// where oneDNN has none for dt on this CPU.
func onednnBaseline(dt dtype.DType) kernels.Baseline {
	b := kernels.Baseline{
		Name: "onednn",
		Doc: "oneDNN's softmax primitive (forward inference, axis 1) through cgo, created once for the shape, " +
			"on oneDNN's own threads (all cores unless OMP_NUM_THREADS says otherwise)",
		EmitGo: func(f *jen.File, name string, shape []int) { emitOneDNN(f, name, shape, dt) },
		Cgo:    true,
	}
	if dt != dtype.F32 {
		b.Name += "-" + string(dt)
		b.Doc = "oneDNN's softmax primitive on " + string(dt) + " source and destination" + strings.TrimPrefix(b.Doc, "oneDNN's softmax primitive")
		b.DType = dt
		if dt == dtype.BF16 {
			// Its jit kernel writes exp(x−max) to the bf16 destination
			// and scales it there: two roundings, up to 1.4 units in the
			// last place, where the tolerance allows the one rounding of
			// a float32 result; right only on the constant rows, whose
			// weights 1/n round once (TestOneDNNHalf shows it). Its f16
			// kernel was never seen here (no AVX512-FP16).
			b.KnownWrong = []string{"uniform", "large", "neginf", "subnormal"}
		}
		b.Skip = func(shape []int) string {
			rows, cols := checkShape(shape)
			return onednn.Softmax(dt, onednn.MD{Dims: []int{rows, cols}, Strides: []int{cols, 1}}, 1)
		}
	}
	return b
}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates oneDNN's softmax primitive over the rows of the row-major
// rows×cols matrix of dt at the first call and runs it on the buffers of
// each call, and a Go function that calls it.
func emitOneDNN(f *jen.File, name string, shape []int, dt dtype.DType) {
	rows, cols := checkShape(shape)
	c := kernels.OneDNNPrelude(name, dt) + strings.NewReplacer("P_", name+"_", "DIMS", kernels.OneDNNDims(rows, cols),
		"STRIDES", kernels.OneDNNDims(cols, 1), "ELEM", kernels.CElem(dt)).Replace(`
static dnnl_primitive_t P_softmax;
static dnnl_memory_t P_src, P_dst;

static void P_call(ELEM *dst, ELEM *src) {
	if (!P_softmax) {
		P_start();
		const dnnl_dim_t dims[] = DIMS, strides[] = STRIDES;
		dnnl_memory_desc_t md = P_md(2, dims, strides);
		dnnl_softmax_desc_t d;
		P_ok(dnnl_softmax_forward_desc_init(&d, dnnl_forward_inference, &md, 1), "softmax descriptor");
		P_softmax = P_prim(&d, NULL);
		P_src = P_mem(&md);
		P_dst = P_mem(&md);
	}
	dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, P_src}, {DNNL_ARG_DST, P_dst}};
	void *bufs[] = {src, dst};
	P_exec(P_softmax, 2, args, bufs);
}
`)
	f.CgoPreamble(c)
	f.Add(golang.Comment(fmt.Sprintf("%s writes to dst the softmax of each row of the %d×%d row-major %s matrix src "+
		"with oneDNN's softmax primitive; autotune bench compares tuned kernels with it.", name, rows, cols, dt)))
	f.Func().Id(name).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Add(kernels.GoElem(dt))).Block(
		kernels.CgoCallOf(name+"_call", dt, []string{"dst", "src"}, []int{rows * cols, rows * cols})...,
	)
}
