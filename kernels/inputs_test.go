package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Uniform draws from ±[lo, hi], both signs, never zero; an op without
// input sets gets DefaultInputs, one with them its own.
func TestUniformAndInputSets(t *testing.T) {
	ins := [][]float32{make([]float32, 1000), make([]float32, 7)}
	Uniform("u", 2, 3).Fill(nil, rand.New(rand.NewPCG(1, 2)), ins)
	neg := 0
	for _, in := range ins {
		for _, x := range in {
			if m := math.Abs(float64(x)); m < 2 || m > 3 {
				t.Fatalf("%g outside ±[2, 3]", x)
			}
			if x < 0 {
				neg++
			}
		}
	}
	if neg < 400 || neg > 607 {
		t.Errorf("%d of 1007 negative", neg)
	}
	var op Op
	if sets := op.InputSets(); len(sets) != 2 || sets[0].Name != "uniform" || sets[1].Name != "large" {
		t.Errorf("default sets %v", sets)
	}
	op.Inputs = []InputSet{Uniform("only", 1, 2)}
	if sets := op.InputSets(); len(sets) != 1 || sets[0].Name != "only" {
		t.Errorf("declared sets %v", sets)
	}
}
