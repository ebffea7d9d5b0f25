package sim

import (
	"context"
	"slices"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// NotRecorded is the Error of the result of a config that was never recorded.
const NotRecorded = "sim: config never recorded"

// Measurer replays recorded results. It never changes after New, so it is
// safe for concurrent use.
type Measurer struct {
	byConfig map[string]measure.Result
	configs  []schedule.Config // recorded configs, in order of first appearance
}

// New returns a Measurer that replays recorded, the results of one
// workload, by config text. Configs may repeat; see the package doc for
// which result is replayed. recorded is not retained.
func New(recorded []measure.Result) *Measurer {
	m := &Measurer{byConfig: make(map[string]measure.Result, len(recorded))}
	for _, r := range recorded {
		k := r.Config.String()
		_, seen := m.byConfig[k]
		if !seen {
			m.configs = append(m.configs, r.Config)
		}
		if !seen || r.Status == measure.StatusOK {
			m.byConfig[k] = r
		}
	}
	return m
}

// Measure returns the recorded result of each config of b, in order. It
// stops early only when ctx is done, returning the results so far with the
// context's error.
func (m *Measurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	out := make([]measure.Result, 0, len(b.Configs))
	for _, c := range b.Configs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, _ := m.Lookup(c)
		out = append(out, r)
	}
	return out, nil
}

// Lookup returns the result Measure replays for c, and whether c was
// recorded; for a config never recorded it is the NotRecorded failure.
func (m *Measurer) Lookup(c schedule.Config) (measure.Result, bool) {
	r, ok := m.byConfig[c.String()]
	if !ok {
		return measure.Result{Config: c, Status: measure.StatusRuntimeError, Error: NotRecorded}, false
	}
	r.Config = c
	// The caller owns what it is given: a tuner may keep the samples.
	r.SamplesNS = slices.Clone(r.SamplesNS)
	return r, true
}

// Configs returns every recorded config once, in the order they first
// appeared in the recording.
func (m *Measurer) Configs() []schedule.Config { return slices.Clone(m.configs) }

// Len returns the number of distinct configs recorded.
func (m *Measurer) Len() int { return len(m.configs) }

// Best returns the replayed result with the lowest median among the ok
// ones (the first recorded of equal ones), and false when none is ok.
func (m *Measurer) Best() (measure.Result, bool) {
	var best measure.Result
	found := false
	for _, c := range m.configs {
		r := m.byConfig[c.String()]
		if r.Status == measure.StatusOK && (!found || r.MedianNS < best.MedianNS) {
			best, found = r, true
		}
	}
	best.SamplesNS = slices.Clone(best.SamplesNS)
	return best, found
}
