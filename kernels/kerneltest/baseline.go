package kerneltest

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// CheckBaseline builds the baseline called name of tmpl for each shape into
// one module, runs it on every input set of tmpl's op (kernels.Op.InputSets:
// random values, never zeros), each with the output poisoned, and checks
// it against the float64 reference with the set's tolerance: a wrong
// baseline would make every ratio autotune bench prints meaningless. It
// fails the test when tmpl has no such baseline; a shape the baseline
// skips (kernels.Baseline.Skip) is left out and logged.
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
		m.Add(Kernel{Name: k, Config: name, Ins: ins, Out: out})
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
		for _, set := range tmpl.InputSetsFor(dtype.F32) { // baselines are float32
			ins := make([][]float32, len(lens))
			for j, n := range lens {
				ins[j] = make([]float32, n)
			}
			set.Fill(shape, rng, ins)
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
	for _, j := range jobs {
		_, n := tmpl.Args(j.shape)
		got, want := make([]float32, n), make([]float64, n)
		r.Next(t, j.kernel, got)
		tmpl.Reference(j.shape, j.ins, want)
		rel, abs := tmpl.Tolerance(j.shape, dtype.F32)
		if j.set.Tolerance != nil {
			rel, abs = j.set.Tolerance(j.shape, dtype.F32)
		}
		if c := CompareNaN(got, want, rel, abs); c.Bad > 0 {
			t.Errorf("%s %s on %v, inputs %s: %d of %d outputs wrong; first [%d]: got %g, want %g (rel %.2g, abs %.2g)",
				tmpl.Op.Name, name, j.shape, j.set.Name, c.Bad, n, c.First, got[c.First], want[c.First], rel, abs)
		} else {
			t.Logf("%s %s on %v, inputs %s: largest error %.2f of the tolerance", tmpl.Op.Name, name, j.shape, j.set.Name, c.Worst)
		}
	}
	r.Wait(t)
}
