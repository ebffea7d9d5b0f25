package measure_test

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
)

// Every template's input sets, on small shapes: at least two, one of them
// large; the same for the same seed; no zero inputs; and a reference that
// defines every output (no NaN: a row of softmax is never all -Inf).
func TestInputs(t *testing.T) {
	affine := kernels.Template{Op: kernels.Op{Name: "affine",
		Args:      func(shape []int) ([]int, int) { return []int{shape[0]}, shape[0] },
		Reference: func(shape []int, ins [][]float32, out []float64) { out[0] = float64(ins[0][0]) },
		Tolerance: func([]int, dtype.DType) (float64, float64) { return 1e-6, 0 },
	}}
	tests := []struct {
		tmpl  kernels.Template
		shape []int
		sets  []string
		large float64 // the least magnitude the large set must reach; attention's are large scores, not inputs
	}{
		{affine, []int{1000}, []string{"uniform", "large"}, 1000},
		{softmax.Template, []int{64, 17}, []string{"uniform", "large", "neginf", "constant", "subnormal"}, 300},
		{gemm.Template, []int{9, 7, 33}, []string{"uniform", "large"}, 1000},
		{gemm.BiasReLUTemplate, []int{9, 7, 33}, []string{"uniform", "large"}, 1000},
		{attention.Template, []int{1, 2, 33, 8}, []string{"uniform", "large"}, 0},
		{attention.TemplateCausal, []int{1, 2, 33, 8}, []string{"uniform", "large"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl.Op.Name, func(t *testing.T) {
			a, b, c := measure.Inputs(tt.tmpl.Op, tt.shape, dtype.F32, 1), measure.Inputs(tt.tmpl.Op, tt.shape, dtype.F32, 1), measure.Inputs(tt.tmpl.Op, tt.shape, dtype.F32, 2)
			var names []string
			for i, s := range a {
				names = append(names, s.Name)
				if !slices.EqualFunc(s.Ins, b[i].Ins, slices.Equal) || slices.EqualFunc(s.Ins, c[i].Ins, slices.Equal) {
					t.Errorf("%s: the same seed gave other inputs, or another seed the same", s.Name)
				}
				if i > 0 && slices.EqualFunc(s.Ins, a[0].Ins, slices.Equal) {
					t.Errorf("%s: the same inputs as %s", s.Name, a[0].Name)
				}
				if !(s.Rel > 0) && !(s.Abs > 0) {
					t.Errorf("%s: no tolerance", s.Name)
				}
				largest, negInf := 0.0, 0
				for j, in := range s.Ins {
					for k, x := range in {
						if x == 0 || math.IsNaN(float64(x)) {
							t.Fatalf("%s: in%d[%d] = %g", s.Name, j, k, x)
						}
						if math.IsInf(float64(x), -1) {
							negInf++
						} else {
							largest = max(largest, math.Abs(float64(x)))
						}
					}
				}
				// "constant" (softmax's constant rows, of magnitude up to 1e30)
				// tests that a kernel subtracts the row maximum, softmax's
				// "subnormal" (logits of -84 among the uniform ones) that it
				// keeps subnormal outputs.
				if s.Name == "large" && largest < tt.large || s.Name != "large" && s.Name != "constant" && largest > 4 && !(s.Name == "subnormal" && largest == 84) {
					t.Errorf("%s: the largest input is %g", s.Name, largest)
				}
				if (negInf > 0) != (s.Name == "neginf") {
					t.Errorf("%s: %d inputs are -Inf", s.Name, negInf)
				}
				for k, w := range s.Want {
					if math.IsNaN(w) {
						t.Fatalf("%s: the reference leaves out[%d] undefined (NaN)", s.Name, k)
					}
				}
			}
			if !slices.Equal(names, tt.sets) {
				t.Errorf("sets %v, want %v", names, tt.sets)
			}
		})
	}
}
