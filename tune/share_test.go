package tune

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/tunedb"
)

// barrierMeasurer holds its first batch until every tuner of a test has
// one to measure: by then each has read what was measured before it, as
// two tuners started together have.
type barrierMeasurer struct {
	fakeMeasurer
	arrive func()
	once   sync.Once
}

func (m *barrierMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	m.once.Do(m.arrive)
	return m.fakeMeasurer.Measure(ctx, b)
}

// TestTunersShareADatabase runs two tuners of one workload at once on one
// database file, each with its own handle as two processes have, both
// walking the space in the same order: they divide it between them, no
// config is measured twice, and every record is kept.
func TestTunersShareADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	var (
		mu      sync.Mutex
		arrived int
		all     = make(chan struct{})
	)
	arrive := func() {
		mu.Lock()
		if arrived++; arrived == 2 {
			close(all)
		}
		mu.Unlock()
		<-all
	}
	ms := make([]*barrierMeasurer, 2)
	sums := make([]Summary, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range ms {
		db, err := tunedb.Open(path, &tunedb.Options{Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ms[i] = &barrierMeasurer{arrive: arrive}
		task := testTask(t, db, ms[i])
		task.Strategy, task.Trials = "grid", 100
		wg.Go(func() { sums[i], errs[i] = Run(context.Background(), task) })
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, m := range ms {
		if errs[i] != nil {
			t.Fatalf("tuner %d: %v", i, errs[i])
		}
		for _, c := range m.measured {
			if seen[c] {
				t.Errorf("%s measured twice", c)
			}
			seen[c] = true
		}
	}
	space := testSpace(nil, device.Target{})
	if len(seen) != int(space.Size()) {
		t.Errorf("%d configs measured, want all %d", len(seen), space.Size())
	}
	if sums[0].Shared+sums[1].Shared == 0 {
		t.Error("neither tuner says it left configs to the other")
	}
	db, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	task := testTask(t, db, nil)
	recs, err := db.Records(Workload(task.Template, task.Shape, task.Target))
	if err != nil || len(recs) != len(seen) || sums[0].Trials+sums[1].Trials != len(seen) {
		t.Errorf("%d records (%v), trials %d + %d; want %d", len(recs), err, sums[0].Trials, sums[1].Trials, len(seen))
	}
}
