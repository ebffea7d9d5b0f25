package tune

import (
	"context"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
)

// streamingMeasurer hands each result to the batch's Finished hook, then,
// before the next config, waits until the store holds every record so far:
// a tuner killed in the middle of a batch has lost at most the config in
// hand, not the batch.
type streamingMeasurer struct {
	t      *testing.T
	store  Store
	task   Task
	waited time.Duration // the longest wait for a record to be committed
}

func (m *streamingMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	w := Workload(m.task.Template, m.task.Shape, m.task.Target)
	before, err := m.store.Records(w)
	if err != nil {
		return nil, err
	}
	var out []measure.Result
	for i, c := range b.Configs {
		ns := float64(1000 * (i + 1))
		r := measure.Result{Config: c, Status: measure.StatusOK, SamplesNS: []float64{ns, ns, ns},
			MedianNS: ns, P20NS: ns, P80NS: ns, BuildNS: 10, RunNS: 20}
		if b.Finished == nil {
			m.t.Fatal("the tuner sets no Finished hook")
		}
		b.Finished(r)
		out = append(out, r)
		start := time.Now()
		for {
			recs, err := m.store.Records(w)
			if err != nil {
				return out, err
			}
			if len(recs) == len(before)+i+1 {
				break
			}
			if time.Since(start) > 5*time.Second {
				m.t.Fatalf("config %d of the batch was not committed within 5 s of finishing", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		m.waited = max(m.waited, time.Since(start))
	}
	return out, nil
}

func TestResultsAreCommittedAsTheyFinish(t *testing.T) {
	defer func(d time.Duration) { commitEvery = d }(commitEvery)
	commitEvery = 20 * time.Millisecond
	db := openDB(t)
	m := &streamingMeasurer{t: t, store: db}
	task := testTask(t, db, m)
	task.Trials, task.BatchSize = 6, 3
	m.task = task
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := db.Records(Workload(task.Template, task.Shape, task.Target))
	if err != nil {
		t.Fatal(err)
	}
	// Each result is committed once, by the streamer, not again at the end
	// of its batch.
	if s.Trials != 6 || len(recs) != 6 || s.Best == nil || s.Best.MedianNS != 1000 {
		t.Errorf("%d trials, %d records, best %+v; want 6, 6 and a best of 1000 ns", s.Trials, len(recs), s.Best)
	}
	t.Logf("longest wait for a commit: %v", m.waited)
}
