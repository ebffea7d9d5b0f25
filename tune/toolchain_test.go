package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure"
)

// dtypeMeasurer is fakeMeasurer that keeps the dtype of each batch.
type dtypeMeasurer struct {
	fakeMeasurer
	dtypes []dtype.DType
}

func (m *dtypeMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	m.dtypes = append(m.dtypes, b.DType)
	return m.fakeMeasurer.Measure(ctx, b)
}

// A task's records are keyed by its dtype and toolchain: a run with
// another toolchain measures anew instead of resuming another
// toolchain's, and starts from its winners.
func TestRunToolchain(t *testing.T) {
	db := openDB(t)
	m := &dtypeMeasurer{}
	task := testTask(t, db, m)
	task.DType, task.Toolchain = dtype.F32, "go1.25.0"
	if _, err := Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	for _, dt := range m.dtypes {
		if dt != dtype.F32 {
			t.Errorf("a batch of dtype %q, want f32", dt)
		}
	}
	old := task.Workload()
	if old.Toolchain != "go1.25.0" || old.DType != dtype.F32 {
		t.Errorf("Workload() = %+v", old)
	}
	recs, _ := db.Records(old)
	if len(recs) != 5 {
		t.Fatalf("%d records under %q, want 5", len(recs), old.Key())
	}
	if recs, _ := db.Records(Workload(task.Template, task.Shape, task.Target)); len(recs) != 0 {
		t.Errorf("%d records under the key of an unknown toolchain", len(recs))
	}

	m2 := &dtypeMeasurer{}
	task.Measurer, task.Toolchain = m2, "go1.26.0"
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Resumed != 0 || s.Trials != 5 {
		t.Errorf("a run with another toolchain resumed %d and measured %d; want 0 and 5", s.Resumed, s.Trials)
	}
	// The old toolchain's winner is a seed: measured first.
	if best, ok, _ := db.Best(old); !ok || len(m2.measured) == 0 || m2.measured[0] != best.Config.String() {
		t.Errorf("the new toolchain's run measured %v; want the old toolchain's winner %s first", m2.measured, best.Config)
	}
	if recs, _ := db.Records(task.Workload()); len(recs) != 5 {
		t.Errorf("%d records of the new toolchain, want 5", len(recs))
	}
}

func TestRunRefusesAnUnsupportedDType(t *testing.T) {
	task := testTask(t, openDB(t), &fakeMeasurer{})
	task.DType = "bf16"
	_, err := Run(context.Background(), task)
	if err == nil || !strings.Contains(err.Error(), "op softmax has no bf16 kernels (it has: f32)") {
		t.Errorf("Run of bf16 = %v", err)
	}
}
