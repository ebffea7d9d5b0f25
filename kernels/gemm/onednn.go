//go:build onednn

package gemm

// The onednn baselines call oneDNN through cgo, so they exist only in
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

// onednnBaselines returns the onednn baselines of the template with the
// epilogue e: oneDNN's matmul primitive, with the bias as its bias
// argument and ReLU as an eltwise post-op, as a user of oneDNN fuses them;
// onednn on float32 and, for workloads of bf16 and f16, onednn-bf16 and
// onednn-f16 on their 16-bit buffers, where oneDNN has them.
func onednnBaselines(e epilogue) []kernels.Baseline {
	return []kernels.Baseline{onednnBaseline(e, dtype.F32), onednnBaseline(e, dtype.BF16), onednnBaseline(e, dtype.F16)}
}

// onednnBaseline returns the onednn baseline of e in dt (see
// onednnBaselines): a 16-bit one's primitive reads and writes dt,
// accumulating in float32 inside, and is left out where oneDNN has none
// for dt on this CPU.
func onednnBaseline(e epilogue, dt dtype.DType) kernels.Baseline {
	b := kernels.Baseline{
		Name:   "onednn",
		Doc:    "oneDNN's matmul primitive through cgo, created once for the shape",
		EmitGo: func(f *jen.File, name string, shape []int) { emitOneDNN(f, name, shape, e, dt) },
		Cgo:    true,
	}
	if dt != dtype.F32 {
		b.Name += "-" + string(dt)
		b.Doc = "oneDNN's matmul primitive on " + string(dt) + " matrices (f32 accumulation) through cgo, created once for the shape"
		b.DType = dt
		b.Skip = func(shape []int) string { return onednnMatmul(shape, e).Missing(dt) }
	}
	if e.bias {
		b.Doc += ", with the bias as its bias argument"
	}
	if e.act != nil {
		actDoc, _ := e.act.onednn()
		b.Doc += " and " + actDoc
	}
	b.Doc += ", on oneDNN's own threads (all cores unless OMP_NUM_THREADS says otherwise)"
	return b
}

// onednnMatmul is the primitive emitOneDNN creates for shape and e, for
// asking oneDNN whether it has it.
func onednnMatmul(shape []int, e epilogue) onednn.Matmul {
	m, n, k := checkShape(shape)
	mm := onednn.Matmul{Src: onednn.MD{Dims: []int{m, k}, Strides: []int{k, 1}}, Weights: onednn.MD{Dims: []int{k, n}, Strides: []int{n, 1}},
		Dst: onednn.MD{Dims: []int{m, n}, Strides: []int{n, 1}}, ReLU: e.act != nil}
	if e.bias {
		mm.Bias = &onednn.MD{Dims: []int{1, n}, Strides: []int{n, 1}}
	}
	return mm
}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates oneDNN's matmul primitive for the row-major matrices of dt at the first
// call and runs it on the buffers of each call, and a Go function that
// calls it.
func emitOneDNN(f *jen.File, name string, shape []int, e epilogue, dt dtype.DType) {
	m, n, k := checkShape(shape)
	bias, post := "NULL", ""
	params, args, bufs := "ELEM *c, ELEM *a, ELEM *b", "{DNNL_ARG_SRC, P_a}, {DNNL_ARG_WEIGHTS, P_b}, {DNNL_ARG_DST, P_c}", "a, b, c"
	slices, lens := []string{"c", "a", "b"}, []int{m * n, m * k, k * n}
	if e.bias {
		bias = "&bias_md"
		params += ", ELEM *bias"
		args += ", {DNNL_ARG_BIAS, P_bias}"
		bufs += ", bias"
		slices, lens = append(slices, "bias"), append(lens, n)
	}
	if e.act != nil {
		_, post = e.act.onednn()
	}
	c := strings.NewReplacer(
		"PARAMS", params, "ARGS", args, "BUFS", bufs, "NARGS", fmt.Sprint(strings.Count(bufs, ",")+1),
		"BIASMD", bias, "POST", post,
		"ADIMS", kernels.OneDNNDims(m, k), "ASTRIDES", kernels.OneDNNDims(k, 1),
		"BDIMS", kernels.OneDNNDims(k, n), "BSTRIDES", kernels.OneDNNDims(n, 1),
		"CDIMS", kernels.OneDNNDims(m, n), "CSTRIDES", kernels.OneDNNDims(n, 1),
		"VDIMS", kernels.OneDNNDims(1, n),
	).Replace(`
static dnnl_primitive_t P_matmul;
static dnnl_memory_t P_a, P_b, P_c, P_bias;

static void P_call(PARAMS) {
	if (!P_matmul) {
		P_start();
		const dnnl_dim_t a_dims[] = ADIMS, a_strides[] = ASTRIDES;
		const dnnl_dim_t b_dims[] = BDIMS, b_strides[] = BSTRIDES;
		const dnnl_dim_t c_dims[] = CDIMS, c_strides[] = CSTRIDES;
		const dnnl_dim_t bias_dims[] = VDIMS;
		dnnl_memory_desc_t a_md = P_md(2, a_dims, a_strides), b_md = P_md(2, b_dims, b_strides),
			c_md = P_md(2, c_dims, c_strides), bias_md = P_md(2, bias_dims, c_strides);
		dnnl_matmul_desc_t d;
		P_ok(dnnl_matmul_desc_init(&d, &a_md, &b_md, BIASMD, &c_md), "matmul descriptor");
		dnnl_primitive_attr_t attr;
		P_ok(dnnl_primitive_attr_create(&attr), "attributes");POST
		P_matmul = P_prim(&d, attr);
		P_ok(dnnl_primitive_attr_destroy(attr), "destroying attributes");
		P_a = P_mem(&a_md);
		P_b = P_mem(&b_md);
		P_c = P_mem(&c_md);
		P_bias = P_mem(&bias_md);
	}
	dnnl_exec_arg_t args[] = {ARGS};
	void *bufs[] = {BUFS};
	P_exec(P_matmul, NARGS, args, bufs);
}
`)
	c = strings.NewReplacer("P_", name+"_", "ELEM", kernels.CElem(dt)).Replace(c)
	f.CgoPreamble(kernels.OneDNNPrelude(name, dt) + c)
	what := fmt.Sprintf("the row-major %s %d×%d matrix a and %d×%d matrix b", dt, m, k, k, n)
	if e.bias {
		what += fmt.Sprintf(" and %d-vector bias", n)
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes %s for %s with oneDNN's matmul primitive; "+
		"autotune bench compares tuned kernels with it.", name, e.formula(), what)))
	var ps []jen.Code
	for _, s := range slices {
		ps = append(ps, jen.Id(s))
	}
	f.Func().Id(name).Params(jen.List(ps...).Index().Add(kernels.GoElem(dt))).Block(kernels.CgoCallOf(name+"_call", dt, slices, lens)...)
}
