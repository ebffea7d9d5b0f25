package tune

import (
	"context"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// MeasureConfigs measures each of cfgs once, in one batch, for t's
// workload and commits their records, which it returns: for a caller that
// knows which configs it wants timed (a range tune timing a bucket's
// winner at another shape of the range) rather than searching. t's budget
// and search fields are not used. On cancellation it commits and returns
// the finished ones with the context's error.
func MeasureConfigs(ctx context.Context, t Task, cfgs []schedule.Config) ([]tunedb.Record, error) {
	results, err := t.Measurer.Measure(ctx, measure.Batch{Template: t.Template, Shape: t.Shape, DType: t.DType, Target: t.Target, Configs: cfgs})
	recs := newRecords(t, t.Workload(), results)
	if len(recs) > 0 {
		if cerr := commit(t.Store, recs); cerr != nil {
			return nil, cerr
		}
	}
	return recs, err
}
