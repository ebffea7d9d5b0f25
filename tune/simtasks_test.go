package tune

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels/softmax"
)

// modelLandscape is a multi-workload landscape from the recorded ones: four
// softmax shapes, weighted as a model that calls them unevenly.
func modelLandscape(t *testing.T) []TaskLandscape {
	return []TaskLandscape{
		{softmax.Template, recording(t, "testdata/softmax-1024x1024.jsonl", softmax.Template, []int{1024, 1024}), 1},
		{softmax.Template, recording(t, "testdata/softmax-512x2048.jsonl", softmax.Template, []int{512, 2048}), 4},
		{softmax.Template, recording(t, "testdata/softmax-8192x128-epyc.jsonl", softmax.Template, []int{8192, 128}), 2},
		{softmax.Template, recording(t, "testdata/softmax-64x16384-epyc.jsonl", softmax.Template, []int{64, 16384}), 1},
	}
}

// TestSimulateTasks replays the multi-workload landscape with both
// schedulers and the same seeds: the budget is respected, the weighted
// total never rises, and the figures of docs/benchmarks.md are logged.
func TestSimulateTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("replays four landscapes")
	}
	ls := modelLandscape(t)
	const budget, batch, seeds = 160, 8, 3
	at := []int{64, 96, 128, 160}
	var table strings.Builder
	for _, sched := range []string{"gradient", "round-robin"} {
		sums := make([]float64, len(at))
		for seed := uint64(1); seed <= seeds; seed++ {
			run, err := SimulateTasks(context.Background(), ls, sched, Search{Strategy: "evolutionary", Model: "gbt"}, seed, budget, batch)
			if err != nil {
				t.Fatal(err)
			}
			last := run.Trials[len(run.Trials)-1]
			if last != budget {
				t.Errorf("%s seed %d spent %d trials, want %d", sched, seed, last, budget)
			}
			for i := 1; i < len(run.Totals); i++ {
				if run.Totals[i] > run.Totals[i-1] {
					t.Errorf("%s seed %d: the weighted total rose from %v to %v", sched, seed, run.Totals[i-1], run.Totals[i])
				}
			}
			for i, n := range at {
				sums[i] += run.TotalAt(n) / seeds
			}
			t.Logf("%s seed %d: batches %v", sched, seed, run.Batches)
		}
		fmt.Fprintf(&table, "| %s |", sched)
		for _, s := range sums {
			fmt.Fprintf(&table, " %.1f µs |", s/1e3)
		}
		table.WriteString("\n")
	}
	t.Logf("mean weighted total over seeds 1..%d, batch %d, after %v trials:\n%s", seeds, batch, at, table.String())
}

func TestTaskSimRunFigures(t *testing.T) {
	r := TaskSimRun{Trials: []int{24, 32, 40, 48}, Totals: []float64{900, 700, 700, 500}}
	for _, tc := range []struct {
		x    float64
		want int
	}{{1000, 24}, {700, 32}, {600, 48}, {499, 0}} {
		if got := r.TrialsTo(tc.x); got != tc.want {
			t.Errorf("TrialsTo(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
	if r.TotalAt(20) != 0 || r.TotalAt(39) != 700 || r.Final() != 500 {
		t.Errorf("TotalAt(20) %v, TotalAt(39) %v, Final %v; want 0, 700, 500", r.TotalAt(20), r.TotalAt(39), r.Final())
	}
	runs := []TaskSimRun{{Seed: 1}, {Seed: 2}, {Seed: 3}, {Seed: 4}, {Seed: 5}}
	got := spread(runs, func(r TaskSimRun) float64 { return float64(r.Seed * 10) })
	if got != (Spread{20, 30, 40}) {
		t.Errorf("spread of 10..50 = %+v, want {20 30 40}", got)
	}
	got = spread(runs, func(r TaskSimRun) float64 {
		if r.Seed >= 4 {
			return math.Inf(1)
		}
		return float64(r.Seed)
	})
	if got.P25 != 2 || got.Median != 3 || !math.IsInf(got.P75, 1) {
		t.Errorf("spread of 1, 2, 3, ∞, ∞ = %+v, want {2 3 +Inf}", got)
	}
	if got := spread(runs, func(r TaskSimRun) float64 { return math.NaN() }); !math.IsNaN(got.Median) {
		t.Errorf("spread of NaN = %+v, want NaN", got)
	}
}
