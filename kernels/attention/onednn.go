//go:build onednn

package attention

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
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/onednn"
)

// onednnBaselines returns the onednn baselines of Template, or of
// TemplateCausal with causal: attention composed of three oneDNN
// primitives over all heads at once, as a framework's CPU path runs it;
// onednn on float32 and, for workloads of bf16 and f16, onednn-bf16 and
// onednn-f16 with every buffer, the scores too, in the 16-bit dtype,
// where oneDNN has the primitives.
func onednnBaselines(causal bool) []kernels.Baseline {
	return []kernels.Baseline{onednnBaseline(causal, dtype.F32), onednnBaseline(causal, dtype.BF16), onednnBaseline(causal, dtype.F16)}
}

// onednnBaseline returns the onednn baseline of dt (see onednnBaselines).
func onednnBaseline(causal bool, dt dtype.DType) kernels.Baseline {
	doc := "composition: oneDNN's batched matmul for Q·Kᵀ/√D (the scale as an output scale) into B·H·S×S scores, " +
		"oneDNN's softmax in place, oneDNN's batched matmul for the weights times V; "
	if causal {
		doc = "composition: oneDNN's batched matmul for the full Q·Kᵀ/√D into B·H·S×S scores, the causal mask (0 or -Inf) added " +
			"in place by oneDNN's binary primitive, oneDNN's softmax in place, oneDNN's batched matmul for the weights times V; "
	}
	b := kernels.Baseline{
		Name:   "onednn",
		Doc:    doc + "primitives created once for the shape, on oneDNN's own threads",
		EmitGo: func(f *jen.File, name string, shape []int) { emitOneDNN(f, name, shape, causal, dt) },
		Cgo:    true,
		Skip:   func(shape []int) string { return skipBatchedScores(shape, dt) },
	}
	if dt != dtype.F32 {
		b.Name += "-" + string(dt)
		b.Doc = strings.Replace(b.Doc, "composition:", "composition in "+string(dt)+", the scores too:", 1)
		b.DType = dt
		if dt == dtype.BF16 {
			// Its scores and softmax weights are stored in bf16, as a
			// composition of bf16 primitives must: a score of 10 rounded
			// to bf16 moves its weight by up to 2%, far outside the
			// tolerance, which allows float32 intermediates, on every set
			// (TestOneDNNHalf shows it). CausalOp has Op's sets. Its f16
			// primitives were never seen here (no AVX512-FP16).
			b.KnownWrong = kernels.SetNames(Op.InputSetsFor(dt))
		}
		b.Skip = func(shape []int) string {
			return cmp.Or(skipBatchedScores(shape, dt), missingPrimitives(shape, causal, dt))
		}
	}
	return b
}

// skipBatchedScores leaves the onednn baseline of dt out of benches where
// the scores of all heads take more than maxScoreBytes.
func skipBatchedScores(shape []int, dt dtype.DType) string {
	b, h, s, _ := checkShape(shape)
	if n := float64(dt.Size()) * float64(b) * float64(h) * float64(s) * float64(s); n > maxScoreBytes {
		return fmt.Sprintf("the S×S scores of its B·H heads take %.3g GiB, more than the 1 GiB it is run for", n/(1<<30))
	}
	return ""
}

// missingPrimitives says which of the primitives emitOneDNN creates for
// shape oneDNN lacks in dt on this CPU, or returns "".
func missingPrimitives(shape []int, causal bool, dt dtype.DType) string {
	b, h, s, d := checkShape(shape)
	bh := b * h
	md := func(dims, strides []int) onednn.MD { return onednn.MD{Dims: dims, Strides: strides} }
	q, kt, scores := md([]int{bh, s, d}, []int{s * d, d, 1}), md([]int{bh, d, s}, []int{s * d, 1, d}), md([]int{bh, s, s}, []int{s * s, s, 1})
	why := cmp.Or(onednn.Matmul{Src: q, Weights: kt, Dst: scores, Scale: true}.Missing(dt), onednn.Softmax(dt, scores, 2),
		onednn.Matmul{Src: scores, Weights: q, Dst: q}.Missing(dt))
	if causal && why == "" {
		why = onednn.Add(dt, scores, md([]int{1, s, s}, []int{s * s, s, 1}))
	}
	return why
}

// emitOneDNN emits the kernel called name: C in the cgo preamble that
// creates, at the first call, three primitives of dt over the B·H heads as
// batches, and a buffer of B·H·S×S scores of dt that it keeps (C memory, which
// bench's ALLOC does not count), then runs them on the buffers of each
// call; and a Go function that calls it.
//
// As PyTorch's CPU path of scaled_dot_product_attention without a fused
// kernel: scores = Q·Kᵀ with K read transposed by strides and 1/√D
// applied as matmul's output scale; with causal, oneDNN's binary primitive
// adds the mask, 0 for keys j ≤ i and -Inf above, to the full product in
// place, as a framework adds an attention mask (with the mask as a binary
// post-op of the matmul instead, oneDNN 2.6 stalled a bench's check at
// 1x8x1024x64 for over a minute, where the unmasked composition takes tens
// of milliseconds a call); the softmax of each row in place; out = scores·V.
func emitOneDNN(f *jen.File, name string, shape []int, causal bool, dt dtype.DType) {
	b, h, s, d := checkShape(shape)
	bh := b * h
	mask, maskRun := "", ""
	if causal {
		mask = `
		const dnnl_dim_t mask_dims[] = MASKDIMS;
		dnnl_memory_desc_t mask_md = P_md(3, mask_dims, s_strides);
		dnnl_binary_desc_t add;
		P_ok(dnnl_binary_desc_init(&add, dnnl_binary_add, &s_md, &mask_md, &s_md), "binary descriptor");
		P_mask_add = P_prim(&add, NULL);
		ELEM *mask = aligned_alloc(64, MASKBYTES);
		if (!mask) P_ok(dnnl_out_of_memory, "the mask");
		for (long i = 0; i < SDIM; i++)
			for (long j = 0; j < SDIM; j++)
				mask[i*SDIM + j] = j <= i ? ZERO : NEGINF;
		P_mask = P_mem(&mask_md);
		P_ok(dnnl_memory_set_data_handle(P_mask, mask), "binding the mask");`
		maskRun = `
	dnnl_exec_arg_t add[] = {{DNNL_ARG_SRC_0, P_scores}, {DNNL_ARG_SRC_1, P_mask}, {DNNL_ARG_DST, P_scores}};
	void *add_bufs[] = {NULL, NULL, NULL};
	P_exec(P_mask_add, 3, add, add_bufs);`
	}
	round := func(n int) string { return fmt.Sprint((n + 63) / 64 * 64) }
	c := strings.NewReplacer(
		"MASKSETUP", mask, "MASKRUN", maskRun,
		"QDIMS", kernels.OneDNNDims(bh, s, d), "QSTRIDES", kernels.OneDNNDims(s*d, d, 1),
		"KTDIMS", kernels.OneDNNDims(bh, d, s), "KTSTRIDES", kernels.OneDNNDims(s*d, 1, d),
		"SDIMS", kernels.OneDNNDims(bh, s, s), "SSTRIDES", kernels.OneDNNDims(s*s, s, 1),
		"SCOREBYTES", round(dt.Size()*bh*s*s), "SCALE", fmt.Sprintf("%.9g", float32(1/math.Sqrt(float64(d)))),
	).Replace(`
#include <math.h>

static dnnl_primitive_t P_qk, P_mask_add, P_softmax, P_pv;
static dnnl_memory_t P_q, P_k, P_v, P_out, P_scores, P_mask;

static void P_call(ELEM *out, ELEM *q, ELEM *k, ELEM *v) {
	if (!P_qk) {
		P_start();
		const dnnl_dim_t q_dims[] = QDIMS, q_strides[] = QSTRIDES;
		const dnnl_dim_t kt_dims[] = KTDIMS, kt_strides[] = KTSTRIDES;
		const dnnl_dim_t s_dims[] = SDIMS, s_strides[] = SSTRIDES;
		dnnl_memory_desc_t q_md = P_md(3, q_dims, q_strides), kt_md = P_md(3, kt_dims, kt_strides),
			s_md = P_md(3, s_dims, s_strides);
		const float scale = SCALE;
		dnnl_primitive_attr_t attr;
		P_ok(dnnl_primitive_attr_create(&attr), "attributes");
		P_ok(dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale), "output scale");MASKSETUP
		dnnl_matmul_desc_t qk, pv;
		P_ok(dnnl_matmul_desc_init(&qk, &q_md, &kt_md, NULL, &s_md), "matmul descriptor");
		P_qk = P_prim(&qk, attr);
		P_ok(dnnl_primitive_attr_destroy(attr), "destroying attributes");
		dnnl_softmax_desc_t sm;
		P_ok(dnnl_softmax_forward_desc_init(&sm, dnnl_forward_inference, &s_md, 2), "softmax descriptor");
		P_softmax = P_prim(&sm, NULL);
		P_ok(dnnl_matmul_desc_init(&pv, &s_md, &q_md, NULL, &q_md), "matmul descriptor");
		P_pv = P_prim(&pv, NULL);
		P_q = P_mem(&q_md);
		P_k = P_mem(&kt_md);
		P_v = P_mem(&q_md);
		P_out = P_mem(&q_md);
		ELEM *scores = aligned_alloc(64, SCOREBYTES);
		if (!scores) P_ok(dnnl_out_of_memory, "the scores");
		P_scores = P_mem(&s_md);
		P_ok(dnnl_memory_set_data_handle(P_scores, scores), "binding the scores");
	}
	dnnl_exec_arg_t qk[] = {{DNNL_ARG_SRC, P_q}, {DNNL_ARG_WEIGHTS, P_k}, {DNNL_ARG_DST, P_scores}};
	void *qk_bufs[] = {q, k, NULL};
	P_exec(P_qk, 3, qk, qk_bufs);MASKRUN
	dnnl_exec_arg_t sm[] = {{DNNL_ARG_SRC, P_scores}, {DNNL_ARG_DST, P_scores}};
	void *sm_bufs[] = {NULL, NULL};
	P_exec(P_softmax, 2, sm, sm_bufs);
	dnnl_exec_arg_t pv[] = {{DNNL_ARG_SRC, P_scores}, {DNNL_ARG_WEIGHTS, P_v}, {DNNL_ARG_DST, P_out}};
	void *pv_bufs[] = {NULL, v, out};
	P_exec(P_pv, 3, pv, pv_bufs);
}
`)
	zero, negInf := "0.0f", "-INFINITY"
	if dt.Size() == 2 {
		zero, negInf = "0", fmt.Sprintf("0x%04x", dt.Encode(float32(math.Inf(-1))))
	}
	c = strings.NewReplacer("MASKDIMS", kernels.OneDNNDims(1, s, s), "MASKBYTES", round(dt.Size()*s*s), "SDIM", fmt.Sprint(s),
		"ZERO", zero, "NEGINF", negInf, "ELEM", kernels.CElem(dt), "P_", name+"_").Replace(c)
	f.CgoPreamble(kernels.OneDNNPrelude(name, dt) + c)
	what := ""
	if causal {
		what = ", causal (query i attends to keys j ≤ i)"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√D)·v of the %d×%d×%d×%d [B][H][S][D] "+
		"%s tensors q, k and v%s, composed of oneDNN's batched matmul, softmax and batched matmul; "+
		"autotune bench compares tuned kernels with it.", name, b, h, s, d, dt, what)))
	n := b * h * s * d
	f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("q"), jen.Id("k"), jen.Id("v")).Index().Add(kernels.GoElem(dt))).Block(
		kernels.CgoCallOf(name+"_call", dt, []string{"out", "q", "k", "v"}, []int{n, n, n, n})...,
	)
}
