package softmax

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// Op is row-wise softmax: for a shape [rows, cols], the output and the input
// are row-major rows×cols matrices and each row of the output is the softmax
// of the same row of the input.
var Op = kernels.Op{
	Name: "softmax", Dims: []string{"R", "C"}, Example: "4096x1024",
	Summary:       "row-wise softmax over the last axis of an R×C matrix",
	DTypes:        []dtype.DType{dtype.F32, dtype.BF16, dtype.F16},
	Args:          args,
	Reference:     reference,
	EmitReference: emitReference,
	API:           kernels.API{Func: "Softmax", Args: []string{"dst", "src"}, Dims: []string{"rows", "cols"}},
	Tolerance:     tolerance,
	Inputs:        inputs,
	FLOPs:         func(shape []int) float64 { return flopsPerElement * elements(shape) },
	Bytes:         func(shape []int) float64 { return 2 * 4 * elements(shape) },
}

func init() {
	kernels.RegisterOp(Op)
	kernels.Register(Template)
	kernels.Register(CUDATemplate)
}

// flopsPerElement counts max, subtract, exp (as one), add to the sum and
// multiply by 1/sum.
const flopsPerElement = 5

// checkShape panics unless shape is [rows, cols] with both positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a bug.
func checkShape(shape []int) (rows, cols int) {
	if len(shape) != 2 || shape[0] < 1 || shape[1] < 1 {
		panic(fmt.Sprintf("softmax: shape %v, want [rows cols] with both ≥ 1", shape))
	}
	return shape[0], shape[1]
}

func elements(shape []int) float64 {
	rows, cols := checkShape(shape)
	return float64(rows) * float64(cols)
}

func args(shape []int) (ins []int, out int) {
	rows, cols := checkShape(shape)
	return []int{rows * cols}, rows * cols
}

// reference computes softmax in float64, subtracting the row maximum first.
// A row that is all -Inf has maximum -Inf, -Inf-(-Inf) is NaN, and so every
// output of that row is NaN; the generated kernels give NaN there too.
func reference(shape []int, ins [][]float32, out []float64) {
	rows, cols := checkShape(shape)
	src := ins[0][:rows*cols]
	out = out[:rows*cols]
	kernels.ForRows(rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s, d := src[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
			m := math.Inf(-1)
			for _, x := range s {
				m = max(m, float64(x))
			}
			sum := 0.0
			for i, x := range s {
				d[i] = math.Exp(float64(x) - m)
				sum += d[i]
			}
			for i := range d {
				d[i] /= sum
			}
		}
	})
}

// Error budget of the tolerance, relative to each output (see the package
// doc): the subtraction x-max rounds in float32 with an error of up to
// 2^-24·|x-max|, and exp turns that into a relative error; above 88 the
// output is below abs anyway. The worst exp variant (poly4) is off by 2.7e-6
// in each term and in the sum. The float32 sum of cols terms adds an error
// that grows like √cols for terms of one sign.
const (
	eps32       = 0x1p-24
	argError    = 88 * eps32 // 5.2e-6
	expError    = 2 * 2.7e-6 // each term and the sum
	roundingErr = 4 * eps32  // the reciprocal, the product, slack
	absTol      = 1e-37      // outputs of e^-88 and below are flushed to 0
	// expError16 is expError of 16-bit outputs, whose searches offer the
	// degree-3 exp (poly3): 7.6e-5 (codegen/goasm's TestExpDegree3).
	expError16 = 2 * 7.6e-5
)

// tolerance is rel = argError + expError + roundingErr + 2^-24·√cols·4 and abs
// = 1e-37, about 1.5e-5 for 1023 columns and 4e-5 for 100000; a 16-bit
// output adds its rounding, relative and, below its normal range, absolute,
// and takes expError16 for expError.
func tolerance(shape []int, dt dtype.DType) (rel, abs float64) {
	_, cols := checkShape(shape)
	rel = argError + expError + roundingErr + 4*eps32*math.Sqrt(float64(cols)) + kernels.OutputRounding(dt)
	if dt.Size() == 2 {
		rel += expError16 - expError
	}
	return rel, absTol + kernels.OutputRoundingAbs(dt)
}
