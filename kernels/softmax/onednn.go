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
	"github.com/autotune-dev/autotune/kernels"
)

// onednnBaselines are the baselines of builds with the onednn tag.
var onednnBaselines = []kernels.Baseline{{
	Name: "onednn",
	Doc: "oneDNN's softmax primitive (forward inference, axis 1) through cgo, created once for the shape, " +
		"on oneDNN's own threads (all cores unless OMP_NUM_THREADS says otherwise)",
	EmitGo: emitOneDNN,
	Cgo:    true,
}}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates oneDNN's softmax primitive over the rows of the row-major
// rows×cols matrix at the first call and runs it on the buffers of each
// call, and a Go function that calls it.
func emitOneDNN(f *jen.File, name string, shape []int) {
	rows, cols := checkShape(shape)
	c := kernels.OneDNNPrelude(name) + strings.NewReplacer("P_", name+"_", "DIMS", kernels.OneDNNDims(rows, cols),
		"STRIDES", kernels.OneDNNDims(cols, 1)).Replace(`
static dnnl_primitive_t P_softmax;
static dnnl_memory_t P_src, P_dst;

static void P_call(float *dst, float *src) {
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
	f.Add(golang.Comment(fmt.Sprintf("%s writes to dst the softmax of each row of the %d×%d row-major matrix src "+
		"with oneDNN's softmax primitive; autotune bench compares tuned kernels with it.", name, rows, cols)))
	f.Func().Id(name).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Float32()).Block(
		kernels.CgoCall(name+"_call", []string{"dst", "src"}, []int{rows * cols, rows * cols})...,
	)
}
