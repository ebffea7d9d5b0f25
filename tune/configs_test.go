package tune

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

func parseConfigs(t *testing.T, task Task, texts ...string) []schedule.Config {
	t.Helper()
	sp := testSpace(nil, task.Target)
	var cfgs []schedule.Config
	for _, s := range texts {
		c, err := sp.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	return cfgs
}

// TimeConfigs measures exactly the configs given that have no record,
// once each, commits their records, failures too, and returns the latest
// record of each.
func TestTimeConfigs(t *testing.T) {
	db := openDB(t)
	m := &fakeMeasurer{}
	task := testTask(t, db, m)
	cfgs := parseConfigs(t, task, "vec=16,unroll=2", "vec=8,unroll=8", "vec=16,unroll=2")
	latest, n, err := TimeConfigs(context.Background(), task, cfgs)
	if err != nil {
		t.Fatal(err)
	}
	if m.calls != 1 || n != 2 || len(latest) != 3 || latest[0].MedianNS != 2000 || latest[1].Status != "wrong_answer" || latest[2] != latest[0] {
		t.Fatalf("%d batches, %d measured, records %+v", m.calls, n, latest)
	}
	if stored, err := db.Records(task.Workload()); err != nil || len(stored) != 2 {
		t.Errorf("the database holds %d records (%v), want 2", len(stored), err)
	}
	if _, n, err := TimeConfigs(context.Background(), task, cfgs[:1]); err != nil || n != 0 || m.calls != 1 {
		t.Errorf("timing a measured config again: %d measured, %d batches, %v", n, m.calls, err)
	}
}

// hookMeasurer runs during its first batch, before it measures.
type hookMeasurer struct {
	fakeMeasurer
	during func()
	once   sync.Once
}

func (m *hookMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	m.once.Do(m.during)
	return m.fakeMeasurer.Measure(ctx, b)
}

// Two tuners of one range time the same winner at the same held-out
// shape: the second, arriving while the first measures it, leaves it to
// the first and waits for its record rather than timing it again.
func TestTimeConfigsShareADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	open := func() *tunedb.DB {
		db, err := tunedb.Open(path, &tunedb.Options{Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	// The second tuner's poll says it found the configs held, then waits
	// for the first tuner to finish: polling at once, it took the
	// database's lock so often that on a loaded machine the first tuner's
	// commit and release could not, and the test hung.
	waited := make(chan struct{}, 1)
	firstDone := make(chan struct{})
	poll := claimPoll
	claimPoll = func(ctx context.Context) error {
		select {
		case waited <- struct{}{}:
		default:
		}
		select {
		case <-firstDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { claimPoll = poll }()

	second := &fakeMeasurer{}
	secondTask := testTask(t, open(), second)
	cfgs := parseConfigs(t, secondTask, "vec=16,unroll=2", "vec=8,unroll=1")
	var (
		latest []*tunedb.Record
		n      int
		err    error
		done   = make(chan struct{})
	)
	first := &hookMeasurer{during: func() {
		go func() {
			defer close(done)
			latest, n, err = TimeConfigs(context.Background(), secondTask, cfgs)
		}()
		// Measure once the second tuner found the configs held, or
		// timed them itself (as it did before range timings claimed).
		select {
		case <-waited:
		case <-done:
		}
	}}
	firstTask := testTask(t, open(), first)
	got, firstN, firstErr := TimeConfigs(context.Background(), firstTask, cfgs)
	close(firstDone)
	<-done
	if firstErr != nil || err != nil {
		t.Fatal(firstErr, err)
	}
	if firstN != 2 || n != 0 || len(second.measured) != 0 {
		t.Errorf("the first tuner measured %d, the second %d (%v): want 2 and 0", firstN, n, second.measured)
	}
	for i := range cfgs {
		if latest[i] == nil || got[i] == nil || latest[i].MedianNS != got[i].MedianNS {
			t.Errorf("config %s: the second tuner got %+v, the first %+v", cfgs[i], latest[i], got[i])
		}
	}
}
