package cpu

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/harness"
)

func TestInputsDeterministic(t *testing.T) {
	tmpl := testTemplate()
	shape := []int{1000}
	a, b, c := newData(tmpl, shape, dtype.F32, 7), newData(tmpl, shape, dtype.F32, 7), newData(tmpl, shape, dtype.F32, 8)
	if !slices.Equal(a.sets[0].Ins[0], b.sets[0].Ins[0]) || !slices.Equal(a.sets[0].Want, b.sets[0].Want) {
		t.Error("the same seed gave different inputs")
	}
	if slices.Equal(a.sets[0].Ins[0], c.sets[0].Ins[0]) {
		t.Error("different seeds gave the same inputs")
	}
	neg := 0
	for i, x := range a.sets[0].Ins[0] {
		if m := math.Abs(float64(x)); m < 0.125 || m > 4 {
			t.Fatalf("input %d = %v, outside ±[0.125, 4]", i, x)
		}
		if x < 0 {
			neg++
		}
		if a.sets[0].Want[i] != 2*float64(x)+1 {
			t.Fatalf("reference %d = %v for input %v", i, a.sets[0].Want[i], x)
		}
	}
	if neg < 400 || neg > 600 {
		t.Errorf("%d of 1000 inputs are negative; want about half", neg)
	}
	if a.work.Output != 1000 || !slices.Equal(a.work.Inputs, []int{1000}) || a.work.Sets[0].Rel != 1e-6 || len(a.work.Sets) != len(a.sets) {
		t.Errorf("workload %+v", a.work)
	}
}

// The cache hands out the data of the last workload and recomputes it for
// another shape or seed.
func TestDataCache(t *testing.T) {
	var c dataCache
	tmpl := testTemplate()
	d1 := c.load(tmpl, []int{10}, dtype.F32, 1)
	if c.load(tmpl, []int{10}, dtype.F32, 1) != d1 {
		t.Error("same workload: data recomputed")
	}
	if d := c.load(tmpl, []int{11}, dtype.F32, 1); d == d1 || len(d.sets[0].Want) != 11 {
		t.Error("another shape: data not recomputed")
	}
	if d := c.load(tmpl, []int{11}, dtype.F32, 2); slices.Equal(d.sets[0].Ins[0], newData(tmpl, []int{11}, dtype.F32, 1).sets[0].Ins[0]) {
		t.Error("another seed: data not recomputed")
	}
	d2 := c.load(tmpl, []int{11}, dtype.F32, 2)
	tmpl.Inputs = kernels.DefaultInputs[:1]
	if d := c.load(tmpl, []int{11}, dtype.F32, 2); d == d2 || len(d.sets) != 1 {
		t.Error("other input sets: data not recomputed")
	}
}

// A slow reference does not hold up a cancelled measurement.
func TestDataCacheCancel(t *testing.T) {
	var c dataCache
	tmpl := testTemplate()
	release := make(chan struct{})
	reference := tmpl.Reference
	tmpl.Reference = func(shape []int, ins [][]float32, out []float64) {
		<-release
		reference(shape, ins, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if _, err := c.get(ctx, tmpl, []int{10}, dtype.F32, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("get with a cancelled context: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("get waited %v for a reference after its context was cancelled", time.Since(start))
	}
	close(release)
	if d, err := c.get(context.Background(), tmpl, []int{10}, dtype.F32, 1); err != nil || len(d.sets[0].Want) != 10 {
		t.Errorf("get after the reference finished: %v", err)
	}
}

// The files hold exactly what the harness reads back.
func TestDataWrite(t *testing.T) {
	d := newData(testTemplate(), []int{5}, dtype.F32, 3)
	dir := t.TempDir()
	if err := d.write(dir); err != nil {
		t.Fatal(err)
	}
	w, sets, err := harness.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(w.Sets, d.work.Sets) || len(sets) != len(d.sets) {
		t.Fatalf("read %+v, want %+v", w, d.work)
	}
	for s := range sets {
		if !slices.Equal(sets[s].Ins[0], d.sets[s].Ins[0]) || !slices.Equal(sets[s].Want, d.sets[s].Want) {
			t.Errorf("set %d reads back as %+v, want %+v", s, sets[s], d.sets[s])
		}
	}
}
