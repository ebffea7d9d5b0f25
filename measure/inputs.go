package measure

import (
	"math/rand/v2"
	"slices"

	"github.com/autotune-dev/autotune/kernels"
)

// An InputSet is one set of a workload's inputs, in argument order, with
// the reference output the template computes from them in float64.
type InputSet struct {
	Name string
	Ins  [][]float32
	Want []float64
}

// Inputs are drawn uniformly from ±[InputMin, InputMax]. Zeros are excluded
// because they hide bugs: a kernel that skips an element of a sum, or
// multiplies by the wrong operand, still gets the right answer when the
// operand is zero. The range keeps exp, products and sums of typical
// kernels far from overflow.
const (
	InputMin = 0.125
	InputMax = 4.0
)

// Inputs returns the input sets every backend checks t's kernels for shape
// on, drawn from a PCG seeded with seed, each with its reference: the
// same seed gives the same sets.
func Inputs(t kernels.Template, shape []int, seed uint64) []InputSet {
	sizes, outLen := t.Args(slices.Clone(shape))
	r := rand.New(rand.NewPCG(seed, 0))
	set := InputSet{Name: "uniform", Ins: make([][]float32, len(sizes)), Want: make([]float64, outLen)}
	for i, n := range sizes {
		set.Ins[i] = make([]float32, n)
		for j := range set.Ins[i] {
			v := float32(InputMin + (InputMax-InputMin)*r.Float64())
			if r.IntN(2) == 0 {
				v = -v
			}
			set.Ins[i][j] = v
		}
	}
	t.Reference(slices.Clone(shape), set.Ins, set.Want)
	return []InputSet{set}
}
