package measure

import (
	"math/rand/v2"
	"slices"

	"github.com/autotune-dev/autotune/kernels"
)

// Inputs are drawn uniformly from ±[InputMin, InputMax]. Zeros are excluded
// because they hide bugs: a kernel that skips an element of a sum, or
// multiplies by the wrong operand, still gets the right answer when the
// operand is zero. The range keeps exp, products and sums of typical kernels
// far from overflow.
const (
	InputMin = 0.125
	InputMax = 4.0
)

// RandomInputs returns n values drawn from r as described at InputMin.
func RandomInputs(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		v := float32(InputMin + (InputMax-InputMin)*r.Float64())
		if r.IntN(2) == 0 {
			v = -v
		}
		x[i] = v
	}
	return x
}

// NewData fills the inputs of op for shape from a PCG seeded with seed, in
// the order of op.Args, and computes the float64 reference output. Every
// backend draws its inputs here, so one seed means the same data on each.
func NewData(op kernels.Op, shape []int, seed uint64) (ins [][]float32, want []float64) {
	sizes, outLen := op.Args(shape)
	r := rand.New(rand.NewPCG(seed, 0))
	ins = make([][]float32, len(sizes))
	for i, n := range sizes {
		ins[i] = RandomInputs(r, n)
	}
	want = make([]float64, outLen)
	op.Reference(slices.Clone(shape), ins, want)
	return ins, want
}
