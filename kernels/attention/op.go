package attention

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// Op is non-causal scaled dot-product attention: for a shape [B, H, S, D],
// Q (in0), K (in1) and V (in2) are [B][H][S][D] tensors and the kernel
// writes O (out), of the same layout, with
// O[b][h] = softmax(Q[b][h]·K[b][h]ᵀ/√D)·V[b][h].
var Op = kernels.Op{
	Name: "attention", Dims: []string{"B", "H", "S", "D"}, Example: "1x8x1024x64",
	Summary:       "softmax(Q·Kᵀ/√D)·V over [B][H][S][D] tensors",
	Variants:      []kernels.Variant{causalVariant},
	Args:          args,
	Reference:     func(shape []int, ins [][]float32, out []float64) { reference(false, shape, ins, out) },
	EmitReference: emitReference(false),
	API:           kernels.API{Func: "Attention", Args: []string{"o", "q", "k", "v"}, Dims: []string{"b", "h", "s", "d"}},
	Tolerance:     tolerance,
	Inputs:        inputs,
	DTypes:        dtypes,
	FLOPs: func(shape []int) float64 {
		b, h, s, d := checkShape(shape)
		return 4 * float64(b) * float64(h) * float64(s) * float64(s) * float64(d)
	},
	Bytes: func(shape []int) float64 { return 4 * 4 * elements(shape) },
}

// CausalOp is causal attention, the op attention_causal: as Op, but query
// row i attends only to key rows j ≤ i,
// O[b][h] = softmax(Q[b][h]·K[b][h]ᵀ/√D + M)·V[b][h] with M[i][j] = 0 for
// j ≤ i and -Inf above the diagonal.
var CausalOp = kernels.Op{
	Name: "attention_causal", Dims: []string{"B", "H", "S", "D"}, Example: "1x8x1024x64",
	Summary:       "softmax(Q·Kᵀ/√D + causal mask)·V over [B][H][S][D] tensors: query i attends to keys j ≤ i",
	Variants:      []kernels.Variant{causalVariant},
	Args:          args,
	Reference:     func(shape []int, ins [][]float32, out []float64) { reference(true, shape, ins, out) },
	EmitReference: emitReference(true),
	API:           kernels.API{Func: "AttentionCausal", Args: []string{"o", "q", "k", "v"}, Dims: []string{"b", "h", "s", "d"}},
	Tolerance:     tolerance,
	Inputs:        inputs,
	DTypes:        dtypes,
	// The two products over the S(S+1)/2 pairs j ≤ i of each head, 2·D
	// each; the softmax is not counted, as in Op.
	FLOPs: func(shape []int) float64 {
		b, h, s, d := checkShape(shape)
		return 2 * float64(b) * float64(h) * float64(d) * float64(s) * float64(s+1)
	},
	Bytes: func(shape []int) float64 { return 4 * 4 * elements(shape) },
}

// causalVariant makes `--op attention --causal` attention_causal (and
// leaves attention_causal as it is).
var causalVariant = kernels.Variant{Flag: "causal", Op: "attention_causal",
	Doc: "with --op attention: the causal mask, the same as --op attention_causal"}

func init() {
	for _, t := range []kernels.Template{Template, TemplateCausal} {
		kernels.RegisterOp(t.Op)
		kernels.Register(t)
	}
	kernels.Register(CUDATemplate)
	kernels.Register(CUDATemplateCausal)
}

// checkShape panics unless shape is [B, H, S, D] with all four positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a bug.
func checkShape(shape []int) (b, h, s, d int) {
	if len(shape) != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 || shape[3] < 1 {
		panic(fmt.Sprintf("attention: shape %v, want [B H S D] with all ≥ 1", shape))
	}
	return shape[0], shape[1], shape[2], shape[3]
}

func elements(shape []int) float64 {
	b, h, s, d := checkShape(shape)
	return float64(b) * float64(h) * float64(s) * float64(d)
}

func args(shape []int) (ins []int, out int) {
	b, h, s, d := checkShape(shape)
	n := b * h * s * d
	return []int{n, n, n}, n
}

// reference computes attention in float64: per query row the scores, their
// maximum subtracted before exp, the weights' sum, and the weighted sum of
// V's rows divided by it. With causal, row i meets only keys j ≤ i (the
// masked scores' weights e^-Inf are 0, so they are left out).
func reference(causal bool, shape []int, ins [][]float32, out []float64) {
	b, h, s, d := checkShape(shape)
	n := b * h * s * d
	q, k, v := ins[0][:n], ins[1][:n], ins[2][:n]
	out = out[:n]
	scale := 1 / math.Sqrt(float64(d))
	kernels.ForRows(b*h*s, func(lo, hi int) {
		w := make([]float64, s)
		for row := lo; row < hi; row++ {
			base, i := row/s*s*d, row%s
			qi := q[base+i*d : base+(i+1)*d]
			w := w[:s]
			if causal {
				w = w[:i+1]
			}
			m := math.Inf(-1)
			for j := range w {
				kj := k[base+j*d : base+(j+1)*d]
				dot := 0.0
				for x := range qi {
					dot += float64(qi[x]) * float64(kj[x])
				}
				w[j] = dot * scale
				m = max(m, w[j])
			}
			sum := 0.0
			for j := range w {
				w[j] = math.Exp(w[j] - m)
				sum += w[j]
			}
			o := out[base+i*d : base+(i+1)*d]
			clear(o)
			for j, wj := range w {
				vj := v[base+j*d : base+(j+1)*d]
				for x := range o {
					o[x] += wj * float64(vj[x])
				}
			}
			for x := range o {
				o[x] /= sum
			}
		}
	})
}

// Error model of the tolerance (see the package doc). Inputs are assumed to
// be at most inputBound in magnitude, as the tuner's harness (±[0.125, 4])
// and the tests draw them.
const (
	eps32      = 0x1p-24
	inputBound = 4
	argError   = 88 * eps32 // s-m rounds in float32; terms below e^-88 do not count
	expError   = 2.7e-6     // the worst exp variant, poly4
)

// tolerance is rel = 4·2^-24 and
//
//	abs = inputBound · (2·(σ + argError + expError) + 8·2^-24·(1+√S))
//	σ   = 8·2^-24·D·inputBound² / √D
//
// about 6.1e-4 for S = 1024, D = 64; see the package doc.
func tolerance(shape []int, dt dtype.DType) (rel, abs float64) {
	_, _, s, d := checkShape(shape)
	sigma := 8 * eps32 * float64(d) * inputBound * inputBound / math.Sqrt(float64(d))
	weight := sigma + argError + expError
	// A 16-bit output rounds what float32 computed, abs included, and
	// below its normal range adds half its smallest subnormal.
	abs = inputBound * (2*weight + 8*eps32*(1+math.Sqrt(float64(s))))
	// A 16-bit kernel may round the weights to dt for P·V on tensor cores
	// (FlashAttention's P): each by at most dt's unit roundoff, an error of
	// at most that times max|V| in the output.
	abs += inputBound * kernels.OutputRounding(dt)
	return 4*eps32 + kernels.OutputRounding(dt), abs*(1+kernels.OutputRounding(dt)) + kernels.OutputRoundingAbs(dt)
}

// dtypes are the element types of the kernels: on the CPU bf16 and f16
// through float32 copies (package kernels/halfcopy), on CUDA converted as
// they are loaded.
var dtypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}
