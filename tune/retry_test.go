package tune

import (
	"context"
	"testing"

	"github.com/autotune-dev/autotune/measure"
)

// timeouts measures every config as timed out.
type timeouts struct{ measured int }

func (m *timeouts) Measure(_ context.Context, b measure.Batch) ([]measure.Result, error) {
	out := make([]measure.Result, len(b.Configs))
	for i, c := range b.Configs {
		out[i] = measure.Result{Config: c, Status: measure.StatusTimeout, Error: "killed after 10s"}
	}
	m.measured += len(b.Configs)
	return out, nil
}

// A config that timed out is measured again once, by the next run; after
// that only --retry-failed measures it again.
func TestTransientFailuresAreRetriedOnce(t *testing.T) {
	db := openDB(t)
	for i, tc := range []struct {
		retry bool
		want  int
	}{
		{false, 12}, // every config of testSpace, once
		{false, 12}, // each timed out once: retried
		{false, 0},  // each timed out twice: final
		{true, 12},  // unless asked
	} {
		m := &timeouts{}
		task := testTask(t, db, m)
		task.Trials, task.RetryFailed = 100, tc.retry
		if _, err := Run(context.Background(), task); err != nil {
			t.Fatal(err)
		}
		if m.measured != tc.want {
			t.Errorf("run %d (retry %v) measured %d configs, want %d", i+1, tc.retry, m.measured, tc.want)
		}
	}
}
