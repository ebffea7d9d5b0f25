package tune

import (
	"context"
	"fmt"
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
