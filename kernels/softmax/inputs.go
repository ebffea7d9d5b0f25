package softmax

import (
	"math"
	"math/rand/v2"

	"github.com/autotune-dev/autotune/kernels"
)

// inputs are the sets every softmax candidate is checked on: moderate
// logits; logits in the hundreds, whose exp overflows float32 (above
// 88.7) unless a kernel subtracts the row's max first; and rows with -Inf
// entries (masked logits), never all of a row, whose outputs are 0; and
// constant rows, some of them of magnitude up to 1e30, whose outputs are
// 1/cols.
var inputs = []kernels.InputSet{
	kernels.Uniform("uniform", 0.125, 4),
	kernels.Uniform("large", 100, 400),
	{Name: "neginf", Fill: fillNegInf, EmitFill: emitFillNegInf},
	{Name: "constant", Fill: fillConstant, EmitFill: emitFillConstant},
}

// fillNegInf draws logits from ±[0.125, 4] and makes a quarter of them
// -Inf, but never a whole row: a row of -Inf has no softmax.
func fillNegInf(shape []int, r *rand.Rand, ins [][]float32) {
	rows, cols := checkShape(shape)
	x := ins[0]
	for row := range rows {
		keep := r.IntN(cols)
		for c := range cols {
			x[row*cols+c] = kernels.SignedUniform(r, 0.125, 4)
			if c != keep && r.IntN(4) == 0 {
				x[row*cols+c] = float32(math.Inf(-1))
			}
		}
	}
}
