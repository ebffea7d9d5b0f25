package tune

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/autotune-dev/autotune/tasks"
)

// TaskSet is a run over many workloads (a model's layer) with one budget:
// a scheduler of package tasks gives each batch to one of them.
type TaskSet struct {
	// Tasks are tuned as Run tunes one, each with its own measurer and
	// store (usually the same database). Their Trials and Time are
	// ignored: the set's are the budget of the whole run. Their Observer
	// is ignored too: the set's hears about every batch.
	Tasks   []Task
	Weights []float64 // one per task, > 0; nil means 1 each
	// Scheduler is a name of tasks.Kinds; "" means the first.
	Scheduler string
	Trials    int           // new measurements in the run, all tasks together; ≥ 1
	Time      time.Duration // wall-clock budget of the run; 0 means none
	Observer  func(TaskProgress)
}

// TaskProgress is the state of a TaskSet run after a batch.
type TaskProgress struct {
	Task     int      // the index of the task the batch went to
	Progress Progress // that task's
	Trials   int      // measured in the run so far, all tasks
	Budget   int      // TaskSet.Trials
	// Total is the weighted total latency Σ weight·best in nanoseconds
	// over the tasks with a best; Missing counts those without one.
	Total   float64
	Missing int
	Elapsed time.Duration
}

// TaskSetSummary is the outcome of a TaskSet run.
type TaskSetSummary struct {
	Tasks       []Summary // one per task, in order
	Weights     []float64
	Batches     []int // batches each task had in this run
	Trials      int
	Total       float64 // as TaskProgress.Total, after the run
	Missing     int
	Interrupted bool
	Elapsed     time.Duration
}

// RunTasks tunes the tasks of ts within its budget, a batch at a time, each
// batch going to the task the scheduler names (package tasks documents the
// rules), until the budget is spent, every task is exhausted or stopped
// early, or ctx is cancelled. Every task resumes from its store as Run
// does, and every batch is committed before the next.
func RunTasks(ctx context.Context, ts TaskSet) (_ TaskSetSummary, runErr error) {
	if ts.Trials < 1 {
		return TaskSetSummary{}, errors.New("tune: the trial budget must be at least 1")
	}
	if len(ts.Tasks) == 0 {
		return TaskSetSummary{}, errors.New("tune: no tasks")
	}
	if ts.Weights != nil && len(ts.Weights) != len(ts.Tasks) {
		return TaskSetSummary{}, errors.New("tune: one weight per task")
	}
	kind, err := tasks.Lookup(cmp.Or(ts.Scheduler, tasks.Names()[0]))
	if err != nil {
		return TaskSetSummary{}, errors.New("tune: " + err.Error())
	}
	sched := kind.New()
	start := time.Now()
	var runs []*run
	status := make([]tasks.Status, len(ts.Tasks))
	out := TaskSetSummary{Weights: make([]float64, len(ts.Tasks)), Batches: make([]int, len(ts.Tasks))}
	defer func() {
		for _, r := range runs {
			if err := r.close(); err != nil && runErr == nil {
				runErr = err
			}
		}
	}()
	if runs, err = openTasks(ts, start); err != nil {
		return out, err
	}
	for i, t := range ts.Tasks {
		w := 1.0
		if ts.Weights != nil {
			w = ts.Weights[i]
		}
		if !(w > 0) {
			return out, errors.New("tune: a task's weight must be positive")
		}
		out.Weights[i] = w
		status[i] = tasks.Status{Weight: w, Op: t.Template.Op.Name}
		if f := t.Template.Op.FLOPs; f != nil {
			status[i].FLOPs = f(t.Shape)
		}
	}
	// The scheduler sees the best of each task's workload, earlier runs
	// included, and so does the weighted total.
	bestOf := func(i int) float64 {
		if b := runs[i].s.Best; b != nil {
			return b.MedianNS
		}
		return 0
	}
	total := func() (ns float64, missing int) {
		for i := range runs {
			if b := bestOf(i); b > 0 {
				ns += out.Weights[i] * b
			} else {
				missing++
			}
		}
		return ns, missing
	}
	for out.Trials < ts.Trials {
		if ts.Time > 0 && time.Since(start) >= ts.Time {
			break
		}
		if ctx.Err() != nil {
			out.Interrupted = true
			break
		}
		i := sched.Next(status)
		if i < 0 {
			break
		}
		r := runs[i]
		before := r.s.Trials
		stop, err := r.step(ctx, ts.Trials-out.Trials)
		if err != nil {
			return out, err
		}
		out.Trials += r.s.Trials - before
		out.Batches[i]++
		status[i].Bests = append(status[i].Bests, bestOf(i))
		if ts.Observer != nil {
			total, missing := total()
			ts.Observer(TaskProgress{Task: i, Progress: r.s.Progress, Trials: out.Trials, Budget: ts.Trials,
				Total: total, Missing: missing, Elapsed: time.Since(start)})
		}
		if r.s.Interrupted {
			out.Interrupted = true
			break
		}
		if stop {
			if !r.s.Exhausted && !r.s.EarlyStop && !r.s.GainStop {
				break // the time ran out inside the batch
			}
			status[i].Done = true
		}
	}
	for _, r := range runs {
		if out.Interrupted {
			r.s.Interrupted = true
		}
		s, err := r.finish(ctx)
		if err != nil {
			return out, err
		}
		out.Tasks = append(out.Tasks, s)
		out.Interrupted = out.Interrupted || s.Interrupted
	}
	out.Total, out.Missing = total()
	out.Elapsed = time.Since(start)
	return out, nil
}

// openTasks opens the run of every task of ts. Tasks of one op share its
// cost model (sharedModels): each batch of one teaches the model that
// guides the others. On an error it closes what it opened.
func openTasks(ts TaskSet, start time.Time) ([]*run, error) {
	models := sharedModels{}
	runs := make([]*run, 0, len(ts.Tasks))
	for _, t := range ts.Tasks {
		t.Trials, t.Time, t.Observer = ts.Trials, ts.Time, nil
		r, err := open(t, start, models)
		if err != nil {
			for _, r := range runs {
				r.close()
			}
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}
