//go:build openblas

package gemm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// With the openblas tag, Template has a third baseline, openblas: cgo, in
// the modules netlib and gonum (at autotune's versions), its code linking
// libopenblas by its own cgo directive and calling Sgemm on the matrices
// as they are.
func TestOpenBLASBaseline(t *testing.T) {
	b := Template.Baselines[2]
	if b.Name != "openblas" || !b.Cgo || !slices.Equal(b.Requires, []string{"gonum.org/v1/netlib", "gonum.org/v1/gonum"}) {
		t.Fatalf("third baseline %s, cgo %v, requires %v; want openblas, cgo, netlib and gonum", b.Name, b.Cgo, b.Requires)
	}
	req, sum, err := autotune.Require(b.Requires...)
	if err != nil || !strings.Contains(req, "gonum.org/v1/netlib v") || strings.Count(sum, "\n") != 4 {
		t.Errorf("autotune.Require(%v) = %q, %q, %v", b.Requires, req, sum, err)
	}
	if why := b.Skipped([]int{4096, 4096, 4096}); why != "" {
		t.Errorf("openblas skipped for 4096³: %s", why)
	}
	f := jen.NewFile("p")
	b.EmitGo(f, "Kernel", []int{3, 5, 7})
	src := f.GoString()
	for _, want := range []string{"#cgo LDFLAGS: -lopenblas", `import "C"`, `"gonum.org/v1/netlib/blas/netlib"`,
		"netlib.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, 3, 5, 7, 1, a, 7, b, 5, 0, c, 5)"} {
		if !strings.Contains(src, want) {
			t.Errorf("openblas baseline lacks %q:\n%s", want, src)
		}
	}
}

// TestOpenBLAS checks the openblas baselines of Template and of the
// epilogue templates against the reference on every test shape, as
// TestKernels does with the tag, without the grid of tuned configs.
func TestOpenBLAS(t *testing.T) {
	var ks []genKernel
	for _, shape := range testShapes {
		for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
			for i, b := range tmpl.Baselines {
				if b.Name == "openblas" {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, base: &tmpl.Baselines[i]})
				}
			}
		}
	}
	if len(ks) != len(testShapes)*(1+len(epilogueTemplates)) {
		t.Fatalf("%d openblas kernels, want one per template and shape", len(ks))
	}
	checkKernels(t, ks)
}

// OPENBLAS_CORETYPE gets a note when set, one that says it halves OpenBLAS
// when it names a core without AVX-512 on a CPU with it.
func TestOpenBLASNote(t *testing.T) {
	avx512 := device.Target{Name: "cpu", CPU: &device.CPU{ISA: device.ISA{AVX2: true, FMA: true, AVX512: true}}}
	avx2 := device.Target{Name: "cpu", CPU: &device.CPU{ISA: device.ISA{AVX2: true, FMA: true}}}
	for _, tt := range []struct {
		coreType string
		host     device.Target
		note     bool
		half     bool
	}{
		{"", avx512, false, false},
		{"Haswell", avx512, true, true},
		{"Zen", avx512, true, true},
		{"SkylakeX", avx512, true, false},
		{"COOPERLAKE", avx512, true, false},
		{"Haswell", avx2, true, false},
	} {
		got := openblasNote(tt.coreType, tt.host)
		if (got != "") != tt.note || strings.Contains(got, "half") != tt.half || tt.note && !strings.Contains(got, "OPENBLAS_CORETYPE="+tt.coreType) {
			t.Errorf("openblasNote(%q, AVX-512 %v) = %q; want a note %v, saying half %v", tt.coreType, tt.host.CPU.ISA.AVX512, got, tt.note, tt.half)
		}
	}
	if b := Template.Baselines[2]; b.Note == nil {
		t.Error("the openblas baseline has no Note")
	}
}
