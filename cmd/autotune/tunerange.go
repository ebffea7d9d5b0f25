package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/ranges"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// rangeTuner tunes the shapes of a range for package ranges: each shape
// is an ordinary workload of the database, tuned with tune's flags.
type rangeTuner struct {
	o         tuneOptions
	w         workload // of the range's low corner
	tmpl      kernels.Template
	toolchain string
	measurer  tune.Measurer
	db        *tunedb.DB
	errs      io.Writer
	deadline  time.Time // of --time; zero when none
	tuned     int       // shapes tuned so far, for the progress lines
	stopped   bool      // the run was interrupted
}

var _ ranges.Tuner = (*rangeTuner)(nil)

// errOutOfTime ends a range tune whose --time is spent: not a failure.
var errOutOfTime = errors.New("the time budget is spent")

// run tunes the range within opts' trials (opts.Lo and Hi are rng's) and
// saves it in the database. A tasks run sets deadline and opts.Tuned
// itself; tune sets the deadline from --time.
func (t *rangeTuner) run(ctx context.Context, rng kernels.ShapeRange, opts ranges.Options) (ranges.Result, error) {
	if t.o.budget > 0 && t.deadline.IsZero() {
		t.deadline = time.Now().Add(t.o.budget)
	}
	opts.Lo, opts.Hi = rng.Lo, rng.Hi
	fmt.Fprintf(t.errs, "tuning %s %s %s on %s, a range, within %d trials, built by %s, with %s search (seed %d) into %s\n",
		t.w.op.Name, rng, t.w.dtype, t.w.target.Fingerprint(), opts.Trials, toolchainName(t.toolchain), t.o.strategy, t.o.seed, t.db.Path())
	res, err := ranges.Tune(ctx, t, opts)
	switch {
	case errors.Is(err, errOutOfTime):
		err = nil
	case errors.Is(err, context.Canceled):
		err, t.stopped = nil, true
	}
	if err != nil || len(res.Buckets) == 0 {
		return res, err
	}
	wk := t.task(rng.Lo, 1).Workload()
	return res, t.db.SaveRange(tunedb.Range{
		Workload: wk, Hi: rng.Hi, Buckets: res.BucketShapes(), HeldOut: res.HeldOut,
		Trials: res.Spent, Time: time.Now().UTC(), Tool: version,
	})
}

// task is the task of tuning shape with trials, within what is left of
// the time budget.
func (t *rangeTuner) task(shape []int, trials int) tune.Task {
	w := t.w
	w.shape = shape
	task := newTuneTask(t.o, w, t.tmpl, t.toolchain, t.measurer, t.db)
	task.Trials = trials
	if !t.deadline.IsZero() {
		task.Time = max(time.Until(t.deadline), time.Nanosecond)
	}
	return task
}

func (t *rangeTuner) outOfTime() bool {
	return !t.deadline.IsZero() && !time.Now().Before(t.deadline)
}

// Tune tunes shape as autotune tune does one workload.
func (t *rangeTuner) Tune(ctx context.Context, shape []int, trials int) (schedule.Config, bool, int, error) {
	if t.outOfTime() {
		return schedule.Config{}, false, 0, errOutOfTime
	}
	t.tuned++
	fmt.Fprintf(t.errs, "shape %d: %s, %d trials\n", t.tuned, kernels.FormatShape(shape), trials)
	task := t.task(shape, trials)
	progress := newProgress(t.errs, trials, t.tmpl.BytesOf(shape, t.w.dtype))
	task.Observer = progress
	s, err := tune.Run(ctx, task)
	progress.finish()
	if err == nil && s.Interrupted {
		err = ctx.Err()
	}
	if s.Best == nil {
		return schedule.Config{}, false, s.Trials, err
	}
	return s.Best.Config, true, s.Trials, err
}

// Time returns the latest ok median of each config at shape, measuring
// the configs without a record there first (tune.TimeMedians: claimed,
// so that another tuner of the range times none of them again).
func (t *rangeTuner) Time(ctx context.Context, shape []int, cfgs []schedule.Config) ([]float64, int, error) {
	if !t.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, t.deadline)
		defer cancel()
	}
	out, spent, err := tune.TimeMedians(ctx, t.task(shape, 1), cfgs)
	if errors.Is(err, context.DeadlineExceeded) && t.outOfTime() {
		err = errOutOfTime
	}
	return out, spent, err
}

// Best returns the fastest median of shape's records.
func (t *rangeTuner) Best(shape []int) (float64, error) {
	r, ok, err := t.db.Best(t.task(shape, 1).Workload())
	if err != nil || !ok {
		return 0, err
	}
	return r.MedianNS, nil
}

// rangeJSON is tune's --json output for a range.
type rangeJSON struct {
	Op          string        `json:"op"`
	Range       string        `json:"range"`
	Lo          []int         `json:"lo"`
	Hi          []int         `json:"hi"`
	DType       string        `json:"dtype"`
	Device      string        `json:"device"`
	Template    string        `json:"template"`
	Toolchain   string        `json:"toolchain,omitempty"`
	Strategy    string        `json:"strategy"`
	Seed        uint64        `json:"seed"`
	Budget      int           `json:"budget"` // --trials
	Trials      int           `json:"trials"` // spent, timings of held-out shapes included
	Interrupted bool          `json:"interrupted"`
	Buckets     []bucketJSON  `json:"buckets"`
	HeldOut     []heldOutJSON `json:"held_out"`
	// RegretMedian and RegretMax are over the held-out shapes: null when
	// none was measured (held_out is empty), or when infinite (a bucket's
	// winner cannot run a shape).
	RegretMedian *float64 `json:"regret_median"`
	RegretMax    *float64 `json:"regret_max"`
}

type bucketJSON struct {
	Shape []int       `json:"shape"`
	Best  *bestConfig `json:"best"` // null when no config passed
}

type heldOutJSON struct {
	Shape  []int    `json:"shape"`
	Bucket []int    `json:"bucket"`
	Regret *float64 `json:"regret"` // null: the bucket's winner cannot run the shape
}

// report prints the range's summary: its buckets and their winners, and
// the regret of dispatching its held-out shapes to them.
func (t *rangeTuner) report(std *stdio, rng kernels.ShapeRange, res ranges.Result) error {
	out, err := t.summary(rng, res)
	if err != nil {
		return err
	}
	if t.o.json {
		return writeJSON(std, out)
	}
	printRange(std.out, out)
	return nil
}

// summary is the range's summary as --json writes it.
func (t *rangeTuner) summary(rng kernels.ShapeRange, res ranges.Result) (rangeJSON, error) {
	median, worst := res.Regret()
	out := rangeJSON{
		Op: t.w.op.Name, Range: rng.String(), Lo: rng.Lo, Hi: rng.Hi, DType: string(t.w.dtype), Device: t.w.target.Name,
		Template: t.tmpl.Version, Toolchain: t.toolchain, Strategy: t.o.strategy, Seed: t.o.seed,
		Budget: t.o.trials, Trials: res.Spent, Interrupted: t.stopped,
		RegretMedian: finite(median), RegretMax: finite(worst),
		Buckets: []bucketJSON{}, HeldOut: []heldOutJSON{},
	}
	for _, b := range res.Buckets {
		bj := bucketJSON{Shape: b.Shape}
		r, ok, err := t.db.Best(t.task(b.Shape, 1).Workload())
		if err != nil {
			return rangeJSON{}, err
		}
		if ok {
			best := newBestConfig(r, t.tmpl, b.Shape, t.w.dtype)
			bj.Best = &best
		}
		out.Buckets = append(out.Buckets, bj)
	}
	for _, h := range res.HeldOut {
		out.HeldOut = append(out.HeldOut, heldOutJSON{Shape: h.Shape, Bucket: h.Nearest, Regret: finite(h.Regret)})
	}
	return out, nil
}

func printRange(w io.Writer, r rangeJSON) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "range\t%s %s %s on %s\n", r.Op, r.Range, r.DType, r.Device)
	fmt.Fprintf(tw, "buckets\t%d tuned shapes; a shape of the range runs the winner of the nearest\n", len(r.Buckets))
	for _, b := range r.Buckets {
		if b.Best == nil {
			fmt.Fprintf(tw, "\t  %s\tnone passed the check\n", kernels.FormatShape(b.Shape))
			continue
		}
		fmt.Fprintf(tw, "\t  %s\t%s\t%s\n", kernels.FormatShape(b.Shape), tunedb.FormatNS(b.Best.MedianNS), b.Best.Config)
	}
	fmt.Fprintf(tw, "held out\t%d shapes: the nearest bucket's winner against the best measured there\n", len(r.HeldOut))
	for _, h := range r.HeldOut {
		fmt.Fprintf(tw, "\t  %s\tbucket %s\t%s\n", kernels.FormatShape(h.Shape), kernels.FormatShape(h.Bucket), formatRegret(h.Regret))
	}
	fmt.Fprintf(tw, "regret\tmedian %s, max %s (at least: against the best of a short tune of each held-out shape and every bucket's winner there)\n",
		formatRegret(r.RegretMedian), formatRegret(r.RegretMax))
	state := ""
	if r.Interrupted {
		state = ", interrupted"
	}
	fmt.Fprintf(tw, "trials\t%d of %d%s\n", r.Trials, r.Budget, state)
	tw.Flush()
}

// formatRegret is "4.1%", or what a missing regret means.
func formatRegret(r *float64) string {
	if r == nil {
		return "infinite (the winner cannot run it) or none measured"
	}
	return fmt.Sprintf("%.1f%%", 100**r)
}
