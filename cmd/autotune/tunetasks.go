package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// taskWorkload is one resolved line of a tasks file.
type taskWorkload struct {
	spec tasks.Spec
	w    workload
	tmpl kernels.Template
}

// readTasks reads and resolves a tasks file; every mistake in it is a
// usage error of one line naming the file and the task.
func readTasks(path, device string) ([]taskWorkload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--tasks: %v", err)
	}
	defer f.Close()
	specs, err := tasks.Parse(f)
	if err != nil {
		return nil, usagef("%s: %s", path, strings.TrimPrefix(err.Error(), "tasks: "))
	}
	var out []taskWorkload
	for i, s := range specs {
		causal := s.Causal
		wf := workloadFlags{op: s.Op, shape: s.Shape, device: device, variants: map[string]*bool{"causal": &causal}}
		w, err := wf.resolve()
		if err != nil {
			return nil, usagef("%s: task %d: %v", path, i+1, strings.ReplaceAll(err.Error(), "--", ""))
		}
		tmpl, err := tunable(w, "tune")
		if err != nil {
			var u *usageError
			if errors.As(err, &u) {
				return nil, usagef("%s: task %d: %v", path, i+1, err)
			}
			return nil, fmt.Errorf("%s: task %d: %w", path, i+1, err)
		}
		out = append(out, taskWorkload{spec: s, w: w, tmpl: tmpl})
	}
	return out, nil
}

// runTuneTasks is tune --tasks: every workload of the file in one run.
func runTuneTasks(std *stdio, o tuneOptions) error {
	if _, err := tasks.Lookup(o.scheduler); err != nil {
		return usagef("--scheduler: %s", strings.TrimPrefix(err.Error(), "tasks: "))
	}
	tws, err := readTasks(o.tasks, o.device)
	if err != nil {
		return err
	}
	ts := tune.TaskSet{Scheduler: o.scheduler, Trials: o.trials, Time: o.budget}
	for _, tw := range tws {
		measurer, release, err := newTuneMeasurer(o, tw.tmpl.Backend, tune.MeasurerOptions{Seed: o.seed, Target: tw.w.target})
		if err != nil {
			return err
		}
		defer release()
		ts.Tasks = append(ts.Tasks, tune.Task{
			Template: tw.tmpl, Shape: tw.w.shape, Target: tw.w.target,
			Space: tw.tmpl.Space(tw.w.shape, tw.w.target), Measurer: measurer,
			Strategy: o.strategy, Model: o.model, EarlyStop: o.early, Remeasure: o.leaders,
			Seed: o.seed, BatchSize: o.batch, Tool: version, RetryFailed: o.retry,
		})
		ts.Weights = append(ts.Weights, tw.spec.Weight)
	}
	db, err := openForTuning(o.db, std.errs)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	for i := range ts.Tasks {
		ts.Tasks[i].Store = db
	}
	ctx, caught, stop := signalContext()
	defer stop()
	ts.Observer = func(p tune.TaskProgress) { taskProgressLine(std.errs, tws[p.Task], p) }
	fmt.Fprintf(std.errs, "tuning %d workloads of %s with %s search and the %s scheduler (seed %d) into %s\n",
		len(tws), o.tasks, o.strategy, o.scheduler, o.seed, db.Path())
	s, err := tune.RunTasks(ctx, ts)
	if err != nil {
		return err
	}
	if o.json {
		err = writeJSON(std, tasksJSON(tws, o, s))
	} else {
		printTasksSummary(std.out, tws, s)
	}
	closed = true
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return stoppedBy(caught(), fmt.Sprintf("%d new records", s.Trials))
}

// taskProgressLine is the line of a batch: the task it went to and the
// weighted total after it.
func taskProgressLine(w io.Writer, tw taskWorkload, p tune.TaskProgress) {
	best := "none yet"
	if p.Progress.Best != nil {
		best = tunedb.FormatNS(p.Progress.Best.MedianNS)
	}
	fmt.Fprintf(w, "[%d/%d] %s: best %s; weighted total %s\n", p.Trials, p.Budget, taskLabel(tw), best, formatTotal(p.Total, p.Missing))
}

func taskLabel(tw taskWorkload) string {
	l := tw.w.op.Name + " " + kernels.FormatShape(tw.w.shape)
	if tw.spec.Name != "" {
		l = tw.spec.Name + " (" + l + ")"
	}
	return l
}

func formatTotal(ns float64, missing int) string {
	s := tunedb.FormatNS(ns)
	if missing > 0 {
		s += fmt.Sprintf(" (%d without a best)", missing)
	}
	return s
}

// taskJSON is one workload of tune --tasks --json.
type taskJSON struct {
	Name    string      `json:"name,omitempty"`
	Op      string      `json:"op"`
	Shape   []int       `json:"shape"`
	Weight  float64     `json:"weight"`
	Trials  int         `json:"trials"`
	Batches int         `json:"batches"`
	Resumed int         `json:"resumed"`
	Best    *bestConfig `json:"best"`
	Share   float64     `json:"share"` // of the weighted total, 0 to 1
}

type tasksSummaryJSON struct {
	Tasks       []taskJSON `json:"tasks"`
	Scheduler   string     `json:"scheduler"`
	Strategy    string     `json:"strategy"`
	Seed        uint64     `json:"seed"`
	Trials      int        `json:"trials"`
	TotalNS     float64    `json:"weighted_total_ns"`
	Missing     int        `json:"without_best"`
	Interrupted bool       `json:"interrupted"`
	ElapsedS    float64    `json:"elapsed_s"`
}

func tasksJSON(tws []taskWorkload, o tuneOptions, s tune.TaskSetSummary) tasksSummaryJSON {
	out := tasksSummaryJSON{Scheduler: o.scheduler, Strategy: o.strategy, Seed: o.seed, Trials: s.Trials,
		TotalNS: s.Total, Missing: s.Missing, Interrupted: s.Interrupted, ElapsedS: s.Elapsed.Seconds()}
	for i, tw := range tws {
		x := s.Tasks[i]
		t := taskJSON{Name: tw.spec.Name, Op: tw.w.op.Name, Shape: tw.w.shape, Weight: s.Weights[i],
			Trials: x.Trials, Batches: s.Batches[i], Resumed: x.Resumed}
		if x.Best != nil {
			b := newBestConfig(*x.Best, tw.tmpl, tw.w.shape)
			t.Best = &b
			t.Share = share(s, i)
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out
}

// share is task i's part of the weighted total.
func share(s tune.TaskSetSummary, i int) float64 {
	if s.Tasks[i].Best == nil || s.Total <= 0 {
		return 0
	}
	return s.Weights[i] * s.Tasks[i].Best.MedianNS / s.Total
}

func printTasksSummary(w io.Writer, tws []taskWorkload, s tune.TaskSetSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "WORKLOAD\tWEIGHT\tBEST\tTRIALS\tSHARE\tCONFIG\n")
	for i, t := range tws {
		x := s.Tasks[i]
		best, cfg, sh := "none", "", "-"
		if x.Best != nil {
			best, cfg, sh = tunedb.FormatNS(x.Best.MedianNS), x.Best.Config.String(), fmt.Sprintf("%.1f%%", 100*share(s, i))
		}
		fmt.Fprintf(tw, "%s\t%g\t%s\t%d (+%d earlier)\t%s\t%s\n", taskLabel(t), s.Weights[i], best, x.Trials, x.Resumed, sh, cfg)
	}
	tw.Flush()
	state := ""
	if s.Interrupted {
		state = ", interrupted"
	}
	fmt.Fprintf(w, "weighted total %s after %d trials in %.1fs%s\n", formatTotal(s.Total, s.Missing), s.Trials, s.Elapsed.Seconds(), state)
}
