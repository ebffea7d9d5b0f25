package gemm

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// Op is the float32 matrix product C = A·B: for a shape [M, N, K], A (in0)
// is a row-major M×K matrix, B (in1) a row-major K×N matrix, and the kernel
// writes the row-major M×N matrix C (out).
var Op = kernels.Op{
	Name: "gemm", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
	Summary:       "C = A·B for row-major M×K and K×N matrices",
	DTypes:        dtypes,
	Args:          args,
	Reference:     reference,
	EmitReference: emitReference(noEpilogue),
	API:           kernels.API{Func: "Gemm", Args: []string{"c", "a", "b"}, Dims: []string{"m", "n", "k"}},
	Tolerance:     tolerance,
	Inputs:        inputs,
	FLOPs: func(shape []int) float64 {
		m, n, k := checkShape(shape)
		return 2 * float64(m) * float64(n) * float64(k)
	},
	Bytes: func(shape []int) float64 {
		m, n, k := checkShape(shape)
		return 4 * (float64(m)*float64(k) + float64(k)*float64(n) + float64(m)*float64(n))
	},
}

// BiasOp is the matrix product with a bias, C = A·B + bias: A and B as for
// Op, and bias (in2) a vector of N elements added to every row of the
// product.
var BiasOp = epilogueOp(biasEpilogue, kernels.Op{
	Name: "gemm_bias", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
	Summary: "C = A·B + bias for row-major M×K and K×N matrices and an N-vector bias added to every row",
	API:     kernels.API{Func: "GemmBias", Args: []string{"c", "a", "b", "bias"}, Dims: []string{"m", "n", "k"}},
})

// BiasReLUOp is BiasOp followed by a ReLU, C = max(0, A·B + bias).
var BiasReLUOp = epilogueOp(biasReLUEpilogue, kernels.Op{
	Name: "gemm_bias_relu", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
	Summary: "C = max(0, A·B + bias) for row-major M×K and K×N matrices and an N-vector bias",
	API:     kernels.API{Func: "GemmBiasReLU", Args: []string{"c", "a", "b", "bias"}, Dims: []string{"m", "n", "k"}},
})

// dtypes are the element types of the CPU kernels (bf16 and f16 through
// float32 copies, package kernels/halfcopy, or converted while packing,
// packhalf.go: the convert knob); the CUDA templates narrow
// their copies of the ops to f32.
var dtypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

func init() {
	for _, t := range []kernels.Template{Template, BiasTemplate, BiasReLUTemplate} {
		kernels.RegisterOp(t.Op)
		kernels.Register(t)
	}
	for _, t := range []kernels.Template{CUDATemplate, BiasCUDATemplate, BiasReLUCUDATemplate} {
		kernels.Register(t)
	}
}

// epilogueOp completes op, GEMM with the epilogue e: the bias argument, the
// epilogue's reference and work, and GEMM's tolerance.
func epilogueOp(e epilogue, op kernels.Op) kernels.Op {
	op.Args = func(shape []int) (ins []int, out int) {
		m, n, k := checkShape(shape)
		return []int{m * k, k * n, n}, m * n
	}
	op.Reference = func(shape []int, ins [][]float32, out []float64) { referenceEpilogue(shape, ins, out, e) }
	op.EmitReference = emitReference(e)
	op.Tolerance = tolerance
	op.Inputs = inputs
	op.DTypes = dtypes
	op.FLOPs = func(shape []int) float64 {
		m, n, k := checkShape(shape)
		f := 2*float64(m)*float64(n)*float64(k) + float64(m)*float64(n)
		if e.act != nil {
			f += e.act.flops() * float64(m) * float64(n)
		}
		return f
	}
	op.Bytes = func(shape []int) float64 {
		m, n, k := checkShape(shape)
		return 4 * (float64(m)*float64(k) + float64(k)*float64(n) + float64(n) + float64(m)*float64(n))
	}
	return op
}

// checkShape panics unless shape is [M, N, K] with all three positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a bug.
func checkShape(shape []int) (m, n, k int) {
	if len(shape) != 3 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 {
		panic(fmt.Sprintf("gemm: shape %v, want [M N K] with all ≥ 1", shape))
	}
	return shape[0], shape[1], shape[2]
}

func args(shape []int) (ins []int, out int) {
	m, n, k := checkShape(shape)
	return []int{m * k, k * n}, m * n
}

// reference computes C = A·B in float64, loop order i-k-j.
func reference(shape []int, ins [][]float32, out []float64) {
	m, n, k := checkShape(shape)
	a, b := ins[0][:m*k], ins[1][:k*n]
	out = out[:m*n]
	kernels.ForRows(m, func(lo, hi int) {
		i := lo
		// Four rows at a time share each row of B, read and converted once:
		// at 8192³ B is 256 MB, read from memory once per four rows instead
		// of per row. Every output sums the same products in the same order
		// as one row at a time does.
		for ; i+4 <= hi; i += 4 {
			c0, c1, c2, c3 := out[i*n:(i+1)*n], out[(i+1)*n:(i+2)*n], out[(i+2)*n:(i+3)*n], out[(i+3)*n:(i+4)*n]
			clear(out[i*n : (i+4)*n])
			for p := range k {
				a0, a1, a2, a3 := float64(a[i*k+p]), float64(a[(i+1)*k+p]), float64(a[(i+2)*k+p]), float64(a[(i+3)*k+p])
				bp := b[p*n : (p+1)*n]
				c0, c1, c2, c3 := c0[:len(bp)], c1[:len(bp)], c2[:len(bp)], c3[:len(bp)]
				for j, bpj := range bp {
					x := float64(bpj)
					c0[j] += a0 * x
					c1[j] += a1 * x
					c2[j] += a2 * x
					c3[j] += a3 * x
				}
			}
		}
		for ; i < hi; i++ {
			c := out[i*n : (i+1)*n]
			clear(c)
			for p := range k {
				aip := float64(a[i*k+p])
				for j, bpj := range b[p*n : (p+1)*n] {
					c[j] += aip * float64(bpj)
				}
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
)

// tolerance is rel = 4·2^-24·(1+√K) and abs = 8·2^-24·K·inputBound², about
// 7.6e-6 and 7.8e-3 at K = 1024.
func tolerance(shape []int, dt dtype.DType) (rel, abs float64) {
	return toleranceFor(inputBound)(shape, dt)
}

// toleranceFor is tolerance for inputs of magnitude at most bound.
func toleranceFor(bound float64) func(shape []int, dt dtype.DType) (rel, abs float64) {
	return func(shape []int, dt dtype.DType) (rel, abs float64) {
		_, _, k := checkShape(shape)
		// A 16-bit output rounds what float32 computed, abs included,
		// and below its normal range adds half its smallest subnormal.
		abs = 8 * eps32 * float64(k) * bound * bound
		return 4*eps32*(1+math.Sqrt(float64(k))) + kernels.OutputRounding(dt),
			abs*(1+kernels.OutputRounding(dt)) + kernels.OutputRoundingAbs(dt)
	}
}

// referenceEpilogue computes the product in float64 as reference does, then
// adds bias (ins[2]) to every row and, for ReLU, takes the maximum with 0.
func referenceEpilogue(shape []int, ins [][]float32, out []float64, e epilogue) {
	m, n, _ := checkShape(shape)
	reference(shape, ins, out)
	bias := ins[2][:n]
	for i := range m {
		c := out[i*n : (i+1)*n]
		for j, x := range bias {
			c[j] += float64(x)
			if e.act != nil {
				c[j] = e.act.reference(c[j])
			}
		}
	}
}
