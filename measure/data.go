package measure

import (
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// NewData returns the first of op's input sets for shape and dtype dt
// (Inputs), the one kernels are timed on, and its float64 reference output.
func NewData(op kernels.Op, shape []int, dt dtype.DType, seed uint64) (ins [][]float32, want []float64) {
	first := Inputs(op, shape, dt, seed)[0]
	return first.Ins, first.Want
}
