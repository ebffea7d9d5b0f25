package ranges

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Tuner tunes and times the shapes of a range, storing every measurement.
type Tuner interface {
	// Tune tunes shape with at most trials new measurements, resuming
	// from its records, and returns its winner (ok false when no config
	// passed) and the measurements it spent.
	Tune(ctx context.Context, shape []int, trials int) (winner schedule.Config, ok bool, spent int, err error)
	// Time returns the median of each config at shape, in ns, measuring
	// the configs that have no record there yet, and the measurements it
	// spent. A config that shape's space refuses, or that failed there,
	// has 0.
	Time(ctx context.Context, shape []int, cfgs []schedule.Config) (medians []float64, spent int, err error)
	// Best returns the fastest median measured at shape, 0 when none.
	Best(shape []int) (float64, error)
}

// Options are a range tune's range and budget.
type Options struct {
	Lo, Hi []int // the range's corners, ends included
	Trials int   // measurements of the whole tune, timings included; may be 0 with Tuned
	// PerShape is the trials each bucket is tuned with; 0 means Trials
	// shared among the first buckets and two more.
	PerShape int
	// Levels is the points of each ranged extent's ladder; 0 means
	// DefaultLevels.
	Levels int
	// Probe is the trials of the short tune of each held-out shape,
	// whose best (or a bucket's winner's, where faster) is what the
	// nearest bucket's winner is measured against there; 0 means half of
	// PerShape, from MinProbe to MaxProbe.
	Probe int
	// Tolerance is the regret below which no bucket is added; 0 means 0.02.
	Tolerance float64
	// MaxHeldOut bounds the held-out shapes measured, farthest from the
	// buckets first; 0 means 8.
	MaxHeldOut int
	// Tuned are buckets tuned already, by another run (a tasks file's
	// scheduler tunes a range's first buckets among its other tasks): the
	// tune starts from them, measuring regrets at once, rather than
	// tuning the first buckets. Their trials are not in Trials.
	Tuned []Bucket
}

// MinProbe and MaxProbe bound the trials of a held-out shape's short tune
// when Options.Probe does not say. Below 12, replayed on a recorded range
// (docs/benchmarks.md), the short tune rarely gets past the winners it
// starts from and the regret reads near 0 where the true one is 2.6%;
// above, it takes the budget that more buckets need.
const (
	MinProbe = 4
	MaxProbe = 12
)

// DefaultLevels is the points of a ranged extent's ladder when
// Options.Levels does not say.
const DefaultLevels = 9

func (o *Options) defaults() {
	if o.Levels < 2 {
		o.Levels = DefaultLevels
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.02
	}
	if o.MaxHeldOut <= 0 {
		o.MaxHeldOut = 8
	}
}

// A Bucket is a tuned shape of the range and its winner.
type Bucket struct {
	Shape  []int
	Winner schedule.Config
	OK     bool // a config passed; Winner is meaningful
}

// Result is what a range tune found.
type Result struct {
	Buckets []Bucket         // sorted by shape
	HeldOut []tunedb.HeldOut // the regret of each held-out shape measured, in ladder order
	Spent   int              // measurements spent
}

// Regret returns the median and the largest regret over the held-out
// shapes (NaN when none was measured).
func (r Result) Regret() (median, worst float64) { return tunedb.Regret(r.HeldOut) }

// BucketShapes returns the shapes of r's buckets.
func (r Result) BucketShapes() [][]int {
	out := make([][]int, len(r.Buckets))
	for i, b := range r.Buckets {
		out[i] = b.Shape
	}
	return out
}

// Tune tunes the range of o within its budget (see the package doc). On
// cancellation it returns what it found so far with the context's error.
func Tune(ctx context.Context, t Tuner, o Options) (Result, error) {
	o.defaults()
	if len(o.Lo) != len(o.Hi) || len(o.Lo) == 0 {
		return Result{}, errors.New("ranges: the corners differ in rank")
	}
	if o.Trials < 1 && len(o.Tuned) == 0 || o.Trials < 0 {
		return Result{}, errors.New("ranges: the trial budget must be at least 1")
	}
	cands := withTail(Candidates(o.Lo, o.Hi, o.Levels), o.Lo, o.Hi)
	first := FirstBuckets(o.Lo, o.Hi, o.Levels)
	if o.PerShape <= 0 {
		o.PerShape = max(1, o.Trials/(len(first)+2))
	}
	if o.Probe <= 0 {
		o.Probe = min(max(MinProbe, o.PerShape/2), MaxProbe)
	}
	r := &run{t: t, o: o, probed: map[string]bool{}, buckets: slices.Clone(o.Tuned)}
	if len(r.buckets) == 0 {
		for _, s := range first {
			if err := r.tune(ctx, s); err != nil || r.left() == 0 {
				return r.result(), err
			}
		}
	}
	for {
		worst, err := r.measure(ctx, cands)
		// A new bucket must leave enough to measure the regrets again:
		// its winner at each held-out shape.
		if err != nil || worst == nil || r.left() < o.PerShape+o.MaxHeldOut || r.held[0].Regret <= o.Tolerance {
			return r.result(), err
		}
		if err := r.tune(ctx, worst); err != nil {
			return r.result(), err
		}
	}
}

// run is the state of one range tune.
type run struct {
	t       Tuner
	o       Options
	buckets []Bucket
	held    []tunedb.HeldOut // of the last measure, largest regret first
	probed  map[string]bool  // held-out shapes given their short tune, by key
	spent   int
}

func (r *run) left() int { return max(0, r.o.Trials-r.spent) }

// tune makes shape a bucket.
func (r *run) tune(ctx context.Context, shape []int) error {
	cfg, ok, spent, err := r.t.Tune(ctx, shape, max(1, min(r.o.PerShape, r.left())))
	r.spent += spent
	r.buckets = append(r.buckets, Bucket{Shape: shape, Winner: cfg, OK: ok})
	return err
}

// measure measures the regret of up to MaxHeldOut candidates that are not
// buckets, farthest from the buckets first but one of a vector tail
// (hasTail) among them, while the budget lasts, and returns the one of
// the largest regret (nil when none was measured).
func (r *run) measure(ctx context.Context, cands [][]int) ([]int, error) {
	shapes := r.bucketShapes()
	var held [][]int
	for _, c := range cands {
		if !slices.ContainsFunc(shapes, func(s []int) bool { return slices.Equal(s, c) }) {
			held = append(held, c)
		}
	}
	dist := func(c []int) float64 { return tunedb.ShapeDistance(c, shapes[tunedb.NearestShape(c, shapes)]) }
	sort.SliceStable(held, func(i, j int) bool { return dist(held[i]) > dist(held[j]) })
	// A shape of a vector tail is always among those measured, when
	// there is one: the farthest takes the last place.
	if n := min(len(held), r.o.MaxHeldOut); n > 0 && !slices.ContainsFunc(held[:n], hasTail) {
		if i := slices.IndexFunc(held, hasTail); i >= 0 {
			held[n-1] = held[i]
		}
	}
	held = held[:min(len(held), r.o.MaxHeldOut)]
	r.held = r.held[:0]
	for _, h := range held {
		if r.left() == 0 {
			break
		}
		ho, ok, err := r.regret(ctx, h)
		if err != nil {
			return nil, err
		}
		if ok {
			r.held = append(r.held, ho)
		}
	}
	if len(r.held) == 0 {
		return nil, nil
	}
	sort.SliceStable(r.held, func(i, j int) bool { return r.held[i].Regret > r.held[j].Regret })
	return r.held[0].Shape, nil
}

// regret measures the regret at h: the winner of its nearest bucket
// timed there, against the fastest config measured there, after a short
// tune of h (Probe trials, once per shape) and a timing there of every
// other bucket's winner. A short tune alone rarely beats the winner it
// starts from, so against it alone the regret reads near 0 where the
// shape's best is well ahead; the other buckets' winners are contenders
// tuned in full, and each costs one measurement a shape. ok is false when
// nothing ran at h, or the budget ran out first.
func (r *run) regret(ctx context.Context, h []int) (tunedb.HeldOut, bool, error) {
	nearest := r.buckets[tunedb.NearestShape(h, r.bucketShapes())]
	cfgs := r.winners(nearest)
	need := len(cfgs)
	if !r.probed[key(h)] {
		need += r.o.Probe
	}
	if !nearest.OK || need > r.left() {
		return tunedb.HeldOut{}, false, nil
	}
	if !r.probed[key(h)] {
		_, _, spent, err := r.t.Tune(ctx, h, r.o.Probe)
		r.spent += spent
		if err != nil {
			return tunedb.HeldOut{}, false, err
		}
		r.probed[key(h)] = true
	}
	ns, spent, err := r.t.Time(ctx, h, cfgs)
	r.spent += spent
	if err != nil {
		return tunedb.HeldOut{}, false, err
	}
	best, err := r.t.Best(h)
	if err != nil || best <= 0 {
		return tunedb.HeldOut{}, false, err
	}
	ho := tunedb.HeldOut{Shape: h, Nearest: nearest.Shape, Regret: math.Inf(1)}
	if ns[0] > 0 {
		ho.Regret = max(0, ns[0]/best-1)
	}
	return ho, true, nil
}

// winners returns the winner of nearest, then those of the other buckets
// that passed, each config once.
func (r *run) winners(nearest Bucket) []schedule.Config {
	out := []schedule.Config{nearest.Winner}
	for _, b := range r.buckets {
		if b.OK && !slices.ContainsFunc(out, func(c schedule.Config) bool { return c.Equal(b.Winner) }) {
			out = append(out, b.Winner)
		}
	}
	return out
}

func key(shape []int) string { return fmt.Sprint(shape) }

func (r *run) bucketShapes() [][]int {
	out := make([][]int, len(r.buckets))
	for i, b := range r.buckets {
		out[i] = b.Shape
	}
	return out
}

// result is the run's Result: buckets by shape, held-out shapes by shape.
func (r *run) result() Result {
	res := Result{Buckets: slices.Clone(r.buckets), HeldOut: slices.Clone(r.held), Spent: r.spent}
	slices.SortFunc(res.Buckets, func(a, b Bucket) int { return slices.Compare(a.Shape, b.Shape) })
	slices.SortFunc(res.HeldOut, func(a, b tunedb.HeldOut) int { return slices.Compare(a.Shape, b.Shape) })
	return res
}
