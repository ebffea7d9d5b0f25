package lab

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tasks"
)

// bertReplay is the multi-workload landscape of
// testdata/tasks/bert-base-128-replay.json: recorded landscapes standing
// for the workloads of a BERT-base layer, with their weights (see
// testdata/README.md).
func bertReplay(t *testing.T) []TaskLandscape {
	f, err := os.Open("testdata/tasks/bert-base-128-replay.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	specs, err := tasks.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var ls []TaskLandscape
	for _, s := range specs {
		tmpl, ok := kernels.TemplateFor(s.Op, kernels.CPU)
		if !ok {
			t.Fatalf("no CPU template for %s", s.Op)
		}
		shape, err := tmpl.Op.ParseShape(s.Shape)
		if err != nil {
			t.Fatal(err)
		}
		file := fmt.Sprintf("testdata/tasks/%s-%s-epyc.jsonl", s.Op, s.Shape)
		if _, err := os.Stat(file); err != nil {
			file = fmt.Sprintf("testdata/%s-%s-epyc.jsonl", s.Op, s.Shape)
		}
		ls = append(ls, TaskLandscape{tmpl, recording(t, file, tmpl, shape), s.Weight})
	}
	return ls
}

// TestSimulateTasks replays the BERT-base replay with every scheduler and
// the same seeds: each run spends the budget, the weighted total never
// rises and never goes below the best recorded, round-robin shares the
// batches evenly and reaches its own final within the budget. The report
// is logged; docs/benchmarks.md has the figures of 20 seeds (autotune
// simulate --tasks).
func TestSimulateTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("replays seven landscapes")
	}
	ls := bertReplay(t)
	const budget, batch, seeds = 112, 8, 2
	r, err := SimulateSchedulers(context.Background(), TaskSimulation{
		Landscapes: ls, Schedulers: tasks.Names(), Method: Method{Strategy: "evolutionary", Model: "gbt"},
		Seeds: seeds, Budget: budget, BatchSize: batch, At: []int{56, 84, 112}, Baseline: "round-robin",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Schedulers {
		for _, run := range s.Runs {
			if last := run.Trials[len(run.Trials)-1]; last != budget {
				t.Errorf("%s seed %d spent %d trials, want %d", s.Scheduler, run.Seed, last, budget)
			}
			for i := 1; i < len(run.Totals); i++ {
				if run.Totals[i] > run.Totals[i-1] {
					t.Errorf("%s seed %d: the weighted total rose from %v to %v", s.Scheduler, run.Seed, run.Totals[i-1], run.Totals[i])
				}
			}
			if run.Final() < r.BestTotal {
				t.Errorf("%s seed %d: final total %v below the best recorded %v", s.Scheduler, run.Seed, run.Final(), r.BestTotal)
			}
			if s.Scheduler == "round-robin" && slices.Max(run.Batches) != slices.Min(run.Batches) {
				t.Errorf("round-robin gave batches %v", run.Batches)
			}
		}
		if s.Scheduler == "round-robin" && !(s.ToBaseline.Median <= budget) {
			t.Errorf("round-robin reached its own final after %v trials, want at most %d", s.ToBaseline.Median, budget)
		}
		t.Logf("%s: total at %v / best: %.3f %.3f %.3f; trials to round-robin's final %v; batches %v", s.Scheduler, r.At,
			s.TotalAt[0].Median/r.BestTotal, s.TotalAt[1].Median/r.BestTotal, s.TotalAt[2].Median/r.BestTotal, s.ToBaseline.Median, s.Batches)
	}
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
