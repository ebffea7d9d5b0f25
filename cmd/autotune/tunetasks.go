package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	measurecpu "github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/ranges"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// taskWorkload is one resolved line of a tasks file.
type taskWorkload struct {
	spec tasks.Spec
	w    workload
	tmpl kernels.Template
	// rng is the range of a task whose shape is one, which the file's
	// line stands for: it becomes the range's first buckets
	// (ranges.FirstBuckets), a task each, sharing its weight.
	rng *kernels.ShapeRange
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
		wf := workloadFlags{op: s.Op, shape: s.Shape, dtype: string(s.DType), device: device, variants: map[string]*bool{"causal": &causal}}
		w, rng, err := wf.resolveRange()
		if err != nil {
			return nil, usagef("%s: task %d: %v", path, i+1, strings.ReplaceAll(err.Error(), "--", ""))
		}
		shapes := [][]int{w.shape}
		tw := taskWorkload{spec: s}
		if !rng.Single() {
			shapes = ranges.FirstBuckets(rng.Lo, rng.Hi, ranges.DefaultLevels)
			tw.rng = &rng
			tw.spec.Weight /= float64(len(shapes))
		}
		for _, shape := range shapes {
			tw.w = w
			tw.w.shape = shape
			if tw.tmpl, err = tunable(tw.w, "tune"); err != nil {
				var u *usageError
				if errors.As(err, &u) {
					return nil, usagef("%s: task %d: %v", path, i+1, err)
				}
				return nil, fmt.Errorf("%s: task %d: %w", path, i+1, err)
			}
			out = append(out, tw)
		}
	}
	return out, nil
}

// rangeReserve is the trials a tasks run keeps of its budget for each
// range line, for after the scheduler tuned the range's first buckets
// among the other tasks: the regrets at the default 8 held-out shapes (a
// short tune of ranges.MinProbe trials and a timing each) and two buckets more of
// perBucket trials; the ranges get at most half the budget together.
func rangeReserve(budget, lines, perBucket int) int {
	if lines == 0 {
		return 0
	}
	return min(8*(ranges.MinProbe+1)+2*perBucket, budget/2/lines)
}

// rangeLines returns the ranges of the file's lines that have one, each
// once, in file order.
func rangeLines(tws []taskWorkload) []*kernels.ShapeRange {
	var out []*kernels.ShapeRange
	for _, tw := range tws {
		if tw.rng != nil && !slices.Contains(out, tw.rng) {
			out = append(out, tw.rng)
		}
	}
	return out
}

// tuneTaskRanges goes on with each range line once the scheduler has
// tuned its first buckets, as tune does a range on the command line
// (rangeTuner): it measures the regret of dispatch on held-out shapes,
// adds buckets where it is largest within trials each, and saves the
// range. It returns each range's summary.
func tuneTaskRanges(ctx context.Context, std *stdio, o tuneOptions, db *tunedb.DB, tws []taskWorkload, ts tune.TaskSet, s tune.TaskSetSummary, trials int, deadline time.Time) ([]rangeJSON, error) {
	var out []rangeJSON
	for _, rng := range rangeLines(tws) {
		first := slices.IndexFunc(tws, func(tw taskWorkload) bool { return tw.rng == rng })
		var tuned []ranges.Bucket
		spent := 0
		for j, tw := range tws {
			if tw.rng != rng {
				continue
			}
			b := ranges.Bucket{Shape: tw.w.shape}
			if best := s.Tasks[j].Best; best != nil {
				b.Winner, b.OK = best.Config, true
			}
			tuned, spent = append(tuned, b), spent+s.Tasks[j].Trials
		}
		ro := o
		ro.trials = trials
		rt := &rangeTuner{o: ro, w: tws[first].w, tmpl: tws[first].tmpl, toolchain: ts.Tasks[first].Toolchain,
			measurer: ts.Tasks[first].Measurer, db: db, errs: std.errs, deadline: deadline}
		// The reserve is sized for probes of ranges.MinProbe trials: a
		// longer probe would leave no trials to add a bucket with.
		res, err := rt.run(ctx, *rng, ranges.Options{Trials: trials, PerShape: max(1, spent/len(tuned)), Probe: ranges.MinProbe, Tuned: tuned})
		if err != nil {
			return out, err
		}
		sum, err := rt.summary(*rng, res)
		if err != nil {
			return out, err
		}
		out = append(out, sum)
	}
	return out, nil
}

// tuneTaskSet tunes the tasks of the file's lines, tws, within o's
// budget: the scheduler tunes ts, the tasks, with what the range lines
// keep aside taken off (rangeReserve); then each range line goes on from
// its first buckets with what is left (tuneTaskRanges).
func tuneTaskSet(ctx context.Context, std *stdio, o tuneOptions, db *tunedb.DB, tws []taskWorkload, ts tune.TaskSet) (tune.TaskSetSummary, []rangeJSON, error) {
	lines := len(rangeLines(tws))
	ts.Trials = o.trials - lines*rangeReserve(o.trials, lines, o.trials/len(tws))
	start := time.Now()
	s, err := tune.RunTasks(ctx, ts)
	if err != nil || lines == 0 {
		return s, nil, err
	}
	var deadline time.Time
	if o.budget > 0 {
		deadline = start.Add(o.budget)
	}
	// What the scheduler left unspent goes to the ranges too.
	rs, err := tuneTaskRanges(ctx, std, o, db, tws, ts, s, (o.trials-s.Trials)/lines, deadline)
	return s, rs, err
}

// runTuneTasks is tune --tasks: every workload of the file in one run.
func runTuneTasks(std *stdio, o tuneOptions) error {
	if _, err := tasks.Lookup(o.scheduler); err != nil {
		return usagef("--scheduler: %s", strings.TrimPrefix(err.Error(), "tasks: "))
	}
	if o.dtype != string(dtype.Default) {
		return usagef("--dtype applies to one workload; a tasks file names each task's dtype")
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
		toolchain, err := tune.ToolchainOf(context.Background(), measurer)
		if err != nil {
			return err
		}
		ts.Tasks = append(ts.Tasks, tune.Task{
			Template: tw.tmpl, Shape: tw.w.shape, DType: tw.w.dtype, Target: tw.w.target, Toolchain: toolchain,
			Space: tw.tmpl.SearchSpace(tw.w.shape, tw.w.dtype, tw.w.target), Measurer: measurer,
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
	s, rs, err := tuneTaskSet(ctx, std, o, db, tws, ts)
	if err != nil {
		return err
	}
	vs := timePlainGo(ctx, std, o, tws, s)
	if o.json {
		out := tasksJSON(tws, o, s, vs)
		out.Ranges = rs
		for _, r := range rs {
			out.Trials += r.Trials
		}
		err = writeJSON(std, out)
	} else {
		printTasksSummary(std.out, tws, s, vs)
		for _, r := range rs {
			fmt.Fprintln(std.out)
			printRange(std.out, r)
		}
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
	// Speedup is the plain-Go baseline's median over the tuned kernel's,
	// timed side by side (PlainGoNS and TunedNS) at the end of the run;
	// SpeedupNote says why it is absent.
	Speedup     *float64       `json:"speedup_vs_plain_go"`
	PlainGoNS   *float64       `json:"plain_go_ns,omitempty"`
	TunedNS     *float64       `json:"tuned_ns,omitempty"`
	SpeedupNote string         `json:"speedup_note,omitempty"`
	Contention  contentionJSON `json:"contention"`
}

type tasksSummaryJSON struct {
	Tasks       []taskJSON     `json:"tasks"`
	Scheduler   string         `json:"scheduler"`
	Strategy    string         `json:"strategy"`
	Seed        uint64         `json:"seed"`
	Trials      int            `json:"trials"`
	TotalNS     float64        `json:"weighted_total_ns"`
	Missing     int            `json:"without_best"`
	Interrupted bool           `json:"interrupted"`
	ElapsedS    float64        `json:"elapsed_s"`
	Contention  contentionJSON `json:"contention"` // the tasks' together
	// Ranges are the file's range lines, each as tune --shape lo..hi
	// --json summarises one, after the scheduler tuned its first buckets:
	// their trials are in the tasks' and in trials, which counts the
	// ranges' regret measurements too.
	Ranges []rangeJSON `json:"ranges,omitempty"`
}

func tasksJSON(tws []taskWorkload, o tuneOptions, s tune.TaskSetSummary, vs []plainGo) tasksSummaryJSON {
	out := tasksSummaryJSON{Scheduler: o.scheduler, Strategy: o.strategy, Seed: o.seed, Trials: s.Trials,
		TotalNS: s.Total, Missing: s.Missing, Interrupted: s.Interrupted, ElapsedS: s.Elapsed.Seconds(),
		Contention: newContentionJSON(pooledContention(s.Tasks))}
	for i, tw := range tws {
		x := s.Tasks[i]
		t := taskJSON{Name: tw.spec.Name, Op: tw.w.op.Name, Shape: tw.w.shape, Weight: s.Weights[i],
			Trials: x.Trials, Batches: s.Batches[i], Resumed: x.Resumed, Contention: newContentionJSON(x)}
		if x.Best != nil {
			b := newBestConfig(*x.Best, tw.tmpl, tw.w.shape, tw.w.dtype)
			t.Best = &b
			t.Share = share(s, i)
		}
		if v := vs[i]; v.timed() {
			x, p, tn := v.plainNS/v.tunedNS, v.plainNS, v.tunedNS
			t.Speedup, t.PlainGoNS, t.TunedNS = &x, &p, &tn
		} else {
			t.SpeedupNote = v.note
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

func printTasksSummary(w io.Writer, tws []taskWorkload, s tune.TaskSetSummary, vs []plainGo) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "WORKLOAD\tWEIGHT\tBEST\tTRIALS\tSHARE\tVS PLAIN GO\tCONFIG\n")
	var notes []string
	for i, t := range tws {
		x := s.Tasks[i]
		best, cfg, sh, speedup := "none", "", "-", "-"
		if x.Best != nil {
			best, cfg, sh = tunedb.FormatNS(x.Best.MedianNS), x.Best.Config.String(), fmt.Sprintf("%.1f%%", 100*share(s, i))
		}
		if v := vs[i]; v.timed() {
			speedup = fmt.Sprintf("%.1f×", v.plainNS/v.tunedNS)
		} else if v.note != "" {
			notes = append(notes, fmt.Sprintf("%s: plain Go not timed: %s", taskLabel(t), v.note))
		}
		fmt.Fprintf(tw, "%s\t%g\t%s\t%d (+%d earlier)\t%s\t%s\t%s\n", taskLabel(t), s.Weights[i], best, x.Trials, x.Resumed, sh, speedup, cfg)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	state := ""
	if s.Interrupted {
		state = ", interrupted"
	}
	fmt.Fprintf(w, "weighted total %s after %d trials in %.1fs%s\n", formatTotal(s.Total, s.Missing), s.Trials, s.Elapsed.Seconds(), state)
	// Which winners stayed disturbed is said by task, not by the pooled
	// line.
	pooled := pooledContention(s.Tasks)
	pooled.Unsettled = false
	fmt.Fprintf(w, "contention: %s\n", formatContention(pooled))
	var unsettled []string
	for i, t := range tws {
		if s.Tasks[i].Unsettled {
			unsettled = append(unsettled, taskLabel(t))
		}
	}
	if len(unsettled) > 0 {
		fmt.Fprintf(w, "the winners of %s were still mostly disturbed: bench them when the machine is quieter\n", strings.Join(unsettled, ", "))
	}
}

// pooledContention returns the contention of the tasks' runs together,
// as formatContention and contentionJSON read it: the counts summed, and
// Unsettled when a task's winner was.
func pooledContention(ss []tune.Summary) tune.Summary {
	var p tune.Summary
	for _, s := range ss {
		p.Evidenced += s.Evidenced
		p.Contended += s.Contended
		p.Remeasures += s.Remeasures
		p.Unsettled = p.Unsettled || s.Unsettled
	}
	return p
}

// plainGoBaseline is the name every op gives its plain-Go baseline among
// its template's Baselines: loops as a Go programmer writes them without
// a tuner, the honest measure of what tuning buys.
const plainGoBaseline = "naive"

// plainGoMaxFLOPs bounds the workloads whose plain-Go baseline the end of
// tune --tasks times. The loops run at about 1 GFLOP/s here and a short
// bench calls them some ten times (check, allocation count, warm-up,
// samples), so a workload at the bound adds ten to twenty seconds;
// autotune bench times larger ones on request.
const plainGoMaxFLOPs = 1e9

// The short bench of each workload: enough samples for a median of a
// baseline that is many times slower than the tuned kernel.
const (
	plainGoSamples = 5
	plainGoTime    = 200 * time.Millisecond
)

// plainGo is a tuned kernel and its op's plain-Go baseline timed side by
// side, or why they were not.
type plainGo struct {
	plainNS, tunedNS float64 // medians
	note             string
}

func (p plainGo) timed() bool { return p.plainNS > 0 && p.tunedNS > 0 }

// timePlainGo times, for each task with a best, the best config against
// the op's plain-Go baseline in one bench process (measurecpu.Bench, as
// autotune bench does, with fewer samples): the speedup of the summary.
// It skips workloads it cannot time here or fairly (a GPU target, remote
// workers, more than plainGoMaxFLOPs, an interrupted run), with a note.
func timePlainGo(ctx context.Context, std *stdio, o tuneOptions, tws []taskWorkload, s tune.TaskSetSummary) []plainGo {
	out := make([]plainGo, len(tws))
	var todo []int
	for i, tw := range tws {
		if s.Tasks[i].Best == nil {
			continue
		}
		var base *kernels.Baseline
		for _, b := range tw.tmpl.Baselines {
			if b.Name == plainGoBaseline {
				base = &b
			}
		}
		flops := 0.0
		if tw.tmpl.FLOPs != nil {
			flops = tw.tmpl.FLOPs(tw.w.shape)
		}
		switch {
		case !o.baseline:
			continue
		case s.Interrupted:
			out[i].note = "the run was interrupted"
		case tw.tmpl.Backend != kernels.CPU:
			out[i].note = "the kernel runs on " + tw.w.target.Name + ", the baseline on the CPU"
		case o.nats.url != "":
			out[i].note = "measured by remote workers; run autotune bench on their machine"
		case base == nil:
			out[i].note = "the op has none"
		case base.Skipped(tw.w.shape) != "":
			out[i].note = base.Skipped(tw.w.shape)
		case flops > plainGoMaxFLOPs:
			out[i].note = fmt.Sprintf("%.3g FLOPs a call, more than the %.0e timed at the end of a run; autotune bench times it", flops, plainGoMaxFLOPs)
		default:
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out
	}
	fmt.Fprintf(std.errs, "timing %d tuned kernels side by side with the plain-Go baseline of their op\n", len(todo))
	m := measurecpu.New(&measurecpu.Options{Seed: o.seed})
	for _, i := range todo {
		tw := tws[i]
		tmpl := tw.tmpl
		tmpl.Baselines = slices.DeleteFunc(slices.Clone(tmpl.Baselines), func(b kernels.Baseline) bool { return b.Name != plainGoBaseline })
		res, err := m.Bench(ctx, measurecpu.BenchBatch{Template: tmpl, Shape: tw.w.shape, Target: tw.w.target,
			Config: s.Tasks[i].Best.Config, MinSamples: plainGoSamples, MinTime: plainGoTime})
		if err != nil {
			out[i].note = firstLine(err.Error(), 200)
			fmt.Fprintf(std.errs, "%s: plain Go not timed: %s\n", taskLabel(tw), out[i].note)
			continue
		}
		for _, r := range res {
			switch r.Name {
			case measurecpu.BenchTuned:
				out[i].tunedNS = r.MedianNS
			case plainGoBaseline:
				out[i].plainNS = r.MedianNS
			}
		}
	}
	return out
}
