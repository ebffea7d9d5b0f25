package tune

import (
	"context"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// MeasureConfigs measures exactly the configs given, once each, and
// commits their records, failures too.
func TestMeasureConfigs(t *testing.T) {
	db := openDB(t)
	m := &fakeMeasurer{}
	task := testTask(t, db, m)
	sp := testSpace(nil, task.Target)
	var cfgs []schedule.Config
	for _, s := range []string{"vec=16,unroll=2", "vec=8,unroll=8"} {
		c, err := sp.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	recs, err := MeasureConfigs(context.Background(), task, cfgs)
	if err != nil {
		t.Fatal(err)
	}
	if m.calls != 1 || len(recs) != 2 || recs[0].MedianNS != 2000 || recs[1].Status != "wrong_answer" {
		t.Fatalf("%d batches, records %+v", m.calls, recs)
	}
	stored, err := db.Records(task.Workload())
	if err != nil || len(stored) != 2 {
		t.Errorf("the database holds %d records (%v), want 2", len(stored), err)
	}
}
