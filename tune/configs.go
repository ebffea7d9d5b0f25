package tune

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// TimeConfigs returns the latest record of each of cfgs for t's workload
// (nil for a config that has none), measuring in one batch those that
// have none, and how many records it committed: for a caller that knows
// which configs it wants timed (a range tune timing a bucket's winner at
// another shape of the range) rather than searching. t's budget and
// search fields are not used.
//
// On a database that several tuners share (a Claimer), it claims the
// configs it measures, as Run does, so that two tuners of one range time
// each config once: a config another tuner holds is left to it, and
// TimeConfigs waits for its record (claimPoll), measuring it after all
// if that tuner lets its claim go unmeasured. On cancellation it commits
// what finished and returns the context's error.
func TimeConfigs(ctx context.Context, t Task, cfgs []schedule.Config) (latest []*tunedb.Record, measured int, err error) {
	w := t.Workload()
	owner := tunedb.NewOwner()
	for {
		read := time.Now()
		latest, todo, err := latestOf(t.Store, w, cfgs)
		if err != nil || len(todo) == 0 {
			return latest, measured, err
		}
		mine, held, err := claimConfigs(t.Store, w, todo, owner, read)
		if err != nil {
			return nil, measured, err
		}
		if len(mine) > 0 {
			recs, err := measureConfigs(ctx, t, mine)
			if c, ok := t.Store.(Claimer); ok {
				c.Release(w, mine, owner)
			}
			measured += len(recs)
			if err != nil {
				return nil, measured, err
			}
		}
		if !held {
			latest, _, err := latestOf(t.Store, w, cfgs)
			return latest, measured, err
		}
		if err := claimPoll(ctx); err != nil {
			return nil, measured, err
		}
	}
}

// TimeMedians is TimeConfigs for a range tune's ranges.Tuner: the latest
// ok median of each of cfgs at t's workload, 0 for a config t's space
// refuses or whose latest record failed, and how many records it
// committed.
func TimeMedians(ctx context.Context, t Task, cfgs []schedule.Config) ([]float64, int, error) {
	var valid []schedule.Config
	for _, c := range cfgs {
		if t.Space.Valid(c) {
			valid = append(valid, c)
		}
	}
	latest, spent, err := TimeConfigs(ctx, t, valid)
	if err != nil {
		return nil, spent, err
	}
	out := make([]float64, len(cfgs))
	for i, c := range cfgs {
		if j := slices.IndexFunc(valid, c.Equal); j >= 0 && latest[j] != nil && latest[j].Status == tunedb.StatusOK {
			out[i] = latest[j].MedianNS
		}
	}
	return out, spent, nil
}

// claimPoll waits before TimeConfigs looks again for the records of
// configs another tuner holds; a variable, so that tests need not wait.
var claimPoll = func(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
		return nil
	}
}

// latestOf returns the latest record of each of cfgs for w (nil when it
// has none), and the configs without one, each once.
func latestOf(st Store, w tunedb.Workload, cfgs []schedule.Config) ([]*tunedb.Record, []schedule.Config, error) {
	recs, err := st.Records(w)
	if err != nil {
		return nil, nil, err
	}
	byConfig := map[string]*tunedb.Record{}
	for i := range recs { // by config, then time: the last is the latest
		byConfig[recs[i].Config.String()] = &recs[i]
	}
	latest := make([]*tunedb.Record, len(cfgs))
	var todo []schedule.Config
	for i, c := range cfgs {
		latest[i] = byConfig[c.String()]
		if latest[i] == nil && !slices.ContainsFunc(todo, c.Equal) {
			todo = append(todo, c)
		}
	}
	return latest, todo, nil
}

// claimConfigs claims cfgs for owner on a shared database and returns
// those it got, and whether another tuner holds any of the rest (see
// Claimer). A store that is no Claimer, or a database too busy to take
// the claims, gives every config unclaimed, as Run measures then.
func claimConfigs(st Store, w tunedb.Workload, cfgs []schedule.Config, owner tunedb.Owner, read time.Time) (mine []schedule.Config, held bool, err error) {
	c, ok := st.(Claimer)
	if !ok {
		return cfgs, false, nil
	}
	taken, err := c.Claim(w, cfgs, owner, read, claimLease)
	switch {
	case errors.Is(err, tunedb.ErrInUse):
		return cfgs, false, nil
	case err != nil:
		return nil, false, err
	}
	for i, cfg := range cfgs {
		if taken[i] {
			held = true
		} else {
			mine = append(mine, cfg)
		}
	}
	return mine, held, nil
}

// measureConfigs measures cfgs once each, in one batch, and commits and
// returns their records; on cancellation, those of the finished ones with
// the context's error.
func measureConfigs(ctx context.Context, t Task, cfgs []schedule.Config) ([]tunedb.Record, error) {
	results, err := t.Measurer.Measure(ctx, measure.Batch{Template: t.Template, Shape: t.Shape, DType: t.DType, Target: t.Target, Configs: cfgs})
	recs := newRecords(t, t.Workload(), results)
	if len(recs) > 0 {
		if cerr := commit(t.Store, recs); cerr != nil {
			return nil, cerr
		}
	}
	return recs, err
}
