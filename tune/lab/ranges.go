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

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/ranges"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// DefaultAlone is the trials of a tune of one shape alone, the cost a
// range tune is measured against, when RangeReplay.Alone does not say.
const DefaultAlone = 64

// RangeReplay replays a range tune (package ranges, what autotune tune
// runs for --shape lo..hi) on a range landscape: full landscapes of one op
// at several shapes of one range, recorded on one device with one template
// version. The range is the recorded shapes' bounding box; every shape of
// its ladder must be recorded, and the others are held out from the tune
// entirely. Each seed runs ranges.Tune once, its shapes tuned and timed by
// the tuner's own loop (tune.Run, tune.TimeConfigs) on the recordings, all
// in one in-memory database, as a real range tune shares one.
//
// Each recorded shape that did not become a bucket is then dispatched to
// a bucket as gen dispatches it (tunedb.NearestShape), and its regret is
// that bucket's recorded winner there against the best recorded there
// (the best of tuning it alone with every trial), and against the best a
// tune of that shape alone finds in Alone trials with the same search and
// seed (clamped at 0 where the bucket's winner is faster). The trial
// fraction is what the range tune spent over Alone trials for each of
// those shapes.
type RangeReplay struct {
	Template   kernels.Template // today's template of the op; the recordings' revision is found by their version
	Recordings []Recording
	Method     Method
	Seeds      int // runs with seeds 1..Seeds; at least 1
	// Trials is the range tune's budget, its timings included; 0 means a
	// quarter of Alone trials for each recorded shape that is not one of
	// the range's first buckets (ranges.FirstBuckets).
	Trials    int
	Alone     int // trials of a tune of one shape alone; 0 means DefaultAlone
	Levels    int // points of each ranged extent's ladder; 0 means ranges.DefaultLevels
	BatchSize int // 0 means 16
	Parallel  int // runs side by side; 0 means GOMAXPROCS; changes no figure
	// Progress, when set, hears about every run, in seed order.
	Progress func(RangeRun)

	// dispatch picks the bucket that serves a shape; nil means
	// tunedb.NearestShape, the rule gen follows. The tests plant a wrong
	// one to see the regret rise.
	dispatch func(shape []int, buckets [][]int) int
}

// RangeHeldOut is the regret of dispatch at one recorded shape that is
// not a bucket. A regret is +Inf when the bucket's winner cannot run the
// shape (its space refuses it there) or failed there.
type RangeHeldOut struct {
	Shape  []int
	Bucket []int
	Regret float64 // against the best recorded at Shape
	// RegretAlone is against the best of a tune of Shape alone within
	// RangeReplay.Alone trials, at least 0.
	RegretAlone float64
}

// RangeRun is one seed's range tune.
type RangeRun struct {
	Seed    uint64
	Spent   int     // trials the range tune spent, timings included
	Buckets [][]int // sorted
	HeldOut []RangeHeldOut
	// Median and Worst are over HeldOut, against the best recorded;
	// MedianAlone and WorstAlone against the tunes alone.
	Median, Worst           float64
	MedianAlone, WorstAlone float64
	// Tuner is the median regret the range tune reported itself, over the
	// shapes of its ladder it measured (ranges.Result.Regret: against the
	// best it measured at each), NaN when it measured none.
	Tuner float64
	// TunerTrue is the median true regret at the shapes Tuner is over,
	// served by the same buckets (the median of Estimates' True).
	TunerTrue float64
	// Estimates are the range tune's own regrets beside the true ones at
	// the same shapes, served by the same buckets.
	Estimates []RangeEstimate
	// Fraction is Spent over Alone trials for each shape of HeldOut.
	Fraction float64
}

// RangeEstimate is the regret the range tune estimated at a shape it
// held out (a tunedb.HeldOut of its result) and the true regret there:
// the same bucket's recorded winner against the best recorded. Either is
// +Inf where the winner cannot run the shape.
type RangeEstimate struct {
	Shape          []int
	Estimate, True float64
}

// RangeReport sums the runs up over the seeds.
type RangeReport struct {
	Workload tunedb.Workload // of the range's low corner
	Lo, Hi   []int
	Shapes   [][]int // recorded, sorted
	Trials   int
	Alone    int
	Runs     []RangeRun
	// Median is the median over the runs of each run's median regret
	// against the best recorded, Worst the largest regret of any run;
	// MedianAlone and WorstAlone the same against the tunes alone.
	Median, Worst           float64
	MedianAlone, WorstAlone float64
	Fraction                float64 // median over the runs
	// Tuner and TunerTrue are the medians over the runs of theirs;
	// TunerCorr is the Pearson correlation of every run's Estimates with
	// the true regrets, NaN when either is constant, pairs with an
	// infinite regret left out.
	Tuner, TunerTrue, TunerCorr float64
}

// rangeEnv is what every run of a RangeReplay shares: per recorded shape,
// its space and its replay.
type rangeEnv struct {
	tmpl   kernels.Template
	target device.Target
	shapes [][]int
	spaces map[string]*schedule.Space
	replay map[string]*sim.Measurer
	best   map[string]float64
}

// ReplayRange runs r (see RangeReplay). Runs are deterministic: the same
// replay gives the same report.
func ReplayRange(ctx context.Context, r RangeReplay) (RangeReport, error) {
	switch {
	case r.Seeds < 1:
		return RangeReport{}, errors.New("lab: a range replay needs at least one seed")
	case r.Trials < 0:
		return RangeReport{}, errors.New("lab: the range tune's budget must not be negative")
	case r.Alone < 0:
		return RangeReport{}, errors.New("lab: the trials of a tune alone must not be negative")
	}
	r.Alone = cmp.Or(r.Alone, DefaultAlone)
	r.Levels = cmp.Or(r.Levels, ranges.DefaultLevels)
	r.BatchSize = cmp.Or(r.BatchSize, 16)
	if r.dispatch == nil {
		r.dispatch = tunedb.NearestShape
	}
	env, err := newRangeEnv(r.Template, r.Recordings)
	if err != nil {
		return RangeReport{}, err
	}
	lo, hi := bounds(env.shapes)
	for _, c := range ranges.Candidates(lo, hi, r.Levels) {
		if env.replay[key(c)] == nil {
			return RangeReport{}, fmt.Errorf("lab: the range %s needs a landscape of every shape of its ladder of %d levels: %s is not recorded",
				kernels.ShapeRange{Lo: lo, Hi: hi}, r.Levels, kernels.FormatShape(c))
		}
	}
	if r.Trials == 0 {
		r.Trials = max(1, (len(env.shapes)-len(ranges.FirstBuckets(lo, hi, r.Levels)))*r.Alone/4)
	}
	runs := make([]RangeRun, r.Seeds)
	err = forSeeds(ctx, r.Seeds, r.Parallel, func(ctx context.Context, i int) error {
		run, err := r.run(ctx, env, lo, hi, uint64(i+1))
		runs[i] = run
		return err
	}, func(i int) {
		if r.Progress != nil {
			r.Progress(runs[i])
		}
	})
	if err != nil {
		return RangeReport{}, err
	}
	rep := RangeReport{
		Workload: tune.Workload(env.tmpl, lo, env.target), Lo: lo, Hi: hi, Shapes: env.shapes,
		Trials: r.Trials, Alone: r.Alone, Runs: runs,
		Median:      median(runs, func(r RangeRun) float64 { return r.Median }),
		Worst:       maxOf(runs, func(r RangeRun) float64 { return r.Worst }),
		MedianAlone: median(runs, func(r RangeRun) float64 { return r.MedianAlone }),
		WorstAlone:  maxOf(runs, func(r RangeRun) float64 { return r.WorstAlone }),
		Fraction:    median(runs, func(r RangeRun) float64 { return r.Fraction }),
	}
	rep.Tuner = median(runs, func(r RangeRun) float64 { return r.Tuner })
	rep.TunerTrue = median(runs, func(r RangeRun) float64 { return r.TunerTrue })
	rep.TunerCorr = estimateCorr(runs)
	return rep, nil
}

// newRangeEnv checks that recs are of one op, device, template version and
// rank, at distinct shapes, and prepares their replays.
func newRangeEnv(tmpl kernels.Template, recs []Recording) (*rangeEnv, error) {
	if len(recs) < 2 {
		return nil, errors.New("lab: a range landscape needs recordings of at least two shapes")
	}
	first := recs[0].Workload
	rev, err := recs[0].revision(tmpl)
	if err != nil {
		return nil, err
	}
	env := &rangeEnv{tmpl: rev, target: recs[0].Target, spaces: map[string]*schedule.Space{},
		replay: map[string]*sim.Measurer{}, best: map[string]float64{}}
	for _, rec := range recs {
		w := rec.Workload
		switch {
		case w.Op != first.Op || w.Device != first.Device || w.Template != first.Template || w.DType != first.DType:
			return nil, fmt.Errorf("lab: a range landscape is of one op, device, dtype and template version: %s and %s differ", first.Key(), w.Key())
		case len(w.Shape) != len(first.Shape):
			return nil, fmt.Errorf("lab: shapes %s and %s of a range landscape differ in rank", first.ShapeString(), w.ShapeString())
		case env.replay[key(w.Shape)] != nil:
			return nil, fmt.Errorf("lab: shape %s is recorded twice", w.ShapeString())
		}
		// The space the tuner searches (convert pinned for f32), as the
		// recording grid tune searched it; the model's features follow it.
		space := rev.SearchSpace(w.Shape, tune.DType, rec.Target)
		results, _ := replayable(space, rec.Records)
		m := sim.New(results)
		best, ok := m.Best()
		if !ok {
			return nil, fmt.Errorf("lab: no record of %s passed the check", w.Key())
		}
		env.shapes = append(env.shapes, w.Shape)
		env.spaces[key(w.Shape)], env.replay[key(w.Shape)], env.best[key(w.Shape)] = space, m, best.MedianNS
	}
	slices.SortFunc(env.shapes, slices.Compare)
	return env, nil
}

// bounds returns the corners of the smallest range holding shapes.
func bounds(shapes [][]int) (lo, hi []int) {
	lo, hi = slices.Clone(shapes[0]), slices.Clone(shapes[0])
	for _, s := range shapes[1:] {
		for d, n := range s {
			lo[d], hi[d] = min(lo[d], n), max(hi[d], n)
		}
	}
	return lo, hi
}

// run replays the range tune of one seed and measures its dispatch.
func (r RangeReplay) run(ctx context.Context, env *rangeEnv, lo, hi []int, seed uint64) (RangeRun, error) {
	t := &rangeTuner{env: env, db: tunedb.NewMemory(), method: r.Method, seed: seed, batch: r.BatchSize}
	res, err := ranges.Tune(ctx, t, ranges.Options{Lo: lo, Hi: hi, Trials: r.Trials, Levels: r.Levels})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return RangeRun{}, err
	}
	run := RangeRun{Seed: seed, Spent: res.Spent}
	run.Tuner, _ = res.Regret()
	var buckets []ranges.Bucket
	for _, b := range res.Buckets {
		if b.OK {
			buckets = append(buckets, b)
			run.Buckets = append(run.Buckets, b.Shape)
		}
	}
	if len(buckets) == 0 {
		return RangeRun{}, fmt.Errorf("lab: seed %d: no bucket of the range has a winner", seed)
	}
	for _, h := range res.HeldOut {
		b := buckets[slices.IndexFunc(buckets, func(b ranges.Bucket) bool { return slices.Equal(b.Shape, h.Nearest) })]
		run.Estimates = append(run.Estimates, RangeEstimate{Shape: h.Shape, Estimate: h.Regret, True: env.median(h.Shape, b.Winner)/env.best[key(h.Shape)] - 1})
	}
	run.TunerTrue = median(run.Estimates, func(e RangeEstimate) float64 { return e.True })
	for _, s := range env.shapes {
		if slices.ContainsFunc(run.Buckets, func(b []int) bool { return slices.Equal(b, s) }) {
			continue
		}
		b := buckets[r.dispatch(s, run.Buckets)]
		ns := env.median(s, b.Winner)
		alone, err := r.alone(ctx, env, s, seed)
		if err != nil {
			return RangeRun{}, err
		}
		run.HeldOut = append(run.HeldOut, RangeHeldOut{
			Shape: s, Bucket: b.Shape,
			Regret: ns/env.best[key(s)] - 1, RegretAlone: max(0, ns/alone-1),
		})
	}
	hs := make([]tunedb.HeldOut, len(run.HeldOut))
	for i, h := range run.HeldOut {
		hs[i] = tunedb.HeldOut{Regret: h.Regret}
	}
	run.Median, run.Worst = tunedb.Regret(hs)
	for i, h := range run.HeldOut {
		hs[i].Regret = h.RegretAlone
	}
	run.MedianAlone, run.WorstAlone = tunedb.Regret(hs)
	if len(run.HeldOut) > 0 {
		run.Fraction = float64(run.Spent) / float64(len(run.HeldOut)*r.Alone)
	}
	return run, nil
}

// alone returns the best median a tune of shape alone finds in r.Alone
// trials, from an empty database, with the run's search and seed.
func (r RangeReplay) alone(ctx context.Context, env *rangeEnv, shape []int, seed uint64) (float64, error) {
	t := &rangeTuner{env: env, db: tunedb.NewMemory(), method: r.Method, seed: seed, batch: r.BatchSize}
	_, ok, _, err := t.Tune(ctx, shape, r.Alone)
	if err == nil && !ok {
		err = fmt.Errorf("lab: no config passed in a tune of %s alone", kernels.FormatShape(shape))
	}
	if err != nil {
		return 0, err
	}
	return t.Best(shape)
}

// median returns the recorded median of cfg at shape, +Inf when shape's
// space refuses cfg or it failed there.
func (e *rangeEnv) median(shape []int, cfg schedule.Config) float64 {
	space := e.spaces[key(shape)]
	c, err := space.Canonical(cfg)
	if err != nil || space.Check(c) != nil {
		return math.Inf(1)
	}
	res, ok := e.replay[key(shape)].Lookup(c)
	if !ok || res.Status != measure.StatusOK {
		return math.Inf(1)
	}
	return res.MedianNS
}

// rangeTuner is ranges.Tuner on recorded landscapes: as autotune tune's,
// it tunes each shape with tune.Run and times configs with
// tune.TimeMedians, into one database, measuring with the shape's replay.
type rangeTuner struct {
	env    *rangeEnv
	db     *tunedb.Memory
	method Method
	seed   uint64
	batch  int
}

var _ ranges.Tuner = (*rangeTuner)(nil)

func (t *rangeTuner) task(shape []int, trials int) (tune.Task, error) {
	m := t.env.replay[key(shape)]
	if m == nil {
		return tune.Task{}, fmt.Errorf("lab: the range tune asked for %s, which is not recorded", kernels.FormatShape(shape))
	}
	return tune.Task{
		Template: t.env.tmpl, Shape: shape, Target: t.env.target, Space: t.env.spaces[key(shape)],
		Measurer: m, Store: t.db, Strategy: t.method.Strategy, Model: t.method.Model,
		Seed: t.seed, Trials: trials, BatchSize: t.batch, Tool: "simulate",
	}, nil
}

func (t *rangeTuner) Tune(ctx context.Context, shape []int, trials int) (schedule.Config, bool, int, error) {
	task, err := t.task(shape, trials)
	if err != nil {
		return schedule.Config{}, false, 0, err
	}
	s, err := tune.Run(ctx, task)
	if err == nil && s.Interrupted {
		err = ctx.Err()
	}
	if s.Best == nil {
		return schedule.Config{}, false, s.Trials, err
	}
	return s.Best.Config, true, s.Trials, err
}

func (t *rangeTuner) Time(ctx context.Context, shape []int, cfgs []schedule.Config) ([]float64, int, error) {
	task, err := t.task(shape, 1)
	if err != nil {
		return nil, 0, err
	}
	return tune.TimeMedians(ctx, task, cfgs)
}

func (t *rangeTuner) Best(shape []int) (float64, error) {
	task, err := t.task(shape, 1)
	if err != nil {
		return 0, err
	}
	r, ok, err := t.db.Best(task.Workload())
	if err != nil || !ok {
		return 0, err
	}
	return r.MedianNS, nil
}

func key(shape []int) string { return kernels.FormatShape(shape) }

// forSeeds calls run(i) for i in 0..seeds-1, up to parallel (0:
// GOMAXPROCS) at a time, then done(i) in order for those that succeeded,
// until one fails; it returns the first error, the context's included.
func forSeeds(parent context.Context, seeds, parallel int, run func(context.Context, int) error, done func(int)) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	errs := make([]error, seeds)
	finished := make([]chan struct{}, seeds)
	next := make(chan int, seeds)
	for i := range seeds {
		finished[i] = make(chan struct{})
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range min(cmp.Or(parallel, runtime.GOMAXPROCS(0)), seeds) {
		wg.Go(func() {
			for i := range next {
				if errs[i] = run(ctx, i); errs[i] != nil {
					cancel()
				}
				close(finished[i])
			}
		})
	}
	for i := range seeds {
		<-finished[i]
		if errs[i] != nil {
			break
		}
		done(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range append([]error{parent.Err()}, errs...) {
		if err != nil {
			return err
		}
	}
	return nil
}

// estimateCorr returns the correlation of every run's estimates with the
// true regrets, over the finite pairs.
func estimateCorr(runs []RangeRun) float64 {
	var est, tru []float64
	for _, r := range runs {
		for _, e := range r.Estimates {
			if !math.IsInf(e.Estimate, 0) && !math.IsInf(e.True, 0) {
				est, tru = append(est, e.Estimate), append(tru, e.True)
			}
		}
	}
	return pearson(est, tru)
}

// pearson is the correlation of x and y, NaN when either is constant.
func pearson(x, y []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx, my = mx+x[i]/n, my+y[i]/n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// maxOf is the largest of f over runs.
func maxOf(runs []RangeRun, f func(RangeRun) float64) float64 {
	worst := math.NaN()
	for _, r := range runs {
		if x := f(r); !math.IsNaN(x) && !(x <= worst) {
			worst = x
		}
	}
	return worst
}

// RangeRecordings picks from recs a recording (FindRecording) of each
// shape of tmpl's op that they hold, in f32, sorted by shape: a range
// landscape for RangeReplay. fingerprint is FindRecording's.
func RangeRecordings(recs []tunedb.Record, tmpl kernels.Template, fingerprint string) ([]Recording, error) {
	var shapes [][]int
	for _, r := range recs {
		w := r.Workload
		if w.Op == tmpl.Op.Name && w.DType == tune.DType && !slices.ContainsFunc(shapes, func(s []int) bool { return slices.Equal(s, w.Shape) }) {
			shapes = append(shapes, w.Shape)
		}
	}
	if len(shapes) == 0 {
		return nil, fmt.Errorf("lab: no records of %s in %s", tmpl.Op.Name, tune.DType)
	}
	slices.SortFunc(shapes, slices.Compare)
	out := make([]Recording, len(shapes))
	for i, s := range shapes {
		rec, err := FindRecording(recs, tmpl, s, fingerprint)
		if err != nil {
			return nil, err
		}
		out[i] = rec
	}
	return out, nil
}
