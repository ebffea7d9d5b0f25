package softmax

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

func TestBaselinesAreListed(t *testing.T) {
	seen := map[string]bool{"tuned": true, "floor": true} // the bench's own entries
	for _, b := range Template.Baselines {
		// A 16-bit baseline's name ends in its dtype (onednn-bf16).
		if !regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)?$`).MatchString(b.Name) || seen[b.Name] {
			t.Errorf("baseline name %q: want short, lower-case and unique", b.Name)
		}
		seen[b.Name] = true
		if b.Doc == "" || strings.Contains(b.Doc, "\n") || b.EmitGo == nil {
			t.Errorf("baseline %s: Doc %q (want one line) or no emitter", b.Name, b.Doc)
		}
	}
	if !seen["naive"] {
		t.Error("no naive baseline")
	}
	// Baselines are not the tuned code: they must not move the version
	// that keys the tuning records.
	if Template.Version != versionOf(revision, space) {
		t.Errorf("Version %s depends on more than the revision and the space", Template.Version)
	}
}

// TestNaiveBaseline builds the naive baseline for every test shape with the
// test driver and checks it against the reference on every kind of input,
// as TestKernels checks the generated kernels: a wrong baseline would make
// every ratio autotune bench prints meaningless.
func TestNaiveBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the baseline")
	}
	var naive kernels.Baseline
	for _, b := range Template.Baselines {
		if b.Name == "naive" {
			naive = b
		}
	}
	m := kerneltest.NewModule(t)
	for i, shape := range testShapes {
		name := fmt.Sprintf("B%d", i)
		naive.EmitGo(m.File(shape), name, shape)
		ins, out := Template.Args(shape)
		m.Add(kerneltest.Kernel{Name: name, Config: naive.Name, Ins: ins, Out: out})
	}
	dir, bin := m.Build()
	kerneltest.Go(t, dir, "vet", ".")

	type job struct {
		name  string
		shape []int
		kind  string
		in    []float32
	}
	var jobs []job
	var list strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for i, shape := range testShapes {
		for _, kind := range inputKinds {
			file := filepath.Join(dir, fmt.Sprintf("in_%d_%s.bin", i, kind))
			in := input(shape, kind, rng)
			kerneltest.WriteFloats(t, file, in)
			jobs = append(jobs, job{fmt.Sprintf("B%d", i), shape, kind, in})
			fmt.Fprintf(&list, "B%d %s\n", i, file)
		}
	}
	run := kerneltest.Start(t, dir, bin, list.String())
	for _, j := range jobs {
		got := make([]float32, len(j.in))
		run.Next(t, j.name, got)
		want := make([]float64, len(j.in))
		Template.Reference(j.shape, [][]float32{j.in}, want)
		rel, abs := Template.Tolerance(j.shape, dtype.F32)
		if c := kerneltest.CompareNaN(got, want, rel, abs); c.Bad > 0 {
			t.Errorf("%s on %v %s: %d of %d outputs wrong; first [%d]: got %g, want %g",
				naive.Name, j.shape, j.kind, c.Bad, len(got), c.First, got[c.First], want[c.First])
		} else {
			t.Logf("%v %s: largest error %.2f of the tolerance", j.shape, j.kind, c.Worst)
		}
	}
	run.Wait(t)
}
