package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

// rangeDir is the range landscape the tests replay: softmax at 12 row
// counts from 1 to 4096, of 1024 columns (testdata/README.md).
const rangeDir = "testdata/ranges/softmax-rows-x1024-epyc"

// rangeLandscape reads every recording of rangeDir.
func rangeLandscape(t testing.TB) []Recording {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rangeDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no landscape (%v)", rangeDir, err)
	}
	var recs []tunedb.Record
	for _, f := range files {
		recs = append(recs, readRecords(t, f)...)
	}
	out, err := RangeRecordings(recs, softmax.Template, "")
	if err != nil {
		t.Fatalf("%v (record it again: testdata/README.md)", err)
	}
	return out
}

// replayText is a run's figures as text, NaN and all, for comparing runs.
func replayText(r RangeReport) string {
	var b strings.Builder
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "%+v\n", run)
	}
	return b.String()
}

// TestReplayRange holds the range replay to its invariants on the
// recorded range landscape: the same seed gives the same runs, no regret
// is negative, the tuner's own regret is not above the true one, the
// trial fraction is what was spent over the tunes alone,
// and dispatching each shape to the wrong bucket costs more.
func TestReplayRange(t *testing.T) {
	ctx := context.Background()
	replay := RangeReplay{
		Template: softmax.Template, Recordings: rangeLandscape(t),
		Method: Method{Strategy: "analytic", Model: "gbt"}, Seeds: 2, Trials: 128, Alone: 16,
	}
	a, err := ReplayRange(ctx, replay)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReplayRange(ctx, replay)
	if err != nil {
		t.Fatal(err)
	}
	if replayText(a) != replayText(b) {
		t.Errorf("two replays of the same seeds differ:\n%s\n%s", replayText(a), replayText(b))
	}
	if len(a.Runs) != replay.Seeds || a.Lo[0] != 1 || a.Hi[0] != 4096 {
		t.Fatalf("%d runs of %v..%v, want %d of 1..4096", len(a.Runs), a.Lo, a.Hi, replay.Seeds)
	}
	planted := replay
	// The farthest bucket: each shape is served by the winner of the
	// other end of the range.
	planted.dispatch = func(shape []int, buckets [][]int) int {
		far := 0
		for i, b := range buckets {
			if tunedb.ShapeDistance(shape, b) > tunedb.ShapeDistance(shape, buckets[far]) {
				far = i
			}
		}
		return far
	}
	p, err := ReplayRange(ctx, planted)
	if err != nil {
		t.Fatal(err)
	}
	for i, run := range a.Runs {
		if len(run.Buckets) < 2 || len(run.HeldOut) == 0 {
			t.Fatalf("seed %d: %d buckets, %d held-out shapes: nothing to dispatch", run.Seed, len(run.Buckets), len(run.HeldOut))
		}
		if run.Spent > replay.Trials {
			t.Errorf("seed %d spent %d trials of %d", run.Seed, run.Spent, replay.Trials)
		}
		if want := float64(run.Spent) / float64(len(run.HeldOut)*replay.Alone); run.Fraction != want {
			t.Errorf("seed %d: fraction %v, want %v", run.Seed, run.Fraction, want)
		}
		// The tuner's own regret is against the best it measured, which
		// the best recorded is at least as fast as, and the replay times
		// the winner as recorded: never above the true regret.
		if len(run.Estimates) == 0 {
			t.Errorf("seed %d: the range tune measured no regret of its own", run.Seed)
		}
		for _, e := range run.Estimates {
			if !(e.Estimate <= e.True) {
				t.Errorf("seed %d at %v: the tuner's regret %v is above the true %v", run.Seed, e.Shape, e.Estimate, e.True)
			}
		}
		for _, h := range run.HeldOut {
			if !(h.Regret >= 0) || !(h.RegretAlone >= 0) {
				t.Errorf("seed %d at %v: regret %v, against the tune alone %v", run.Seed, h.Shape, h.Regret, h.RegretAlone)
			}
		}
		// The median, since one noisy record of the landscape (37 rows)
		// outweighs every other regret in a sum.
		if !(p.Runs[i].Median > run.Median) {
			t.Errorf("seed %d: median regret %v with the wrong dispatch, %v with the nearest bucket: want more", run.Seed, p.Runs[i].Median, run.Median)
		}
	}
}

// TestReplayRangeRefuses checks the replay's refusals: a range landscape
// missing a shape of its ladder, one shape alone, no seeds.
func TestReplayRangeRefuses(t *testing.T) {
	recs := rangeLandscape(t)
	base := RangeReplay{Template: softmax.Template, Recordings: recs, Method: Method{Strategy: "random"}, Seeds: 1, Trials: 10}
	for name, c := range map[string]struct {
		edit func(*RangeReplay)
		want string
	}{
		"ladder shape missing": {func(r *RangeReplay) { r.Recordings = append(recs[:1:1], recs[2:]...) }, "is not recorded"},
		"one shape":            {func(r *RangeReplay) { r.Recordings = recs[:1] }, "at least two shapes"},
		"no seeds":             {func(r *RangeReplay) { r.Seeds = 0 }, "at least one seed"},
		"negative budget":      {func(r *RangeReplay) { r.Trials = -1 }, "must not be negative"},
	} {
		r := base
		c.edit(&r)
		if _, err := ReplayRange(context.Background(), r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}
