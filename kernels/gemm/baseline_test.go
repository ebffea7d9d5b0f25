package gemm

import (
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune"

	// The gonum baseline's code imports blas32 in autotune bench's module,
	// which requires gonum at the version of autotune's go.mod; importing
	// it here keeps it there (go mod tidy) and in go mod download's list.
	_ "gonum.org/v1/gonum/blas/blas32"
)

// The baselines are naive and gonum, then openblas, libxsmm and onednn's
// in builds with their tags (their _test.go files test them); gonum's module is one
// autotune's go.mod requires, and its emitted code calls blas32.Gemm.
// TestKernels checks every baseline against the reference on every test
// shape.
func TestBaselines(t *testing.T) {
	var names []string
	for _, b := range Template.Baselines {
		names = append(names, b.Name)
	}
	want := []string{"naive", "gonum"}
	for _, b := range slices.Concat(openblasBaselines, libxsmmBaselines, onednnBaselines(noEpilogue)) {
		want = append(want, b.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("baselines %v, want %v", names, want)
	}
	gonum := Template.Baselines[1]
	if !slices.Equal(gonum.Requires, []string{"gonum.org/v1/gonum"}) || gonum.Cgo {
		t.Errorf("gonum requires %v (cgo %v), want gonum.org/v1/gonum without cgo", gonum.Requires, gonum.Cgo)
	}
	req, sum, err := autotune.Require(gonum.Requires...)
	if err != nil || !strings.Contains(req, "gonum.org/v1/gonum v") || strings.Count(sum, "\n") != 2 {
		t.Errorf("autotune.Require(gonum) = %q, %q, %v", req, sum, err)
	}
	f := jen.NewFile("p")
	gonum.EmitGo(f, "Kernel", []int{3, 5, 7})
	src := f.GoString()
	packed := strings.Join(strings.Fields(src), "")
	for _, want := range []string{`"gonum.org/v1/gonum/blas/blas32"`, "blas32.Gemm(blas.NoTrans,blas.NoTrans,1,",
		"Cols:7,Data:a,Rows:3,Stride:7", "Cols:5,Data:b,Rows:7,Stride:5", "},0,blas32.General{Cols:5,Data:c,Rows:3,Stride:5"} {
		if !strings.Contains(packed, strings.Join(strings.Fields(want), "")) {
			t.Errorf("gonum baseline lacks %q:\n%s", want, src)
		}
	}
}

// The naive baseline is skipped above 2e10 FLOPs, and only there.
func TestNaiveSkip(t *testing.T) {
	naive := Template.Baselines[0]
	for _, tt := range []struct {
		shape []int
		skip  bool
	}{
		{[]int{1, 1, 1}, false},
		{[]int{1024, 1024, 1024}, false},
		{[]int{2048, 2048, 2048}, false}, // 1.7e10
		{[]int{2048, 2048, 4096}, true},
		{[]int{4096, 4096, 4096}, true},
	} {
		if got := naive.Skipped(tt.shape); (got != "") != tt.skip {
			t.Errorf("naive skipped for %v: %q, want skip %v", tt.shape, got, tt.skip)
		}
	}
	if got := Template.Baselines[1].Skipped([]int{4096, 4096, 4096}); got != "" {
		t.Errorf("gonum skipped for 4096³: %q", got)
	}
}
