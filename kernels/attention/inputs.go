package attention

import (
	"math/rand/v2"

	"github.com/autotune-dev/autotune/kernels"
)

// inputs are the sets every attention candidate is checked on: q, k and v
// from ±[0.125, 4]; and large scores: q from [2, 4] and each row of k of
// one sign, so that scores reach ±16·√D and differ by far more than 88
// between keys of opposite signs, which a softmax that does not subtract
// the running max overflows. Attention has no input that masks a score,
// so no set has -Inf rows; the causal mask is the template's own.
var inputs = []kernels.InputSet{
	kernels.Uniform("uniform", 0.125, inputBound),
	{Name: "large", Fill: fillLarge, EmitFill: emitFillLarge},
}

// fillLarge draws the large set (see inputs); its bounds are those the
// tolerance assumes.
func fillLarge(shape []int, r *rand.Rand, ins [][]float32) {
	_, _, _, d := checkShape(shape)
	q, k, v := ins[0], ins[1], ins[2]
	var rowSign float32
	for i := range q {
		if i%d == 0 {
			rowSign = kernels.SignedUniform(r, 1, 1)
		}
		q[i] = float32(2 + 2*r.Float64())
		k[i] = rowSign * float32(0.125+(inputBound-0.125)*r.Float64())
		v[i] = kernels.SignedUniform(r, 0.125, inputBound)
	}
}
