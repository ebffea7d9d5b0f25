package tune

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/tunedb"
)

// fleet is a fake measurer of several named workers, each a fakeMeasurer;
// a batch goes to one worker after the other, as a shared queue spreads
// them, and MeasureExcept takes the first worker not named.
type fleet struct {
	names   []string
	workers map[string]*fakeMeasurer
	rogue   map[string]float64 // a factor on every median a worker reports
	next    int
}

func newFleet(names ...string) *fleet {
	f := &fleet{names: names, workers: map[string]*fakeMeasurer{}, rogue: map[string]float64{}}
	for _, n := range names {
		f.workers[n] = &fakeMeasurer{spread: 0.05}
	}
	return f
}

func (f *fleet) on(ctx context.Context, name string, b measure.Batch) ([]measure.Result, error) {
	results, err := f.workers[name].Measure(ctx, b)
	for i := range results {
		r := &results[i]
		r.Measurer = &measure.Measurer{Name: name, Host: name + ".example", Tool: "test"}
		if k := f.rogue[name]; k > 0 && r.Status == measure.StatusOK {
			for j := range r.SamplesNS {
				r.SamplesNS[j] *= k
			}
			r.MedianNS, r.P20NS, r.P80NS = r.MedianNS*k, r.P20NS*k, r.P80NS*k
		}
	}
	return results, err
}

func (f *fleet) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	name := f.names[f.next%len(f.names)]
	f.next++
	return f.on(ctx, name, b)
}

func (f *fleet) MeasureExcept(ctx context.Context, b measure.Batch, not []string) ([]measure.Result, bool, error) {
	for _, n := range f.names {
		if !slices.Contains(not, n) {
			results, err := f.on(ctx, n, b)
			return results, true, err
		}
	}
	return nil, false, nil
}

var _ CrossMeasurer = (*fleet)(nil)

// TestRogueWorker tunes on a fleet in which one worker reports every
// config 100× faster than it is: its figures never make the winner, and
// every one of them is marked suspect, whether it found a config or was
// asked to check one.
func TestRogueWorker(t *testing.T) {
	db := openDB(t)
	f := newFleet("rogue", "h1", "h2") // the rogue is the first asked to check others
	f.rogue["rogue"] = 0.01
	task := testTask(t, db, f)
	task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 12, 2, 3
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best == nil || s.Best.Config.String() != "vec=16,unroll=1" || s.Best.MedianNS != 1000 || measurerName(*s.Best) == "rogue" {
		t.Fatalf("best %+v, want vec=16,unroll=1 at its true 1000 ns, measured by an honest worker", s.Best)
	}
	for _, r := range s.Leaders {
		if measurerName(r) == "rogue" || r.Suspect != "" {
			t.Errorf("leader %s measured by %s, suspect %q", r.Config, measurerName(r), r.Suspect)
		}
	}
	recs, err := db.Records(task.Workload())
	if err != nil {
		t.Fatal(err)
	}
	rogue, checked := 0, 0
	for _, r := range recs {
		if r.Status != tunedb.StatusOK {
			continue
		}
		switch {
		case measurerName(r) == "rogue":
			rogue++
			if r.Suspect == "" {
				t.Errorf("the rogue's %s at %v ns is not suspect", r.Config, r.MedianNS)
			}
		case r.Suspect != "":
			t.Errorf("an honest worker's %s is suspect: %s", r.Config, r.Suspect)
		default:
			checked++
		}
	}
	if rogue == 0 || checked == 0 {
		t.Errorf("%d records of the rogue, %d of honest workers; want some of each", rogue, checked)
	}
}

// TestHonestFleetAgrees checks that workers that agree within their
// spreads mark nothing, and that the leaders are checked on another
// worker than the one that found them.
func TestHonestFleetAgrees(t *testing.T) {
	db := openDB(t)
	f := newFleet("h1", "h2")
	f.workers["h2"].repeat = map[string]float64{"vec=16,unroll=1": 1.2} // a slower machine, within AgreeMargin
	task := testTask(t, db, f)
	task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 12, 2, 3
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best == nil || s.Best.Config.String() != "vec=16,unroll=1" {
		t.Fatalf("best %+v, want vec=16,unroll=1", s.Best)
	}
	recs, _ := db.Records(task.Workload())
	found := map[string]string{}
	for _, r := range recs {
		if r.Suspect != "" {
			t.Errorf("%s by %s is suspect: %s", r.Config, measurerName(r), r.Suspect)
		}
		c := r.Config.String()
		if f, ok := found[c]; ok && f == measurerName(r) {
			t.Errorf("%s was checked on %s, which found it", c, f)
		}
		found[c] = measurerName(r)
	}
}

func TestAgree(t *testing.T) {
	rec := func(p20, med, p80 float64) tunedb.Record {
		return tunedb.Record{Status: tunedb.StatusOK, P20NS: p20, MedianNS: med, P80NS: p80}
	}
	for _, tt := range []struct {
		a, b tunedb.Record
		want bool
	}{
		{rec(90, 100, 110), rec(95, 105, 115), true},    // ranges overlap
		{rec(90, 100, 110), rec(130, 135, 140), true},   // apart by less than the margins (25 + 33.75)
		{rec(100, 100, 100), rec(200, 200, 200), false}, // twice as slow
		{rec(100, 100, 100), rec(1, 1, 1), false},       // a hundred times faster
		{rec(100, 100, 100), rec(149, 150, 151), true},  // 125 ≥ 149-37.5
		{rec(100, 100, 100), rec(170, 170, 170), false}, // 125 < 170-42.5
	} {
		if got := Agree(tt.a, tt.b); got != tt.want || Agree(tt.b, tt.a) != tt.want {
			t.Errorf("Agree(%v, %v) = %v, want %v both ways", tt.a.MedianNS, tt.b.MedianNS, got, tt.want)
		}
	}
}

// TestLocalRecordsNameTheirMeasurer checks that what this process measured
// says so: its host and tool, and no worker's name.
func TestLocalRecordsNameTheirMeasurer(t *testing.T) {
	db := openDB(t)
	task := testTask(t, db, &fakeMeasurer{})
	if _, err := Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	recs, _ := db.Records(task.Workload())
	for _, r := range recs {
		if r.Measurer == nil || *r.Measurer != (measure.Measurer{Host: host, Tool: "test"}) {
			t.Errorf("%s measured by %+v, want this host and the task's tool", r.Config, r.Measurer)
		}
	}
}
