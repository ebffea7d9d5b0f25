package ranges

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// fake is a tuner of one knob, tile, whose time at a shape is
// landscape(shape, tile); 0 means the tile cannot run the shape. Tune
// measures the tiles in order and keeps the fastest, as exhaustive as its
// trials allow; both count a measurement once per shape and tile, as
// records do.
type fake struct {
	space     *schedule.Space
	landscape func(shape []int, tile int) float64
	measured  map[string]bool
	tuned     [][]int
}

func newFake(landscape func([]int, int) float64) *fake {
	return &fake{space: schedule.NewSpace([]schedule.Knob{schedule.Choice("tile", 1, 2, 4, 8, 16, 32, 64)}), landscape: landscape, measured: map[string]bool{}}
}

func (f *fake) tile(c schedule.Config) int { return int(c.At(0).Int()) }

func (f *fake) time(shape []int, c schedule.Config) (float64, int) {
	k := fmt.Sprint(shape, c)
	spent := 0
	if !f.measured[k] {
		f.measured[k], spent = true, 1
	}
	return f.landscape(shape, f.tile(c)), spent
}

func (f *fake) Tune(ctx context.Context, shape []int, trials int) (schedule.Config, bool, int, error) {
	f.tuned = append(f.tuned, shape)
	var best schedule.Config
	bestT, spent := math.Inf(1), 0
	for i := range f.space.Size() {
		c := f.space.At(i)
		if spent == trials && !f.measured[fmt.Sprint(shape, c)] {
			continue
		}
		t, n := f.time(shape, c)
		spent += n
		if t > 0 && t < bestT {
			best, bestT = c, t
		}
	}
	return best, !math.IsInf(bestT, 1), spent, ctx.Err()
}

func (f *fake) Best(shape []int) (float64, error) {
	best := 0.0
	for i := range f.space.Size() {
		c := f.space.At(i)
		if t := f.landscape(shape, f.tile(c)); f.measured[fmt.Sprint(shape, c)] && t > 0 && (best == 0 || t < best) {
			best = t
		}
	}
	return best, nil
}

func (f *fake) Time(ctx context.Context, shape []int, cfgs []schedule.Config) ([]float64, int, error) {
	out := make([]float64, len(cfgs))
	spent := 0
	for i, c := range cfgs {
		t, n := f.time(shape, c)
		out[i], spent = t, spent+n
	}
	return out, spent, ctx.Err()
}

// sqrtTile is fastest near tile = sqrt(rows); a tile above the rows
// cannot run.
func sqrtTile(shape []int, tile int) float64 {
	if tile > shape[0] {
		return 0
	}
	return float64(shape[0])/float64(tile) + float64(tile)
}

func TestLadder(t *testing.T) {
	for _, tt := range []struct {
		lo, hi, levels int
		want           []int
	}{
		{1, 64, 9, []int{1, 2, 3, 5, 8, 13, 23, 38, 64}},
		{1, 4, 9, []int{1, 2, 3, 4}},
		{7, 7, 9, []int{7}},
		{100, 101, 2, []int{100, 101}},
	} {
		if got := Ladder(tt.lo, tt.hi, tt.levels); !slices.Equal(got, tt.want) {
			t.Errorf("Ladder(%d, %d, %d) = %v, want %v", tt.lo, tt.hi, tt.levels, got, tt.want)
		}
	}
	if got := FirstBuckets([]int{1, 64}, []int{64, 64}, 9); !slices.EqualFunc(got, [][]int{{1, 64}, {8, 64}, {64, 64}}, slices.Equal) {
		t.Errorf("firstBuckets = %v", got)
	}
	if got := len(Candidates([]int{1, 1}, []int{64, 4}, 9)); got != 9*4 {
		t.Errorf("%d candidates of 1..64x1..4, want 36", got)
	}
}

func TestTune(t *testing.T) {
	for _, trials := range []int{1, 10, 30, 60, 120, 400} {
		t.Run(fmt.Sprint(trials), func(t *testing.T) {
			f := newFake(sqrtTile)
			res, err := Tune(context.Background(), f, Options{Lo: []int{1, 64}, Hi: []int{1024, 64}, Trials: trials, PerShape: 8})
			if err != nil {
				t.Fatal(err)
			}
			if res.Spent > trials || res.Spent != len(f.measured) {
				t.Errorf("spent %d of %d trials; the fake counted %d", res.Spent, trials, len(f.measured))
			}
			if len(res.Buckets) == 0 || !slices.Equal(res.Buckets[0].Shape, []int{1, 64}) {
				t.Fatalf("buckets %v: the low end is tuned first", res.BucketShapes())
			}
			for _, h := range res.HeldOut {
				checkRegret(t, f, res, h.Shape, h.Regret)
			}
			if trials >= 120 {
				if _, worst := res.Regret(); worst > 0.02 && len(res.Buckets) < len(Candidates([]int{1, 64}, []int{1024, 64}, 9)) {
					t.Errorf("with %d trials the worst regret is %.3f over buckets %v", trials, worst, res.BucketShapes())
				}
			}
		})
	}
}

// checkRegret recomputes a held-out shape's regret from the landscape.
func checkRegret(t *testing.T, f *fake, res Result, h []int, got float64) {
	t.Helper()
	shapes := res.BucketShapes()
	best, _ := f.Best(h)
	want := math.Inf(1)
	if tt := f.landscape(h, f.tile(res.Buckets[tunedb.NearestShape(h, shapes)].Winner)); tt > 0 {
		want = tt/best - 1
	}
	if got != want && !(math.IsInf(got, 1) && math.IsInf(want, 1)) {
		t.Errorf("regret at %v = %v, want %v (buckets %v)", h, got, want, shapes)
	}
}

// twoRegimes: from 60 rows on, tile 64 is four times faster than any
// other; below, tile 32 is the fastest. A tile above the rows cannot run.
func twoRegimes(shape []int, tile int) float64 {
	switch rows := shape[0]; {
	case tile > rows:
		return 0
	case rows >= 60 && tile == 64:
		return 1
	case rows < 60 && tile == 32:
		return 2
	case rows < 60 && tile == 64:
		return 3
	}
	return 4
}

// At 76 rows the nearest bucket (32 rows) serves tile 32, four times
// slower than tile 64, which the 1024-row bucket found. A short tune of
// 76 rows (tiles 1 to 8) finds nothing faster than tile 32 there, so
// against it alone the regret reads 0 and no bucket is added; with every
// bucket's winner timed there it reads the true 300%, and 76 rows
// becomes a bucket.
func TestTuneRegretAgainstOtherBuckets(t *testing.T) {
	f := newFake(twoRegimes)
	res, err := Tune(context.Background(), f, Options{Lo: []int{1, 64}, Hi: []int{1024, 64}, Trials: 200, PerShape: 8, Probe: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.BucketShapes(), func(s []int) bool { return slices.Equal(s, []int{76, 64}) }) {
		t.Errorf("buckets %v, held out %+v: 76 rows, 300%% slower with the 32-row winner, is not a bucket", res.BucketShapes(), res.HeldOut)
	}
	for _, h := range res.HeldOut {
		truth := math.Inf(1)
		for _, tile := range []int{1, 2, 4, 8, 16, 32, 64} {
			if x := twoRegimes(h.Shape, tile); x > 0 {
				truth = min(truth, x)
			}
		}
		nearest := res.Buckets[tunedb.NearestShape(h.Shape, res.BucketShapes())]
		if want := twoRegimes(h.Shape, f.tile(nearest.Winner))/truth - 1; h.Regret != want {
			t.Errorf("regret at %v = %v, want the true %v", h.Shape, h.Regret, want)
		}
	}
}

// More trials buy more buckets and a regret no larger.
func TestTuneAddsBuckets(t *testing.T) {
	prev := math.Inf(1)
	prevBuckets := 0
	for _, trials := range []int{40, 80, 160} {
		res, err := Tune(context.Background(), newFake(sqrtTile), Options{Lo: []int{1, 64}, Hi: []int{4096, 64}, Trials: trials, PerShape: 7, Tolerance: 1e-9})
		if err != nil {
			t.Fatal(err)
		}
		_, worst := res.Regret()
		if len(res.Buckets) < prevBuckets || worst > prev {
			t.Errorf("%d trials: %d buckets, worst regret %.3f; fewer trials gave %d, %.3f", trials, len(res.Buckets), worst, prevBuckets, prev)
		}
		prev, prevBuckets = worst, len(res.Buckets)
	}
	if prevBuckets <= 3 {
		t.Errorf("160 trials added no bucket to the first 3")
	}
}

// A winner that cannot run a held-out shape has infinite regret there,
// and such a shape becomes a bucket first.
func TestTuneRefusedWinner(t *testing.T) {
	// Tiles of 16 and more run only shapes of at least 64 rows, and are
	// fastest there: the winner at 64 cannot serve 38.
	landscape := func(shape []int, tile int) float64 {
		if tile >= 16 && shape[0] < 64 {
			return 0
		}
		return 100 / float64(tile)
	}
	f := newFake(landscape)
	res, err := Tune(context.Background(), f, Options{Lo: []int{1}, Hi: []int{64}, Trials: 80, PerShape: 7})
	if err != nil {
		t.Fatal(err)
	}
	// 23 and 38 are both nearer 64 than 8; 23, farther from a bucket,
	// is measured first.
	if !slices.ContainsFunc(res.Buckets, func(b Bucket) bool { return slices.Equal(b.Shape, []int{23}) }) {
		t.Errorf("buckets %v: 23, which the winner of 64 cannot run, was not added", res.BucketShapes())
	}
}

func TestTuneCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Tune(ctx, newFake(sqrtTile), Options{Lo: []int{1}, Hi: []int{64}, Trials: 100})
	if err == nil || len(res.Buckets) != 1 {
		t.Errorf("cancelled: %v, buckets %v; want the context's error after the first", err, res.BucketShapes())
	}
}

// A tune given buckets tuned already (a tasks run's) does not tune them
// again: it measures regrets at once, and adds buckets within its trials.
func TestTuneFromTuned(t *testing.T) {
	f := newFake(sqrtTile)
	lo, hi := []int{1, 64}, []int{4096, 64}
	var tuned []Bucket
	for _, s := range FirstBuckets(lo, hi, DefaultLevels) {
		cfg, ok, _, _ := f.Tune(context.Background(), s, 7)
		tuned = append(tuned, Bucket{Shape: s, Winner: cfg, OK: ok})
	}
	f.tuned = nil
	before := len(f.measured)
	res, err := Tune(context.Background(), f, Options{Lo: lo, Hi: hi, Trials: 100, PerShape: 7, Tolerance: 1e-9, Tuned: tuned})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.tuned {
		if slices.ContainsFunc(tuned, func(b Bucket) bool { return slices.Equal(b.Shape, s) }) {
			t.Errorf("bucket %v, tuned already, was tuned again", s)
		}
	}
	if len(res.HeldOut) == 0 || len(res.Buckets) <= len(tuned) {
		t.Errorf("held out %v, buckets %v: no regret measured or no bucket added", res.HeldOut, res.BucketShapes())
	}
	if res.Spent > 100 || res.Spent != len(f.measured)-before {
		t.Errorf("spent %d of 100; the fake counted %d", res.Spent, len(f.measured)-before)
	}
	for _, h := range res.HeldOut {
		checkRegret(t, f, res, h.Shape, h.Regret)
	}
}

// A range whose ladder holds only multiples of the vector width still has
// a shape of a vector tail measured among its held-out shapes.
func TestTuneMeasuresATail(t *testing.T) {
	lo, hi := []int{16}, []int{256}
	if c := Candidates(lo, hi, 5); slices.ContainsFunc(c, hasTail) {
		t.Fatalf("candidates %v: the test needs a ladder without tails", c)
	}
	for _, maxHeld := range []int{1, 8} {
		res, err := Tune(context.Background(), newFake(sqrtTile), Options{Lo: lo, Hi: hi, Levels: 5, Trials: 60, PerShape: 7, MaxHeldOut: maxHeld})
		if err != nil {
			t.Fatal(err)
		}
		tail := slices.ContainsFunc(res.HeldOut, func(h tunedb.HeldOut) bool { return hasTail(h.Shape) }) ||
			slices.ContainsFunc(res.Buckets, func(b Bucket) bool { return hasTail(b.Shape) })
		if !tail {
			t.Errorf("%d held out: held-out shapes %v, buckets %v: no shape of a vector tail measured", maxHeld, res.HeldOut, res.BucketShapes())
		}
	}
	// The middle candidate, its first ranged extent one less.
	if got := withTail([][]int{{16, 32}, {32, 32}, {64, 32}}, []int{16, 32}, []int{64, 32}); len(got) != 4 || !slices.Equal(got[3], []int{31, 32}) {
		t.Errorf("withTail = %v, want 31x32 added", got)
	}
}
