package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune/lab"
	"github.com/autotune-dev/autotune/tunedb"
)

// simTaskBudget is simulate --tasks' budget per task when --budget is 0.
const simTaskBudget = 64

// baselineScheduler is the scheduler simulate --tasks measures the others
// against: the allocation a user gets without a scheduler.
const baselineScheduler = "round-robin"

// runSimulateTasks is simulate --tasks: the schedulers replayed on the
// recorded landscapes of a tasks file's workloads.
func runSimulateTasks(std *stdio, fs *flag.FlagSet, o simulateOptions) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case o.suite != "" || o.op != "" || o.shape != "" || o.prior != "" || o.heldOut != "":
		return usagef("--tasks takes its workloads from the file: no --op, --shape, --prior, --suite or --held-out")
	case o.gain > 0:
		return usagef("--tasks compares schedulers over a whole budget: no --stop-gain")
	case o.db != "" && o.records != "":
		return usagef("--db and --records both name a recording; give one")
	case o.db == "" && o.records == "":
		return usagef("no recording: give --db PATH or --records FILE.jsonl,... holding every workload of %s", o.tasks)
	}
	if err := o.checkRuns(); err != nil {
		return err
	}
	sr, err := o.oneSearch("--tasks", set["strategy"])
	if err != nil {
		return err
	}
	var scheds []string
	for _, s := range strings.Split(o.scheduler, ",") {
		s = strings.TrimSpace(s)
		if _, err := tasks.Lookup(s); err != nil {
			return usagef("--scheduler: %s", strings.TrimPrefix(err.Error(), "tasks: "))
		}
		if slices.Contains(scheds, s) {
			return usagef("--scheduler: %s is named twice", s)
		}
		scheds = append(scheds, s)
	}
	tws, err := readTasks(o.tasks, "cpu")
	if err != nil {
		return err
	}
	budget := o.budget
	if budget == 0 {
		budget = simTaskBudget * len(tws)
	}
	at, err := trialCounts(o.at, budget)
	if err != nil {
		return err
	}
	fingerprint, cuda, err := o.fingerprint()
	if err != nil {
		return err
	}
	if cuda {
		// readTasks loads the CPU templates: a CUDA recording would
		// match none of them.
		return usagef("--tasks replays CPU recordings only, not --device %s", o.device)
	}
	recs, err := o.recordings()
	if err != nil {
		return err
	}
	var ls []lab.TaskLandscape
	for i, tw := range tws {
		rec, err := lab.FindRecording(recs, tw.tmpl, tw.w.shape, fingerprint)
		if err != nil {
			return fmt.Errorf("%s: task %d (%s): %s", o.tasks, i+1, taskLabel(tw), strings.TrimPrefix(err.Error(), "lab: "))
		}
		ls = append(ls, lab.TaskLandscape{Template: tw.tmpl, Recording: rec, Weight: tw.spec.Weight})
	}

	ctx, caught, stop := signalContext()
	defer stop()
	fmt.Fprintf(std.errs, "simulating %d workloads of %s: %s with %s search, seeds 1..%d, %d trials each\n",
		len(tws), o.tasks, strings.Join(scheds, ", "), sr, o.seeds, budget)
	report, err := lab.SimulateSchedulers(ctx, lab.TaskSimulation{
		Landscapes: ls, Schedulers: scheds, Method: sr, Seeds: o.seeds, Budget: budget, BatchSize: o.batch,
		At: at, Baseline: baselineScheduler,
		Progress: func(sched string, r lab.TaskSimRun) {
			fmt.Fprintf(std.errs, "%s seed %d: weighted total %s after %d trials, batches %v\n",
				sched, r.Seed, tunedb.FormatNS(r.Final()), r.Trials[len(r.Trials)-1], r.Batches)
		},
	})
	if err != nil {
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		return err
	}
	if o.json {
		return writeJSON(std, newSimTasksJSON(o.tasks, sr, tws, report))
	}
	printSimTasks(std, o.tasks, sr, tws, report)
	return nil
}

// trialCounts parses --at: positive trial counts within the budget, in
// increasing order; "" means a quarter, half, three quarters and all of it.
func trialCounts(text string, budget int) ([]int, error) {
	if text == "" {
		var at []int
		for _, n := range []int{budget / 4, budget / 2, 3 * budget / 4, budget} {
			if n > 0 && !slices.Contains(at, n) {
				at = append(at, n)
			}
		}
		return at, nil
	}
	var at []int
	for _, f := range strings.Split(text, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil || n < 1:
			return nil, usagef("--at: %q is not a positive trial count", strings.TrimSpace(f))
		case n > budget:
			return nil, usagef("--at: %d is past the budget of %d trials", n, budget)
		case len(at) > 0 && n <= at[len(at)-1]:
			return nil, usagef("--at: give the trial counts in increasing order")
		}
		at = append(at, n)
	}
	return at, nil
}

// simTasksJSON is simulate --tasks' --json output. Weighted totals are in
// nanoseconds; figures a run does not have (a total before every task had
// a best, trials to a total never reached) are null.
type simTasksJSON struct {
	Tasks      string          `json:"tasks"`
	Search     string          `json:"search"`
	Seeds      int             `json:"seeds"`
	Budget     int             `json:"budget"`
	Batch      int             `json:"batch"`
	BestTotal  float64         `json:"best_total_ns"`
	Baseline   string          `json:"baseline,omitempty"`
	Workloads  []simTaskJSON   `json:"workloads"`
	Schedulers []schedulerJSON `json:"schedulers"`
}

type simTaskJSON struct {
	Name   string  `json:"name,omitempty"`
	Op     string  `json:"op"`
	Shape  []int   `json:"shape"`
	Weight float64 `json:"weight"`
	BestNS float64 `json:"best_recorded_ns"`
}

type schedulerJSON struct {
	Name       string               `json:"name"`
	TotalAt    map[string]*spreadJS `json:"total_at"`
	Final      *spreadJS            `json:"final_total"`
	ToBaseline *spreadJS            `json:"trials_to_baseline_final"`
	Batches    []float64            `json:"median_batches"`
	Runs       []simTaskRunJSON     `json:"runs"`
}

type spreadJS struct {
	P25    *float64 `json:"p25"`
	Median *float64 `json:"median"`
	P75    *float64 `json:"p75"`
}

type simTaskRunJSON struct {
	Seed    uint64    `json:"seed"`
	Trials  []int     `json:"trials"`
	Totals  []float64 `json:"totals_ns"`
	Batches []int     `json:"batches"`
}

func spreadJSON(s lab.Spread) *spreadJS {
	if math.IsNaN(s.Median) {
		return nil
	}
	return &spreadJS{finite(s.P25), finite(s.Median), finite(s.P75)}
}

func newSimTasksJSON(file string, sr lab.Method, tws []taskWorkload, r lab.TaskSimReport) simTasksJSON {
	out := simTasksJSON{Tasks: file, Search: sr.String(), Seeds: r.Seeds, Budget: r.Budget, Batch: r.BatchSize,
		BestTotal: r.BestTotal, Baseline: r.Baseline}
	for i, tw := range tws {
		out.Workloads = append(out.Workloads, simTaskJSON{Name: tw.spec.Name, Op: tw.w.op.Name, Shape: tw.w.shape,
			Weight: r.Weights[i], BestNS: r.BestNS[i]})
	}
	for _, s := range r.Schedulers {
		sj := schedulerJSON{Name: s.Scheduler, TotalAt: map[string]*spreadJS{}, Final: spreadJSON(s.Final),
			ToBaseline: spreadJSON(s.ToBaseline), Batches: s.Batches}
		for i, n := range r.At {
			sj.TotalAt[strconv.Itoa(n)] = spreadJSON(s.TotalAt[i])
		}
		for _, run := range s.Runs {
			sj.Runs = append(sj.Runs, simTaskRunJSON{Seed: run.Seed, Trials: run.Trials, Totals: run.Totals, Batches: run.Batches})
		}
		out.Schedulers = append(out.Schedulers, sj)
	}
	return out
}

// printSimTasks prints the report of simulate --tasks: the totals per
// scheduler, then the tasks with the batches each scheduler gave them.
func printSimTasks(std *stdio, file string, sr lab.Method, tws []taskWorkload, r lab.TaskSimReport) {
	fmt.Fprintf(std.out, "tasks      %d workloads of %s, best recorded weighted total %s\n", len(tws), file, tunedb.FormatNS(r.BestTotal))
	fmt.Fprintf(std.out, "runs       %d seeds per scheduler, budget %d trials, batch %d, %s search\n\n", r.Seeds, r.Budget, r.BatchSize, sr)
	fmt.Fprintln(std.out, "weighted total after N trials as a multiple of the best recorded, median (p25–p75) over seeds:")
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "scheduler\t")
	for _, n := range r.At {
		fmt.Fprintf(tw, "@%d\t", n)
	}
	if r.Baseline != "" {
		fmt.Fprintf(tw, "trials to %s's final", r.Baseline)
	}
	fmt.Fprintln(tw)
	ratio := func(s lab.Spread) string {
		if math.IsNaN(s.Median) {
			return "-"
		}
		return fmt.Sprintf("%.3f (%.3f–%.3f)", s.Median/r.BestTotal, s.P25/r.BestTotal, s.P75/r.BestTotal)
	}
	for _, s := range r.Schedulers {
		fmt.Fprintf(tw, "%s\t", s.Scheduler)
		for _, x := range s.TotalAt {
			fmt.Fprintf(tw, "%s\t", ratio(x))
		}
		if r.Baseline != "" {
			fmt.Fprintf(tw, "%s (%s–%s)", trialsMedian(s.ToBaseline.Median), trialsMedian(s.ToBaseline.P25), trialsMedian(s.ToBaseline.P75))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	fmt.Fprintln(std.out, "\nbatches per task, median over seeds:")
	tw = tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "WORKLOAD\tWEIGHT\tBEST RECORDED\tSHARE\t")
	for _, s := range r.Schedulers {
		fmt.Fprintf(tw, "%s\t", strings.ToUpper(s.Scheduler))
	}
	fmt.Fprintln(tw)
	for i, t := range tws {
		fmt.Fprintf(tw, "%s\t%g\t%s\t%.1f%%\t", taskLabel(t), r.Weights[i], tunedb.FormatNS(r.BestNS[i]), 100*r.Weights[i]*r.BestNS[i]/r.BestTotal)
		for _, s := range r.Schedulers {
			fmt.Fprintf(tw, "%s\t", medianText(s.Batches[i], "%.1f"))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(std.out, "\nshare: of the best recorded weighted total")
}

// trialsMedian formats a trial count of a spread: "never" for runs that
// never got there.
func trialsMedian(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return medianText(x, "%.1f")
}
