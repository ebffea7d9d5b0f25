package report

import (
	"fmt"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// rec is a record of config "x=N" at second s, with a build share and a
// tool.
func rec(t *testing.T, n int, s float64, build int64, tool string, ns float64) tunedb.Record {
	t.Helper()
	c, err := schedule.ParseConfig(fmt.Sprintf("x=%d", n))
	if err != nil {
		t.Fatal(err)
	}
	r := tunedb.Record{Config: c, Status: tunedb.StatusOK, MedianNS: ns, BuildNS: build, Tool: tool,
		Time: time.Unix(1e9, 0).Add(time.Duration(s * float64(time.Second)))}
	if ns == 0 {
		r.Status = tunedb.StatusCrash
	}
	return r
}

func TestSplitRuns(t *testing.T) {
	recs := []tunedb.Record{
		// run 1: two batches (build shares 100 and 201±1), then its leaders again
		rec(t, 1, 0, 100, "a", 50), rec(t, 2, 1, 100, "a", 40), rec(t, 3, 5, 201, "a", 0), rec(t, 4, 6, 202, "a", 30),
		rec(t, 4, 8.5, 900, "a", 31), rec(t, 2, 8.75, 900, "a", 41),
		// run 2 at once: a new config after re-measurements
		rec(t, 5, 12, 300, "a", 20), rec(t, 6, 13, 300, "a", 25),
		// run 3: another tool
		rec(t, 7, 14, 300, "b", 10),
		// run 4: an hour later; each candidate compiled on its own
		rec(t, 8, 3614, 1100, "b", 9), rec(t, 9, 3615, 1200, "b", 8), rec(t, 10, 3616, 1300, "b", 7),
	}
	// Shuffled input: runs follow the times.
	shuffled := append([]tunedb.Record{recs[5], recs[11]}, recs[:5]...)
	shuffled = append(shuffled, recs[6:11]...)
	runs := splitRuns(shuffled)
	sizes := []int{}
	for _, r := range runs {
		sizes = append(sizes, len(r.recs))
	}
	if fmt.Sprint(sizes) != "[6 2 1 3]" {
		t.Fatalf("runs of %v records, want [6 2 1 3]", sizes)
	}
	if got := fmt.Sprint(runs[0].remeasured); got != "[false false false false true true]" {
		t.Errorf("run 1 re-measured = %s, want the last two", got)
	}
	var batches []int
	for _, b := range runs[0].batches {
		batches = append(batches, len(b))
	}
	if fmt.Sprint(batches) != "[2 2 2]" || runs[0].grouped {
		t.Errorf("run 1 batches of %v (grouped %v), want [2 2 2]", batches, runs[0].grouped)
	}
	if !runs[3].grouped || len(runs[3].batches) != 1 {
		t.Errorf("run 4: grouped %v, %d batches; want one group of 3", runs[3].grouped, len(runs[3].batches))
	}
	// The best so far of run 1 steps at trials 1, 2, 4 and spans its 6 trials.
	if got := fmt.Sprint(runs[0].curve()); got != "[{1 0 50} {2 1 40} {4 6 30} {6 8.75 30}]" {
		t.Errorf("curve of run 1 = %s", got)
	}
	// Best 7: within 5% only at the last record (12th); within 50% (10.5)
	// at the 9th.
	if n := trialsWithin(runs, 7, within5Percent); n != 12 {
		t.Errorf("trialsWithin 5%% = %d, want 12", n)
	}
	if n := trialsWithin(runs, 7, 1.5); n != 9 {
		t.Errorf("trialsWithin 50%% = %d, want 9", n)
	}
	if n := trialsWithin(runs, 1, within5Percent); n != 0 {
		t.Errorf("trialsWithin of an unreached best = %d, want 0", n)
	}
}

func TestDifferingKnobs(t *testing.T) {
	var recs []tunedb.Record
	for _, s := range []string{"a=1,b=2,c=x", "a=1,b=4,c=x", "a=1,b=2,c=y"} {
		c, err := schedule.ParseConfig(s)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, tunedb.Record{Config: c})
	}
	if got := fmt.Sprint(differingKnobs(recs)); got != "[b c]" {
		t.Errorf("differingKnobs = %s, want [b c]", got)
	}
	if got := differingKnobs(recs[:1]); len(got) != 0 {
		t.Errorf("differingKnobs of one config = %v, want none", got)
	}
}
