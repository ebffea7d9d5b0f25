package tune

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tunedb"
)

// fakeMeasurer times a config as 1000ns per unit of "cost"; unroll=8 fails
// as a wrong answer and vec=1,unroll=4 does not build.
type fakeMeasurer struct {
	calls    int
	repeat   map[string]float64 // a factor on the median of a config measured again
	seen     map[string]bool
	spread   float64 // samples are median×(1-spread), median, median×(1+spread)
	measured []string
	cancel   func() // when set, cancels after the first result of the second batch
}

func (f *fakeMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	f.calls++
	cfgs := b.Configs
	var out []measure.Result
	for i, c := range cfgs {
		if f.cancel != nil && f.calls == 2 && i == 1 {
			f.cancel()
			return out, ctx.Err()
		}
		f.measured = append(f.measured, c.String())
		r := measure.Result{Config: c, Status: measure.StatusOK, BuildNS: 10, RunNS: 20}
		switch {
		case c.Int("unroll") == 8:
			r.Status, r.Error = measure.StatusWrongAnswer, "index 3: got 1, want 2"
		case c.Int("vec") == 1 && c.Int("unroll") == 4:
			r.Status, r.Error = measure.StatusBuildError, "k003.go:1: syntax error"
		default:
			ns := float64(1000 * (17 - c.Int("vec")) * c.Int("unroll"))
			if f.seen[c.String()] && f.repeat[c.String()] > 0 {
				ns *= f.repeat[c.String()]
			}
			if f.seen == nil {
				f.seen = map[string]bool{}
			}
			f.seen[c.String()] = true
			r.SamplesNS = []float64{ns * (1 - f.spread), ns, ns * (1 + f.spread)}
			r.MedianNS, r.P20NS, r.P80NS = ns, ns, ns
		}
		out = append(out, r)
	}
	return out, nil
}

type countingObserver struct{ batches int }

func (o *countingObserver) Batch(Progress) { o.batches++ }

func testSpace([]int, device.Target) *schedule.Space {
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("vec", 1, 8, 16),
		schedule.Choice("unroll", 1, 2, 4, 8),
	})
}

func testTask(t *testing.T, db *tunedb.DB, m Measurer) Task {
	return Task{
		Template: kernels.Template{Op: kernels.Op{Name: "softmax"}, Version: "t1", Space: testSpace},
		Shape:    []int{4, 4},
		Target:   device.Host(),
		Space:    testSpace(nil, device.Target{}), Measurer: m, Store: db, Seed: 1, Trials: 5, BatchSize: 2, Tool: "test",
	}
}

func openDB(t *testing.T) *tunedb.DB {
	db, err := tunedb.Open(filepath.Join(t.TempDir(), "tune.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRunRespectsBudgetAndResumes(t *testing.T) {
	db := openDB(t)
	m := &fakeMeasurer{}
	obs := &countingObserver{}
	task := testTask(t, db, m)
	task.Observer = obs
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Trials != 5 || len(m.measured) != 5 || obs.batches != 3 {
		t.Fatalf("trials %d, measured %d, batches %d; want 5, 5, 3", s.Trials, len(m.measured), obs.batches)
	}
	recs, _ := db.Records(Workload(task.Template, task.Shape, task.Target))
	if len(recs) != 5 {
		t.Fatalf("%d records committed, want 5", len(recs))
	}

	// The second run measures only what the first did not, then runs dry.
	m2 := &fakeMeasurer{}
	task.Measurer, task.Trials = m2, 100
	s2, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Resumed != 5 || s2.Trials != 7 || !s2.Exhausted {
		t.Errorf("resumed %d, trials %d, exhausted %v; want 5, 7, true", s2.Resumed, s2.Trials, s2.Exhausted)
	}
	seen := map[string]bool{}
	for _, c := range append(m.measured, m2.measured...) {
		if seen[c] {
			t.Errorf("%s measured twice", c)
		}
		seen[c] = true
	}
	// Best over both runs: vec=16,unroll=1 at 1000ns; failures never win.
	if s2.Best == nil || s2.Best.Config.String() != "vec=16,unroll=1" || s2.Best.MedianNS != 1000 {
		t.Errorf("best = %+v", s2.Best)
	}
	if s.Failures[tunedb.StatusWrongAnswer]+s2.Failures[tunedb.StatusWrongAnswer] != 3 ||
		s.Failures[tunedb.StatusBuildError]+s2.Failures[tunedb.StatusBuildError] != 1 {
		t.Errorf("failures %v and %v; want 3 wrong answers and 1 build error in all", s.Failures, s2.Failures)
	}
}

func TestRunInterruptedCommitsFinishedWork(t *testing.T) {
	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	m := &fakeMeasurer{cancel: cancel}
	s, err := Run(ctx, testTask(t, db, m))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Trials != 3 {
		t.Errorf("interrupted %v, trials %d; want true, 3 (a batch of 2, then 1 of the next)", s.Interrupted, s.Trials)
	}
	task := testTask(t, db, m)
	recs, _ := db.Records(Workload(task.Template, task.Shape, task.Target))
	if len(recs) != 3 {
		t.Errorf("%d records committed, want 3", len(recs))
	}
}

func TestRunRejectsBadTasks(t *testing.T) {
	db := openDB(t)
	task := testTask(t, db, &fakeMeasurer{})
	task.Trials = 0
	if _, err := Run(context.Background(), task); err == nil {
		t.Error("a zero budget was accepted")
	}
	task.Trials, task.Strategy = 1, "annealing"
	if _, err := Run(context.Background(), task); err == nil {
		t.Error("an unknown strategy was accepted")
	}
}

func TestEveryStrategyAndModelRuns(t *testing.T) {
	for _, strategy := range search.Names() {
		for _, model := range costmodel.Names() {
			t.Run(strategy+"/"+model, func(t *testing.T) {
				db := openDB(t)
				task := testTask(t, db, &fakeMeasurer{})
				task.Strategy, task.Model, task.Trials = strategy, model, 100
				s, err := Run(context.Background(), task)
				if err != nil {
					t.Fatal(err)
				}
				if s.Trials != 12 || !s.Exhausted || s.Best.Config.String() != "vec=16,unroll=1" {
					t.Errorf("trials %d, exhausted %v, best %v; want all 12 configs and vec=16,unroll=1", s.Trials, s.Exhausted, s.Best.Config)
				}
			})
		}
	}
}

func TestModelIsSavedAndSeedsTransfer(t *testing.T) {
	db := openDB(t)
	task := testTask(t, db, &fakeMeasurer{})
	task.Trials = 8
	if _, err := Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	w := Workload(task.Template, task.Shape, task.Target)
	if _, ok, err := db.LoadModel(tunedb.ModelKey{Op: w.Op, Device: w.Device, Template: w.Template}); !ok || err != nil {
		t.Fatalf("no model saved after the run: %v", err)
	}

	// A new shape of the same op starts with the best configs of the tuned one.
	m := &fakeMeasurer{}
	task.Shape, task.Measurer, task.Trials, task.BatchSize = []int{8, 4}, m, 2, 2
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := db.TopK(w, 2)
	if s.Resumed != 0 || len(m.measured) != 2 || m.measured[0] != top[0].Config.String() || m.measured[1] != top[1].Config.String() {
		t.Errorf("the new shape measured %v first; want the tuned shape's best %v, %v", m.measured, top[0].Config, top[1].Config)
	}
}

func TestEarlyStop(t *testing.T) {
	db := openDB(t)
	task := testTask(t, db, &fakeMeasurer{})
	task.Strategy, task.Trials, task.BatchSize, task.EarlyStop = "grid", 100, 1, 3
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	// Grid order: vec=1 with unroll 1, 2, 4, 8 (the first is the best of
	// them, then 3 worse), then it stops.
	if !s.EarlyStop || s.Trials != 4 {
		t.Errorf("early stop %v after %d trials; want true after 4", s.EarlyStop, s.Trials)
	}
}

func TestRemeasureLeaders(t *testing.T) {
	for _, tt := range []struct {
		spread float64
		tied   bool
	}{{0.1, false}, {0.6, true}} {
		db := openDB(t)
		m := &fakeMeasurer{spread: tt.spread}
		task := testTask(t, db, m)
		task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 12, 12, 3
		s, err := Run(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		// 12 trials, then the 3 leaders 3 times each, pooled into 3 records.
		recs, _ := db.Records(Workload(task.Template, task.Shape, task.Target))
		if s.Trials != 12 || len(m.measured) != 12+9 || len(recs) != 12+3 {
			t.Fatalf("spread %v: trials %d, measured %d, records %d; want 12, 21, 15", tt.spread, s.Trials, len(m.measured), len(recs))
		}
		var leaders []string
		for _, r := range s.Leaders {
			leaders = append(leaders, r.Config.String())
			if len(r.SamplesNS) != 9 {
				t.Errorf("leader %s pools %d samples, want 9", r.Config, len(r.SamplesNS))
			}
		}
		want := []string{"vec=16,unroll=1", "vec=16,unroll=2", "vec=16,unroll=4"} // 1, 2 and 4 µs
		if !slices.Equal(leaders, want) || s.Tied != tt.tied {
			t.Errorf("spread %v: leaders %v, tied %v; want %v, %v", tt.spread, leaders, s.Tied, want, tt.tied)
		}
		if s.Best == nil || !s.Best.Config.Equal(s.Leaders[0].Config) || s.Best.Time != s.Leaders[0].Time {
			t.Errorf("best %+v is not the re-measured winner", s.Best)
		}
	}
}

// When the leader measures slower the second time, the winner is the best
// of the re-measured configs, never one that was measured only once.
func TestRemeasuredLeaderThatSlowsDown(t *testing.T) {
	db := openDB(t)
	// The two leaders, vec=16 with unroll 1 and 2 (1 and 2µs), re-measure at
	// 5 and 10µs: slower than vec=16,unroll=4 (4µs), measured only once.
	m := &fakeMeasurer{repeat: map[string]float64{"vec=16,unroll=1": 5, "vec=16,unroll=2": 5}}
	task := testTask(t, db, m)
	task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 12, 12, 2
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best == nil || s.Best.Config.String() != "vec=16,unroll=4" {
		t.Fatalf("best = %v, want vec=16,unroll=4 (4µs, re-measured in a second round)", s.Best)
	}
	best, _, _ := db.Best(Workload(task.Template, task.Shape, task.Target))
	if !best.Config.Equal(s.Best.Config) || len(best.SamplesNS) != 3*RemeasureRounds {
		t.Errorf("the database's best is %s with %d samples; want the re-measured %s", best.Config, len(best.SamplesNS), s.Best.Config)
	}
}

// The template's Dominated reaches the search: a cold run spends its first
// batch on the configs it does not rule out (the 8 with vectors), and the
// dominated ones are still measured when the budget allows.
func TestFirstBatchAvoidsDominated(t *testing.T) {
	db := openDB(t)
	m := &fakeMeasurer{}
	task := testTask(t, db, m)
	task.Template.Dominated = func(_ []int, _ device.Target, c schedule.Config) bool { return c.Int("vec") == 1 }
	task.Trials, task.BatchSize = 12, 8
	if _, err := Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(m.measured) != 12 {
		t.Fatalf("measured %d configs, want the 12 of the space", len(m.measured))
	}
	for _, c := range m.measured[:8] {
		if strings.HasPrefix(c, "vec=1,") {
			t.Errorf("the first batch measured %s, which the template rules out: %v", c, m.measured[:8])
		}
	}
}
