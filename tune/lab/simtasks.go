package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
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
	Seed    uint64
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

// TrialsTo is the trials the run took to bring the weighted total to x or
// below, 0 when it never did.
func (r TaskSimRun) TrialsTo(x float64) int {
	for i, t := range r.Totals {
		if t <= x {
			return r.Trials[i]
		}
	}
	return 0
}

// Final is the weighted total at the end of the run, 0 when a task never
// had a best.
func (r TaskSimRun) Final() float64 {
	if len(r.Totals) == 0 {
		return 0
	}
	return r.Totals[len(r.Totals)-1]
}

// SimulateTasks replays a multi-workload landscape through RunTasks with
// one scheduler, one search and one seed, in a fresh in-memory database
// shared by the tasks (so that tasks of one op share its model, as in a
// real run), measuring nothing.
func SimulateTasks(ctx context.Context, ls []TaskLandscape, scheduler string, s Method, seed uint64, budget, batch int) (TaskSimRun, error) {
	db := tunedb.NewMemory()
	ts := tune.TaskSet{Scheduler: scheduler, Trials: budget}
	run := TaskSimRun{Seed: seed}
	for _, l := range ls {
		rec := l.Recording
		tmpl, err := rec.revision(l.Template)
		if err != nil {
			return run, err
		}
		space := tmpl.Space(rec.Workload.Shape, rec.Target)
		results, _ := replayable(space, rec.Records)
		if len(results) == 0 {
			return run, fmt.Errorf("lab: no replayable record of %s", rec.Workload.Key())
		}
		ts.Tasks = append(ts.Tasks, tune.Task{
			Template: tmpl, Shape: rec.Workload.Shape, Target: rec.Target, Space: space,
			Measurer: sim.New(results), Store: db, Strategy: s.Strategy, Model: s.Model,
			Seed: seed, BatchSize: batch, Tool: "simulate",
		})
		ts.Weights = append(ts.Weights, l.Weight)
	}
	ts.Observer = func(p tune.TaskProgress) {
		if p.Missing == 0 {
			run.Trials = append(run.Trials, p.Trials)
			run.Totals = append(run.Totals, p.Total)
		}
	}
	sum, err := tune.RunTasks(ctx, ts)
	if err == nil {
		err = ctx.Err()
	}
	run.Batches = sum.Batches
	return run, err
}

// TaskSimulation compares task schedulers on a multi-workload landscape:
// each scheduler replays it once per seed through RunTasks (SimulateTasks),
// with the same search, seeds, budget and batch, so that the runs of two
// schedulers with one seed differ only by the scheduler.
type TaskSimulation struct {
	Landscapes []TaskLandscape
	Schedulers []string // names of tasks.Kinds
	Method     Method
	Seeds      int // seeds 1..Seeds; ≥ 1
	Budget     int // trials of a run, all tasks together; ≥ 1
	BatchSize  int // 0 means 16, as for Run
	// At are the trial counts the report gives the weighted total at.
	At []int
	// Baseline, when it is one of Schedulers, is the scheduler the others
	// are measured against: SchedulerReport.ToBaseline.
	Baseline string
	// Parallel is how many runs go side by side; 0 means GOMAXPROCS.
	// It changes how long a simulation takes, never its report.
	Parallel int
	// Progress, when set, hears about every run when it ends, one call at
	// a time.
	Progress func(scheduler string, r TaskSimRun)
}

// TaskSimReport is the outcome of a TaskSimulation.
type TaskSimReport struct {
	// BestNS is each task's best recorded median, and BestTotal the
	// weighted total Σ weight·best of them: the least any run can reach.
	BestNS     []float64
	Weights    []float64
	BestTotal  float64
	Seeds      int
	Budget     int
	BatchSize  int
	At         []int
	Baseline   string // "" when there is none
	Schedulers []SchedulerReport
}

// Spread is a median over seeds with its quartiles (the 25th and 75th
// percentiles, interpolated).
type Spread struct{ P25, Median, P75 float64 }

// SchedulerReport sums up the runs of one scheduler over the seeds.
// Weighted totals are in nanoseconds.
type SchedulerReport struct {
	Scheduler string
	Runs      []TaskSimRun // one per seed, in seed order
	// TotalAt is the weighted total after At[i] trials; NaN before every
	// task had a best (the warm-up round).
	TotalAt []Spread
	Final   Spread // the weighted total at the end of the budget
	// ToBaseline is the trials each run took to reach the final weighted
	// total of the baseline's run of the same seed, +Inf for a run that
	// never did (so a median of +Inf means half the runs or more did not);
	// NaN without a baseline.
	ToBaseline Spread
	// Batches is the median of the batches each task had.
	Batches []float64
}

// SimulateSchedulers runs every scheduler of s once per seed on s's
// landscape. Runs are deterministic: the same simulation gives the same
// report.
func SimulateSchedulers(ctx context.Context, s TaskSimulation) (TaskSimReport, error) {
	switch {
	case s.Seeds < 1:
		return TaskSimReport{}, errors.New("lab: simulate needs at least one seed")
	case s.Budget < 1:
		return TaskSimReport{}, errors.New("lab: the trial budget must be at least 1")
	case len(s.Landscapes) == 0:
		return TaskSimReport{}, errors.New("lab: no tasks")
	case len(s.Schedulers) == 0:
		return TaskSimReport{}, errors.New("lab: no scheduler to simulate")
	}
	for _, name := range s.Schedulers {
		if _, err := tasks.Lookup(name); err != nil {
			return TaskSimReport{}, errors.New("lab: " + err.Error())
		}
	}
	report := TaskSimReport{Seeds: s.Seeds, Budget: s.Budget, BatchSize: cmp.Or(s.BatchSize, 16), At: s.At}
	for _, l := range s.Landscapes {
		best := math.Inf(1)
		for _, r := range l.Recording.Records {
			if r.Status == tunedb.StatusOK {
				best = min(best, r.MedianNS)
			}
		}
		if math.IsInf(best, 1) {
			return report, fmt.Errorf("lab: no successful record of %s", l.Recording.Workload.Key())
		}
		report.BestNS = append(report.BestNS, best)
		report.Weights = append(report.Weights, l.Weight)
		report.BestTotal += l.Weight * best
	}
	if slices.Contains(s.Schedulers, s.Baseline) {
		report.Baseline = s.Baseline
	}
	type job struct {
		sched int
		seed  uint64
	}
	runs := make([][]TaskSimRun, len(s.Schedulers))
	var jobs []job
	for i := range s.Schedulers {
		runs[i] = make([]TaskSimRun, s.Seeds)
		for seed := range s.Seeds {
			jobs = append(jobs, job{i, uint64(seed + 1)})
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan job, len(jobs))
	for _, j := range jobs {
		next <- j
	}
	close(next)
	for range min(cmp.Or(s.Parallel, runtime.GOMAXPROCS(0)), len(jobs)) {
		wg.Go(func() {
			for j := range next {
				run, err := SimulateTasks(ctx, s.Landscapes, s.Schedulers[j.sched], s.Method, j.seed, s.Budget, s.BatchSize)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				if err == nil {
					runs[j.sched][j.seed-1] = run
					if s.Progress != nil {
						s.Progress(s.Schedulers[j.sched], run)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return report, firstErr
	}
	base := slices.Index(s.Schedulers, report.Baseline)
	for i, name := range s.Schedulers {
		sr := SchedulerReport{Scheduler: name, Runs: runs[i]}
		for _, n := range s.At {
			sr.TotalAt = append(sr.TotalAt, spread(runs[i], func(r TaskSimRun) float64 {
				if t := r.TotalAt(n); t > 0 {
					return t
				}
				return math.NaN()
			}))
		}
		sr.Final = spread(runs[i], TaskSimRun.Final)
		sr.ToBaseline = Spread{math.NaN(), math.NaN(), math.NaN()}
		if base >= 0 {
			sr.ToBaseline = spread(runs[i], func(r TaskSimRun) float64 {
				if n := r.TrialsTo(runs[base][r.Seed-1].Final()); n > 0 {
					return float64(n)
				}
				return math.Inf(1)
			})
		}
		for t := range s.Landscapes {
			sr.Batches = append(sr.Batches, spread(runs[i], func(r TaskSimRun) float64 { return float64(r.Batches[t]) }).Median)
		}
		report.Schedulers = append(report.Schedulers, sr)
	}
	return report, nil
}

// spread is the median and quartiles of f over runs; a NaN of f makes the
// whole spread NaN (a figure some run does not have).
func spread(runs []TaskSimRun, f func(TaskSimRun) float64) Spread {
	xs := make([]float64, 0, len(runs))
	for _, r := range runs {
		x := f(r)
		if math.IsNaN(x) {
			return Spread{math.NaN(), math.NaN(), math.NaN()}
		}
		xs = append(xs, x)
	}
	slices.Sort(xs)
	return Spread{quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)}
}

// quantile of sorted xs, interpolated between neighbours; +Inf values
// count as larger than any other.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	p := q * float64(len(xs)-1)
	i := int(p)
	if i+1 >= len(xs) || p == float64(i) {
		return xs[i]
	}
	lo, hi := xs[i], xs[i+1]
	if math.IsInf(hi, 1) {
		return hi
	}
	return lo + (hi-lo)*(p-float64(i))
}
