package measure

import (
	"context"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// NewData returns the first of op's input sets for shape and dtype dt
// (Inputs), the one kernels are timed on, and its float64 reference output,
// or ctx's error when ctx is done first (InputsContext).
func NewData(ctx context.Context, op kernels.Op, shape []int, dt dtype.DType, seed uint64) (ins [][]float32, want []float64, err error) {
	sets, err := InputsContext(ctx, op, shape, dt, seed)
	if err != nil {
		return nil, nil, err
	}
	return sets[0].Ins, sets[0].Want, nil
}
