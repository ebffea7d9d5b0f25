package kerneltest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// CheckBaseline builds the baseline called name of tmpl for each shape into
// one module, runs it on every input set of tmpl's op for the baseline's
// dtype (kernels.Op.InputSetsFor: random values, never zeros; rounded to
// a 16-bit dtype), each with the output poisoned, and checks it against
// the float64 reference with the set's tolerance for that dtype: a wrong
// baseline would make every ratio autotune bench prints meaningless. It
// fails the test when tmpl has no such baseline; a shape the baseline
// skips (kernels.Baseline.Skip) is left out and logged. On the sets the
// baseline is known to be wrong on (kernels.Baseline.KnownWrong) wrong
// outputs are logged, and a set where it is right on every shape fails
// the test: the list must stay true.
func CheckBaseline(t *testing.T, tmpl *kernels.Template, name string, shapes [][]int) {
	t.Helper()
	var b *kernels.Baseline
	for i := range tmpl.Baselines {
		if tmpl.Baselines[i].Name == name {
			b = &tmpl.Baselines[i]
		}
	}
	if b == nil {
		t.Fatalf("%s has no baseline %s", tmpl.Op.Name, name)
	}
	dt := cmp.Or(b.DType, dtype.F32)
	m := NewModule(t)
	m.Require(b.Requires...)
	var run [][]int
	for _, shape := range shapes {
		if why := b.Skipped(shape); why != "" {
			t.Logf("%s skips %v: %s", name, shape, why)
			continue
		}
		k := fmt.Sprintf("B%d", len(run))
		b.EmitGo(m.File(shape), k, shape)
		ins, out := tmpl.Args(shape)
		m.Add(Kernel{Name: k, Config: name, Ins: ins, Out: out, DType: b.DType})
		run = append(run, shape)
	}
	if len(run) == 0 {
		t.Fatalf("%s skips every shape", name)
	}
	dir, bin := m.Build()
	Go(t, dir, "vet", ".")

	type job struct {
		kernel string
		shape  []int
		set    kernels.InputSet
		ins    [][]float32
	}
	var jobs []job
	var list strings.Builder
	rng := rand.New(rand.NewPCG(5, 6))
	for i, shape := range run {
		lens, _ := tmpl.Args(shape)
		for _, set := range tmpl.InputSetsFor(dt) {
			ins := make([][]float32, len(lens))
			for j, n := range lens {
				ins[j] = make([]float32, n)
			}
			set.Fill(shape, rng, ins)
			for _, in := range ins {
				for k, x := range in {
					in[k] = dt.Round(x)
				}
			}
			k := fmt.Sprintf("B%d", i)
			fmt.Fprint(&list, k)
			for j, in := range ins {
				file := filepath.Join(dir, fmt.Sprintf("in_%d_%s_%d.bin", i, set.Name, j))
				WriteFloats(t, file, in)
				fmt.Fprint(&list, " ", file)
			}
			fmt.Fprintln(&list)
			jobs = append(jobs, job{k, shape, set, ins})
		}
	}
	r := Start(t, dir, bin, list.String())
	wrong := map[string]bool{} // the known-wrong sets it was wrong on
	for _, j := range jobs {
		_, n := tmpl.Args(j.shape)
		got, want := make([]float32, n), make([]float64, n)
		r.Next(t, j.kernel, got)
		tmpl.Reference(j.shape, j.ins, want)
		rel, abs := tmpl.Tolerance(j.shape, dt)
		if j.set.Tolerance != nil {
			rel, abs = j.set.Tolerance(j.shape, dt)
		}
		c := CompareNaN(got, want, rel, abs)
		switch {
		case c.Bad > 0 && slices.Contains(b.KnownWrong, j.set.Name):
			wrong[j.set.Name] = true
			t.Logf("%s %s on %v, inputs %s, known wrong: %d of %d outputs wrong; first [%d]: got %g, want %g; largest error %.2f of the tolerance",
				tmpl.Op.Name, name, j.shape, j.set.Name, c.Bad, n, c.First, got[c.First], want[c.First], c.Worst)
		case c.Bad > 0:
			t.Errorf("%s %s on %v, inputs %s: %d of %d outputs wrong; first [%d]: got %g, want %g (rel %.2g, abs %.2g)",
				tmpl.Op.Name, name, j.shape, j.set.Name, c.Bad, n, c.First, got[c.First], want[c.First], rel, abs)
		default:
			t.Logf("%s %s on %v, inputs %s: largest error %.2f of the tolerance", tmpl.Op.Name, name, j.shape, j.set.Name, c.Worst)
		}
	}
	r.Wait(t)
	for _, set := range tmpl.InputSetsFor(dt) {
		if slices.Contains(b.KnownWrong, set.Name) && !wrong[set.Name] {
			t.Errorf("%s %s is known wrong on inputs %s, but was right on every shape", tmpl.Op.Name, name, set.Name)
		}
	}
}

// CheckHalfBaselines checks, in a subtest per 16-bit dtype, the baselines
// of tmpl named name-bf16 and name-f16 (a library's own primitives on
// 16-bit buffers, kernels.Baseline.DType) with CheckBaseline on shapes.
// Each must exist and be of its dtype; one the library lacks here (it
// skips every shape) skips its subtest with the baseline's reason.
func CheckHalfBaselines(t *testing.T, tmpl *kernels.Template, name string, shapes [][]int) {
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			full := name + "-" + string(dt)
			i := slices.IndexFunc(tmpl.Baselines, func(b kernels.Baseline) bool { return b.Name == full })
			if i < 0 || tmpl.Baselines[i].DType != dt || !tmpl.Baselines[i].For(dt) || tmpl.Baselines[i].For(dtype.F32) {
				t.Fatalf("%s has no baseline %s of dtype %s for %s workloads only", tmpl.Op.Name, full, dt, dt)
			}
			b := tmpl.Baselines[i]
			if !slices.ContainsFunc(shapes, func(s []int) bool { return b.Skipped(s) == "" }) {
				t.Skipf("%s skips every shape: %s", full, b.Skipped(shapes[0]))
			}
			CheckBaseline(t, tmpl, full, shapes)
		})
	}
}
