package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/tunedb"
)

// Thresholds of run and batch inference; see the package doc.
const (
	runGap         = 10 * time.Minute
	fallbackBatch  = 16
	within5Percent = 1.05
)

// run is one inferred tuning run: its records in time order.
type run struct {
	recs       []tunedb.Record
	remeasured []bool // per record: a config measured before in this run
	batches    [][]tunedb.Record
	grouped    bool // batches are groups of fallbackBatch records, not recognised batches
}

func (r *run) start() time.Time { return r.recs[0].Time }

// splitRuns sorts recs by time and splits them into runs.
func splitRuns(recs []tunedb.Record) []*run {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b tunedb.Record) int { return a.Time.Compare(b.Time) })
	var runs []*run
	var cur *run
	var seen map[string]bool
	for i, r := range recs {
		c := r.Config.String()
		again := cur != nil && seen[c]
		if i == 0 || r.Tool != recs[i-1].Tool || r.Time.Sub(recs[i-1].Time) > runGap ||
			(cur.remeasured[len(cur.remeasured)-1] && !again) {
			cur, seen, again = &run{}, map[string]bool{}, false
			runs = append(runs, cur)
		}
		seen[c] = true
		cur.recs = append(cur.recs, r)
		cur.remeasured = append(cur.remeasured, again)
	}
	for _, r := range runs {
		r.batches, r.grouped = splitBatches(r.recs)
	}
	return runs
}

// splitBatches splits a run's records into batches by their build time,
// or into groups of fallbackBatch when no batch has two records.
func splitBatches(recs []tunedb.Record) (batches [][]tunedb.Record, grouped bool) {
	start := 0
	for i := 1; i <= len(recs); i++ {
		if i == len(recs) || !sameShare(recs[i-1].BuildNS, recs[i].BuildNS) {
			batches = append(batches, recs[start:i])
			start = i
		}
	}
	if len(batches) < len(recs) || len(recs) < 2 {
		return batches, false
	}
	batches = batches[:0]
	for i := 0; i < len(recs); i += fallbackBatch {
		batches = append(batches, recs[i:min(i+fallbackBatch, len(recs))])
	}
	return batches, true
}

// sameShare says whether two build times can be shares of one batch's:
// equal shares differ by a nanosecond of remainder, pooled re-measurements
// by one per round.
func sameShare(a, b int64) bool {
	d := a - b
	return d >= -4 && d <= 4 && (a > 0 || b > 0)
}

// point is one step of a best-so-far curve.
type point struct {
	trial   int     // 1-based, within the run
	seconds float64 // since the run's first record
	ns      float64 // best median so far
}

// curve returns the best-so-far steps of a run: one point per
// improvement, and one at its last trial, so that the line spans the run.
func (r *run) curve() []point {
	var pts []point
	best := math.Inf(1)
	for i, rec := range r.recs {
		if rec.Status == tunedb.StatusOK && rec.MedianNS < best {
			best = rec.MedianNS
			pts = append(pts, point{i + 1, rec.Time.Sub(r.start()).Seconds(), best})
		}
	}
	if n := len(r.recs); len(pts) > 0 && pts[len(pts)-1].trial != n {
		pts = append(pts, point{n, r.recs[n-1].Time.Sub(r.start()).Seconds(), best})
	}
	return pts
}

// trialsWithin returns the first trial, counting every record of the
// workload in time order, whose best median so far is within factor of
// best, and 0 when none is.
func trialsWithin(runs []*run, best, factor float64) int {
	n, found := 0, math.Inf(1)
	for _, r := range runs {
		for _, rec := range r.recs {
			n++
			if rec.Status == tunedb.StatusOK {
				found = min(found, rec.MedianNS)
			}
			if found <= best*factor {
				return n
			}
		}
	}
	return 0
}

// times is the build and run time of a set of records.
type times struct{ build, run time.Duration }

func (t times) share() float64 {
	if t.build+t.run <= 0 {
		return 0
	}
	return float64(t.build) / float64(t.build+t.run)
}

func timesOf(recs []tunedb.Record) times {
	var t times
	for _, r := range recs {
		t.build += time.Duration(r.BuildNS)
		t.run += time.Duration(r.RunNS)
	}
	return t
}

// failures counts the records of each failing status, in tunedb's order.
type failure struct {
	Status tunedb.Status
	Count  int
}

func failuresOf(byStatus map[tunedb.Status]int) []failure {
	var out []failure
	for _, st := range tunedb.Statuses() {
		if st != tunedb.StatusOK && byStatus[st] > 0 {
			out = append(out, failure{st, byStatus[st]})
		}
	}
	return out
}

// differingKnobs returns the names of the knobs whose values are not the
// same in every config of recs, in knob order.
func differingKnobs(recs []tunedb.Record) []string {
	if len(recs) == 0 {
		return nil
	}
	var names []string
	first := recs[0].Config
	for i := range first.Len() {
		name := first.Name(i)
		for _, r := range recs[1:] {
			if v, ok := r.Config.Lookup(name); !ok || v != first.At(i) {
				names = append(names, name)
				break
			}
		}
	}
	return names
}

// okMedians returns the medians of the ok records, ascending.
func okMedians(recs []tunedb.Record) []float64 {
	var xs []float64
	for _, r := range recs {
		if r.Status == tunedb.StatusOK {
			xs = append(xs, r.MedianNS)
		}
	}
	slices.SortFunc(xs, cmp.Compare)
	return xs
}
