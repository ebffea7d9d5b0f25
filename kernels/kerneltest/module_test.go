package kerneltest

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// The driver runs kernels of any number of inputs from the generated
// table on the files a job names, with the output poisoned, and refuses a
// kernel that writes to its inputs; its bench times every kernel.
func TestDriver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	m := NewModule(t)
	shape := []int{5}
	f := m.File(shape)
	// Affine writes out = 2·in + 1 but leaves the last element, so the
	// poison must show there; Add adds two inputs; Clobber writes its input.
	f.Func().Id("Affine").Params(jen.List(jen.Id("out"), jen.Id("in")).Index().Float32()).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("out").Index(jen.Op(":").Len(jen.Id("out")).Op("-").Lit(1))).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Lit(2).Op("*").Id("in").Index(jen.Id("i")).Op("+").Lit(1)))
	f.Func().Id("Add").Params(jen.List(jen.Id("out"), jen.Id("a"), jen.Id("b")).Index().Float32()).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Id("a").Index(jen.Id("i")).Op("+").Id("b").Index(jen.Id("i"))))
	f.Func().Id("Clobber").Params(jen.List(jen.Id("out"), jen.Id("in")).Index().Float32()).Block(
		jen.Id("in").Index(jen.Lit(0)).Op("=").Lit(0))
	m.Add(Kernel{Name: "Affine", Config: "affine", Ins: []int{5}, Out: 5, FLOPs: 10})
	m.Add(Kernel{Name: "Add", Config: "add", Ins: []int{5, 5}, Out: 5})
	m.Add(Kernel{Name: "Clobber", Config: "clobber", Ins: []int{5}, Out: 5})
	dir, bin := m.Build()
	Go(t, dir, "vet", ".")

	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	WriteFloats(t, a, []float32{1, 2, 3, 4, 5})
	WriteFloats(t, b, []float32{10, 20, 30, 40, 50})
	run := Start(t, dir, bin, "Affine "+a+"\nAdd "+a+" "+b+"\n")
	got := make([]float32, 5)
	run.Next(t, "Affine", got)
	if got[0] != 3 || got[3] != 9 || !math.IsNaN(float64(got[4])) {
		t.Errorf("Affine: %v, want 3 5 7 9 NaN", got)
	}
	run.Next(t, "Add", got)
	if got[0] != 11 || got[4] != 55 {
		t.Errorf("Add: %v", got)
	}
	run.Wait(t)

	for _, tt := range []struct{ jobs, err string }{
		{"Clobber " + a + "\n", "Clobber (clobber) wrote to input 0"},
		{"Add " + a + "\n", "Add takes 2 inputs"},
		{"Nope " + a + "\n", `no kernel "Nope"`},
	} {
		jobs := filepath.Join(dir, "bad-jobs")
		if err := os.WriteFile(jobs, []byte(tt.jobs), 0o666); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "run", jobs).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.err) {
			t.Errorf("jobs %q: %v, %s; want an error %q", tt.jobs, err, out, tt.err)
		}
	}

	out, err := exec.Command(bin, "bench", "3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GFLOP/s") || strings.Count(string(out), "\n") != 4 {
		t.Errorf("bench: %v\n%s", err, out)
	}
}
