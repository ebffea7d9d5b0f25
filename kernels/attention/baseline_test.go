package attention

import (
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune"
	"github.com/autotune-dev/autotune/kernels"

	// The gonum baseline's code imports blas32 in autotune bench's module,
	// which requires gonum at the version of autotune's go.mod; importing
	// it here keeps it there (go mod tidy) and in go mod download's list.
	_ "gonum.org/v1/gonum/blas/blas32"
)

// Both templates have the baselines naive and gonum first (then those of
// the openblas and onednn tags); gonum's module is one
// autotune's go.mod requires, and its emitted code calls blas32.Gemm twice
// per head, K transposed by the first. TestKernels checks every baseline
// against the reference on every test shape.
func TestBaselines(t *testing.T) {
	for _, tm := range []*kernels.Template{&Template, &TemplateCausal} {
		var names []string
		for _, b := range tm.Baselines {
			names = append(names, b.Name)
		}
		if len(names) < 2 || !slices.Equal(names[:2], []string{"naive", "gonum"}) {
			t.Fatalf("%s: baselines %v, want naive, gonum", tm.Op.Name, names)
		}
		if b := tm.Baselines[0]; b.Requires != nil || b.Cgo {
			t.Errorf("%s naive requires %v (cgo %v), want nothing", tm.Op.Name, b.Requires, b.Cgo)
		}
		gonum := tm.Baselines[1]
		if !slices.Equal(gonum.Requires, []string{"gonum.org/v1/gonum"}) || gonum.Cgo {
			t.Errorf("%s gonum requires %v (cgo %v), want gonum.org/v1/gonum without cgo", tm.Op.Name, gonum.Requires, gonum.Cgo)
		}
		req, sum, err := autotune.Require(gonum.Requires...)
		if err != nil || !strings.Contains(req, "gonum.org/v1/gonum v") || strings.Count(sum, "\n") != 2 {
			t.Errorf("autotune.Require(gonum) = %q, %q, %v", req, sum, err)
		}
		f := jen.NewFile("p")
		gonum.EmitGo(f, "Kernel", []int{2, 3, 7, 5})
		src := f.GoString()
		packed := strings.Join(strings.Fields(src), "")
		wants := []string{
			`"gonum.org/v1/gonum/blas/blas32"`,
			"KernelAttention(out, q, k, v, 2, 3, 7, 5)",
			"scores := make([]float32, s*s)",
			"blas32.Gemm(blas.NoTrans, blas.Trans, scale, blas32.General{Cols: d, Data: span(q), Rows: s, Stride: d,}, " +
				"blas32.General{Cols: d, Data: span(k), Rows: s, Stride: d,}, 0, blas32.General{Cols: s, Data: scores, Rows: s, Stride: s,})",
			"math.Exp(float64(x - m))",
			"blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, blas32.General{Cols: s, Data: scores, Rows: s, Stride: s,}, " +
				"blas32.General{Cols: d, Data: span(v), Rows: s, Stride: d,}, 0, blas32.General{Cols: d, Data: span(out), Rows: s, Stride: d,})",
		}
		if tm == &TemplateCausal {
			wants = append(wants, "clear(row[i+1:])", "row = row[:i+1]")
		} else if strings.Contains(src, "clear(row") {
			t.Errorf("non-causal gonum baseline masks:\n%s", src)
		}
		for _, want := range wants {
			if !strings.Contains(packed, strings.Join(strings.Fields(want), "")) {
				t.Errorf("%s gonum baseline lacks %q:\n%s", tm.Op.Name, want, src)
			}
		}
	}
}

// The naive baseline is left out above 2e10 FLOPs of its own work (half as
// much with the mask) and both are left out where the S×S scores take
// more than 1 GiB.
func TestBaselineSkip(t *testing.T) {
	for _, tt := range []struct {
		shape                []int
		naive, causal, gonum bool // skipped
	}{
		{[]int{1, 1, 1, 1}, false, false, false},
		{[]int{1, 8, 1024, 64}, false, false, false}, // 2.1e9
		{[]int{1, 8, 4096, 64}, true, false, false},  // 3.4e10, causal 1.7e10
		{[]int{1, 16, 4096, 64}, true, true, false},  // 6.9e10, causal 3.4e10
		{[]int{1, 1, 16384, 1}, false, false, false}, // 1 GiB of scores
		{[]int{1, 1, 16385, 1}, true, true, true},    // just over
		{[]int{1, 1, 32768, 64}, true, true, true},
	} {
		for _, c := range []struct {
			name string
			b    kernels.Baseline
			skip bool
		}{
			{"naive", Template.Baselines[0], tt.naive},
			{"causal naive", TemplateCausal.Baselines[0], tt.causal},
			{"gonum", Template.Baselines[1], tt.gonum},
			{"causal gonum", TemplateCausal.Baselines[1], tt.gonum},
		} {
			if got := c.b.Skipped(tt.shape); (got != "") != c.skip {
				t.Errorf("%s skipped for %v: %q, want skip %v", c.name, tt.shape, got, c.skip)
			}
		}
	}
}
