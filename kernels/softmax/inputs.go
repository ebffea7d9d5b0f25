package softmax

import (
	"math"
	"math/rand/v2"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// inputs are the sets every softmax candidate is checked on: moderate
// logits; logits in the hundreds, whose exp overflows float32 (above
// 88.7) unless a kernel subtracts the row's max first; and rows with -Inf
// entries (masked logits), never all of a row, whose outputs are 0; and
// constant rows, some of them of magnitude up to 1e30, whose outputs are
// 1/cols.
//
// f16, which would store 1e30 as Inf, has its constant rows up to 6e4
// instead, and two sets of its own: logits at the top of its range,
// ±[6e4, 65504], where x-max reaches -131008 (beyond f16, so a kernel
// must subtract in float32) and every output but the row's largest is 0;
// and logits among f16's subnormals, ±[6e-8, 6e-5], whose outputs are
// near 1/cols. Last, so that the sets before it keep their streams, f32
// and bf16 have logits of which one in 23 is -84 (fillSubnormal): outputs
// among float32's subnormals, in a few lanes.
var inputs = []kernels.InputSet{
	kernels.Uniform("uniform", 0.125, 4),
	kernels.Uniform("large", 100, 400),
	{Name: "neginf", Fill: fillNegInf, EmitFill: emitFillNegInf},
	constantRows("constant", 1e20, constantBound, dtype.F32, dtype.BF16),
	constantRows("constant16", 1e4, 6e4, dtype.F16),
	f16Only(kernels.Uniform("top16", 6e4, 65504)),
	f16Only(kernels.Uniform("subnormal16", 6e-8, 6e-5)),
	{Name: "subnormal", Fill: fillSubnormal, EmitFill: emitFillSubnormal, DTypes: []dtype.DType{dtype.F32, dtype.BF16}},
}

// f16Only restricts set to f16.
func f16Only(set kernels.InputSet) kernels.InputSet {
	set.DTypes = []dtype.DType{dtype.F16}
	return set
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
