package tune

import (
	"context"
	"fmt"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/tunedb"
)

// CrossMeasurer is a measurer of several machines (remote.Measurer) that
// can measure a batch on a machine other than those it names, by the names
// that its results give in measure.Result.Measurer; ok is false when it has
// no such machine. A run on one checks its leaders: a worker's figures are
// not taken on its word.
type CrossMeasurer interface {
	MeasureExcept(ctx context.Context, b measure.Batch, not []string) (results []measure.Result, ok bool, err error)
}

// AgreeMargin is how far apart two measurements of one config on different
// machines may be and still agree, as a fraction of each median: beyond
// their p20–p80 spreads, machines of one fingerprint differ a little, and
// a busy machine a little more.
const AgreeMargin = 0.25

// Agree reports whether two ok measurements of one config agree: whether
// their p20–p80 ranges, each widened by AgreeMargin of its median on both
// sides, overlap.
func Agree(a, b tunedb.Record) bool {
	lo := func(r tunedb.Record) float64 { return min(r.P20NS, r.MedianNS) - AgreeMargin*r.MedianNS }
	hi := func(r tunedb.Record) float64 { return max(r.P80NS, r.MedianNS) + AgreeMargin*r.MedianNS }
	return lo(a) <= hi(b) && lo(b) <= hi(a)
}

// check measures the leaders top again on another machine than the one
// that measured each (their latest records), and settles each
// disagreement with a third machine: the figures the third does not side
// with are marked suspect (tunedb.Record.Suspect), so that they never rank
// the config; with no third machine, both are. A leader whose machine has
// no other is measured again as remeasureOnce does. It reports false when
// cancelled.
func (s *Summary) check(ctx context.Context, t Task, w tunedb.Workload, cross CrossMeasurer, top []tunedb.Record) (bool, error) {
	var leaders []tunedb.Record
	for _, group := range byMeasurer(top) {
		pooled, ok, err := measureExcept(ctx, t, cross, group, measurerName(group[0]))
		if err == nil && !ok {
			// No other machine: this one's word, measured again.
			pooled, err = measureLeaders(ctx, t, group, t.Measurer.Measure)
		}
		if err != nil {
			return false, err
		}
		if pooled == nil {
			s.Interrupted = true
			return false, nil
		}
		recs := newRecords(t, w, pooled)
		var marked []tunedb.Record
		if ok {
			third, m, done, err := s.settle(ctx, t, w, cross, group, recs)
			if err != nil || !done {
				s.Interrupted = err == nil
				return false, err
			}
			recs, marked = append(recs, third...), m
		}
		if err := s.commitLeaders(t, recs, marked); err != nil {
			return false, err
		}
		leaders = append(leaders, recs[:len(group)]...)
	}
	s.setLeaders(leaders)
	return true, nil
}

// settle compares each leader of group with its measurement on another
// machine (again, at the same index) and measures those that disagree on a
// third machine, marking suspect the figures the third does not side with:
// in again and third in place, and the leaders, which it returns marked.
// It reports false when cancelled.
func (s *Summary) settle(ctx context.Context, t Task, w tunedb.Workload, cross CrossMeasurer, group, again []tunedb.Record) (third, marked []tunedb.Record, done bool, _ error) {
	var disputed []tunedb.Record
	var at []int
	for i, r := range again {
		if r.Status == tunedb.StatusOK && !Agree(group[i], r) {
			disputed, at = append(disputed, group[i]), append(at, i)
		}
	}
	if len(disputed) == 0 {
		return nil, nil, true, nil
	}
	pooled, ok, err := measureExcept(ctx, t, cross, disputed, measurerName(group[0]), measurerName(again[at[0]]))
	if err != nil || ok && pooled == nil {
		return nil, nil, false, err
	}
	if ok {
		third = newRecords(t, w, pooled)
	}
	for k, i := range at {
		l, p := group[i], &again[i]
		why := fmt.Sprintf("%s measured %.4g ns, %s %.4g ns", nameOf(l), l.MedianNS, nameOf(*p), p.MedianNS)
		if !ok || third[k].Status != tunedb.StatusOK {
			// Nobody to say which is right: neither ranks the config.
			why += ", and no third measurer could say which is right"
			marked, p.Suspect = append(marked, suspect(l, why)), why
			continue
		}
		q := &third[k]
		why += fmt.Sprintf(", %s %.4g ns", nameOf(*q), q.MedianNS)
		switch lq, pq := Agree(l, *q), Agree(*p, *q); {
		case lq && !pq:
			p.Suspect = why
		case pq && !lq:
			marked = append(marked, suspect(l, why))
		case !lq && !pq:
			marked, p.Suspect, q.Suspect = append(marked, suspect(l, why)), why, why
		}
	}
	return third, marked, true, nil
}

// measureExcept measures leaders in rounds on a machine none of not and
// pools the rounds; ok is false when there is none, and the pooled results
// are nil without an error when cancelled.
func measureExcept(ctx context.Context, t Task, cross CrossMeasurer, leaders []tunedb.Record, not ...string) (pooled []measure.Result, ok bool, _ error) {
	pooled, err := measureLeaders(ctx, t, leaders, func(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
		var results []measure.Result
		var err error
		results, ok, err = cross.MeasureExcept(ctx, b, not)
		if !ok && err == nil {
			results = make([]measure.Result, len(b.Configs)) // pooled, then dropped
		}
		return results, err
	})
	return pooled, ok, err
}

// byMeasurer groups records by the machine that measured them, in the
// order each first appears.
func byMeasurer(recs []tunedb.Record) [][]tunedb.Record {
	var groups [][]tunedb.Record
	at := map[string]int{}
	for _, r := range recs {
		name := measurerName(r)
		i, ok := at[name]
		if !ok {
			i, at[name] = len(groups), len(groups)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

// measurerName is the name of the machine that measured r: "" for the
// tuner's own process or an unknown one.
func measurerName(r tunedb.Record) string {
	if r.Measurer == nil {
		return ""
	}
	return r.Measurer.Name
}

// nameOf names r's measurer for a person.
func nameOf(r tunedb.Record) string {
	if n := measurerName(r); n != "" {
		return n
	}
	return "the tuner"
}

// suspect returns r marked suspect for why.
func suspect(r tunedb.Record, why string) tunedb.Record {
	r.Suspect = why
	return r
}
