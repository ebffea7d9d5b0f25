package tune

import (
	"context"
	"fmt"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/tunedb"
)

// A TaskLandscape is one workload of a multi-workload landscape: a
// recorded landscape with the weight of its workload.
type TaskLandscape struct {
	Template  kernels.Template
	Recording Recording
	Weight    float64
}

// TaskSimRun is the course of one replayed TaskSet run: after each batch,
// the trials spent so far and the weighted total latency (ns) of the
// tasks with a best, and the batches each task had.
type TaskSimRun struct {
	Trials  []int
	Totals  []float64
	Batches []int
}

// TotalAt is the weighted total after n trials: the last figure reached
// within n, 0 before every task has a best.
func (r TaskSimRun) TotalAt(n int) float64 {
	total := 0.0
	for i, t := range r.Trials {
		if t > n {
			break
		}
		total = r.Totals[i]
	}
	return total
}

// SimulateTasks replays a multi-workload landscape through RunTasks with
// one scheduler, one search and one seed, in a fresh in-memory database
// shared by the tasks (so that tasks of one op share its model, as in a
// real run), measuring nothing.
func SimulateTasks(ctx context.Context, ls []TaskLandscape, scheduler string, s Search, seed uint64, budget, batch int) (TaskSimRun, error) {
	db := tunedb.NewMemory()
	ts := TaskSet{Scheduler: scheduler, Trials: budget}
	var run TaskSimRun
	for _, l := range ls {
		rec := l.Recording
		tmpl, err := rec.revision(l.Template)
		if err != nil {
			return run, err
		}
		space := tmpl.Space(rec.Workload.Shape, rec.Target)
		results, _ := replayable(space, rec.Records)
		if len(results) == 0 {
			return run, fmt.Errorf("tune: no replayable record of %s", rec.Workload.Key())
		}
		ts.Tasks = append(ts.Tasks, Task{
			Template: tmpl, Shape: rec.Workload.Shape, Target: rec.Target, Space: space,
			Measurer: sim.New(results), Store: db, Strategy: s.Strategy, Model: s.Model,
			Seed: seed, BatchSize: batch, Tool: "simulate",
		})
		ts.Weights = append(ts.Weights, l.Weight)
	}
	ts.Observer = func(p TaskProgress) {
		if p.Missing == 0 {
			run.Trials = append(run.Trials, p.Trials)
			run.Totals = append(run.Totals, p.Total)
		}
	}
	sum, err := RunTasks(ctx, ts)
	if err == nil {
		err = ctx.Err()
	}
	run.Batches = sum.Batches
	return run, err
}
