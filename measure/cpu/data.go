package cpu

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
)

// data is a workload as the harness reads it: its sizes and tolerance,
// and its input sets with their references (measure.Inputs).
type data struct {
	work harness.Workload
	sets []harness.Set
}

// dataCache keeps the data of the last workload measured, because the
// reference of a large kernel (a gemm in float64) can take longer to compute
// than a whole batch takes to measure.
type dataCache struct {
	mu   sync.Mutex
	key  string
	data *data
}

// get returns the data of t at shape for seed, computing it unless it is the
// last one's. A float64 reference can take many seconds (12 s for a 2048³
// GEMM), so get gives up when ctx is done, leaving the computation to finish
// in the background for a later call, rather than keep a Ctrl-C waiting.
func (c *dataCache) get(ctx context.Context, t kernels.Template, shape []int, dt dtype.DType, seed uint64) (*data, error) {
	done := make(chan *data, 1)
	go func() { done <- c.load(t, shape, dt, seed) }()
	select {
	case d := <-done:
		return d, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("cpu: computing the reference: %w", ctx.Err())
	}
}

func (c *dataCache) load(t kernels.Template, shape []int, dt dtype.DType, seed uint64) *data {
	var sets []string
	for _, s := range t.InputSetsFor(dt) {
		sets = append(sets, s.Name)
	}
	key := fmt.Sprintf("%s\x00%s\x00%v\x00%s\x00%d\x00%q", t.Op.Name, t.Version, shape, dt, seed, sets)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.data == nil || c.key != key {
		c.key, c.data = key, newData(t, shape, dt, seed)
	}
	return c.data
}

// newData draws the template's input sets for shape and dtype dt from
// seed and computes their references.
func newData(t kernels.Template, shape []int, dt dtype.DType, seed uint64) *data {
	dt = cmp.Or(dt, dtype.Default)
	ins, out := t.Args(slices.Clone(shape))
	d := &data{work: harness.Workload{DType: string(dt), Inputs: ins, Output: out}}
	for _, s := range measure.Inputs(t.Op, shape, dt, seed) {
		info := harness.SetInfo{Name: s.Name, Rel: s.Rel, Abs: s.Abs}
		d.work.Sets = append(d.work.Sets, info)
		d.sets = append(d.sets, harness.Set{SetInfo: info, Ins: s.Ins, Want: s.Want})
	}
	return d
}

// write stores d in dir for the harness to read (harness.Write).
func (d *data) write(dir string) error {
	if err := harness.Write(dir, d.work, d.sets); err != nil {
		return fmt.Errorf("cpu: writing the inputs: %w", err)
	}
	return nil
}
