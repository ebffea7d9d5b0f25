package norm

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// kind is what tells the two ops apart, everywhere in this package: the
// emitters, the reference and the input sets are written once for both.
type kind struct {
	name string
	// layer: y = (x-mean)/√(var+eps)·gamma + beta, with a third input
	// beta; otherwise RMSNorm, y = x/√(mean(x²)+eps)·gamma.
	layer bool
	eps   float64
}

// The two ops. RMSNorm's eps is Llama's, LayerNorm's PyTorch's default.
var (
	rms   = kind{name: "rmsnorm", eps: 1e-6}
	layer = kind{name: "layernorm", layer: true, eps: 1e-5}
)

// RMSOp is RMSNorm over the rows of an R×C matrix: out and x are
// row-major R×C, gamma has C elements.
var RMSOp = rms.op()

// LayerOp is LayerNorm over the rows of an R×C matrix: out and x are
// row-major R×C, gamma and beta have C elements each.
var LayerOp = layer.op()

func init() {
	for _, k := range []kind{rms, layer} {
		kernels.RegisterOp(k.op())
	}
	kernels.Register(RMSTemplate)
	kernels.Register(LayerTemplate)
	kernels.Register(RMSCUDATemplate)
	kernels.Register(LayerCUDATemplate)
}

func (k kind) op() kernels.Op {
	op := kernels.Op{
		Name: k.name, Dims: []string{"R", "C"}, Example: "4096x4096",
		Summary:       fmt.Sprintf("RMSNorm of each row of an R×C matrix, scaled by gamma (eps %g)", k.eps),
		API:           kernels.API{Func: "RMSNorm", Args: []string{"y", "x", "gamma"}, Dims: []string{"rows", "cols"}},
		Args:          k.args,
		Reference:     k.reference,
		EmitReference: k.emitReference,
		Tolerance:     k.tolerance,
		Inputs:        k.inputs(),
		FLOPs:         func(shape []int) float64 { return k.flopsPerElement() * elements(shape) },
		Bytes:         k.bytes,
		DTypes:        dtypes,
	}
	if k.layer {
		op.Summary = fmt.Sprintf("LayerNorm of each row of an R×C matrix, scaled by gamma and shifted by beta (eps %g)", k.eps)
		op.API = kernels.API{Func: "LayerNorm", Args: []string{"y", "x", "gamma", "beta"}, Dims: []string{"rows", "cols"}}
	}
	return op
}

// dtypes are the element types of the kernels, on the CPU and on CUDA.
var dtypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

// checkShape panics unless shape is [rows, cols] with both positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a
// bug.
func checkShape(shape []int) (rows, cols int) {
	if len(shape) != 2 || shape[0] < 1 || shape[1] < 1 {
		panic(fmt.Sprintf("norm: shape %v, want [rows cols] with both ≥ 1", shape))
	}
	return shape[0], shape[1]
}

func elements(shape []int) float64 {
	rows, cols := checkShape(shape)
	return float64(rows) * float64(cols)
}

// args are x (rows·cols), gamma (cols) and, for LayerNorm, beta (cols).
func (k kind) args(shape []int) (ins []int, out int) {
	rows, cols := checkShape(shape)
	ins = []int{rows * cols, cols}
	if k.layer {
		ins = append(ins, cols)
	}
	return ins, rows * cols
}

// flopsPerElement counts, for RMSNorm, the square and its sum, then the
// products by 1/rms and gamma; for LayerNorm the sum for the mean, x-mean,
// its square and sum, the product by 1/σ and the FMA with gamma and beta.
func (k kind) flopsPerElement() float64 {
	if k.layer {
		return 7
	}
	return 4
}

// bytes: x read and out written once, gamma (and beta) read once.
func (k kind) bytes(shape []int) float64 {
	_, cols := checkShape(shape)
	vecs := 1.0
	if k.layer {
		vecs = 2
	}
	return 4 * (2*elements(shape) + vecs*float64(cols))
}

// reference computes the op in float64 from the float32 inputs: the
// statistics of each row in two passes, then the outputs. Inputs near
// 1e18 square to 1e36, far from float64's limits.
func (k kind) reference(shape []int, ins [][]float32, out []float64) {
	rows, cols := checkShape(shape)
	x, gamma := ins[0][:rows*cols], ins[1][:cols]
	kernels.ForRows(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s, d := x[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
			mean := 0.0
			if k.layer {
				for _, v := range s {
					mean += float64(v)
				}
				mean /= float64(cols)
			}
			ss := 0.0
			for _, v := range s {
				ss += (float64(v) - mean) * (float64(v) - mean)
			}
			inv := 1 / math.Sqrt(ss/float64(cols)+k.eps)
			for i, v := range s {
				d[i] = (float64(v) - mean) * inv * float64(gamma[i])
				if k.layer {
					d[i] += float64(ins[2][i])
				}
			}
		}
	})
}

const eps32 = 0x1p-24

// tolerance grows with √cols, as the rounding error of a float32 sum of
// cols terms of one sign does. RMSNorm has no cancellation, so its bound
// is relative, abs only catching outputs flushed near float32's smallest
// normal. LayerNorm's output γ·z+β cancels where z·γ ≈ -β, so its bound
// is also absolute, scaled by |z·γ| and |β| as the input sets draw them
// (z of a few units, γ and β up to 2; the largest error measured is a tenth of it).
// An output of a dtype narrower than float32 adds its rounding.
func (k kind) tolerance(shape []int, dt dtype.DType) (rel, abs float64) {
	_, cols := checkShape(shape)
	rel = (16+2*math.Sqrt(float64(cols)))*eps32 + kernels.OutputRounding(dt)
	if k.layer {
		return rel, 2*rel + kernels.OutputRoundingAbs(dt)
	}
	return rel, 1e-37 + kernels.OutputRoundingAbs(dt)
}
