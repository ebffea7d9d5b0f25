package gen

import (
	"cmp"
	"slices"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// A Selection is what gen plans for one op of one template on one target,
// whatever consumer writes it (the Go/CPU package here, the CUDA package
// of gen/cuda): the winner of every tuned shape, to be specialised to it;
// the winners whose shape-generic kernels serve the other shapes; the
// template's default, generic too, the last resort of dispatch.
type Selection struct {
	Tuned   []Tuned           // by shape
	Generic []schedule.Config // the winners that win the most shapes, at most Variants, then those of Ranges' buckets
	Default schedule.Config   // the template's default at the op's example shape
	Ranges  []Range           // the tuned shape ranges (AddRanges); dispatch goes exact → bucket → nearest → default
}

// Tuned is a tuned shape and its winning record.
type Tuned struct {
	Shape  []int
	Record tunedb.Record
}

// Select returns the Selection of tmpl on target from sums: the best
// records of tmpl's op, version and dtype dt on the devices that match
// accepts (fingerprints), at most variants generic winners (ranked as
// rankWinners does).
func Select(sums []tunedb.Summary, tmpl kernels.Template, dt dtype.DType, target device.Target, match func(fingerprint string) bool, variants int) (Selection, error) {
	var s Selection
	for _, sum := range sums {
		w := sum.Workload
		if sum.Best != nil && w.Op == tmpl.Op.Name && w.DType == dt && w.Template == tmpl.Version && match(w.Device) {
			s.Tuned = append(s.Tuned, Tuned{Shape: slices.Clone(w.Shape), Record: *sum.Best})
		}
	}
	slices.SortFunc(s.Tuned, func(a, b Tuned) int {
		return cmp.Or(slices.Compare(a.Shape, b.Shape), cmp.Compare(a.Record.MedianNS, b.Record.MedianNS))
	})
	// Two records of one shape (two GPUs of an architecture): the faster wins.
	s.Tuned = slices.CompactFunc(s.Tuned, func(a, b Tuned) bool { return slices.Equal(a.Shape, b.Shape) })
	s.Generic = rankWinners(s.Tuned, variants)
	example, err := tmpl.Op.ParseShape(tmpl.Op.Example)
	if err != nil {
		return s, err
	}
	s.Default, err = tmpl.DefaultConfig(example, target)
	return s, err
}

// rankWinners returns the configs of tuned that win the most shapes, at
// most n (ties: the winner of the larger shape, then config order).
func rankWinners(tuned []Tuned, n int) []schedule.Config {
	type winner struct {
		cfg    schedule.Config
		shapes int
		size   float64
	}
	var winners []winner
	for _, t := range tuned {
		size := 1.0
		for _, n := range t.Shape {
			size *= float64(n)
		}
		i := slices.IndexFunc(winners, func(w winner) bool { return w.cfg.Equal(t.Record.Config) })
		if i < 0 {
			winners = append(winners, winner{cfg: t.Record.Config})
			i = len(winners) - 1
		}
		winners[i].shapes++
		winners[i].size = max(winners[i].size, size)
	}
	slices.SortStableFunc(winners, func(a, b winner) int {
		return cmp.Or(-cmp.Compare(a.shapes, b.shapes), -cmp.Compare(a.size, b.size), cmp.Compare(a.cfg.String(), b.cfg.String()))
	})
	var out []schedule.Config
	for _, w := range winners[:min(len(winners), max(n, 0))] {
		out = append(out, w.cfg)
	}
	return out
}

// A Range is a tuned range of shapes (tunedb.Range): a shape inside it
// that was not tuned runs the generic kernel of the winner of its nearest
// bucket (tunedb.NearestShape), even when a shape outside the range, or
// a held-out shape the range tune measured, is nearer.
type Range struct {
	Lo, Hi  []int
	Buckets [][]int // tuned shapes of the range, each with a Tuned entry
}

// tunedb returns r as the database keeps a range: what tunedb.Serve,
// which dispatch follows, takes.
func (r Range) tunedb() tunedb.Range {
	return tunedb.Range{Workload: tunedb.Workload{Shape: r.Lo}, Hi: r.Hi, Buckets: r.Buckets}
}

// String writes r as autotune reads it: "1..64x64".
func (r Range) String() string { return r.tunedb().String() }

// AddRanges adds to s the ranges of rs of its op (tmpl's op, version and
// dtype dt, on the devices match accepts) and the winners of their
// buckets to s.Generic, so that every bucket has a generic kernel. A
// bucket without a Tuned entry (no config passed there) is left out, and
// a range left without buckets.
func (s *Selection) AddRanges(rs []tunedb.Range, tmpl kernels.Template, dt dtype.DType, match func(fingerprint string) bool) {
	s.Ranges = rangesOf(rs, tmpl.Op.Name, tmpl.Version, dt, match, s.Tuned)
	s.Generic = withBuckets(s.Generic, s.Ranges, s.Tuned)
}

// rangesOf returns the ranges of rs of op, template version and dtype on
// the devices match accepts, each with the buckets tuned has.
func rangesOf(rs []tunedb.Range, op, version string, dt dtype.DType, match func(string) bool, tuned []Tuned) []Range {
	var out []Range
	for _, r := range rs {
		w := r.Workload
		if w.Op != op || w.Template != version || w.DType != dt || !match(w.Device) {
			continue
		}
		g := Range{Lo: slices.Clone(w.Shape), Hi: slices.Clone(r.Hi)}
		for _, b := range r.Buckets {
			if slices.ContainsFunc(tuned, func(t Tuned) bool { return slices.Equal(t.Shape, b) }) {
				g.Buckets = append(g.Buckets, slices.Clone(b))
			}
		}
		if len(g.Buckets) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// withBuckets returns generic with the winners of the ranges' buckets it
// lacks appended, in the order of the ranges and their buckets.
func withBuckets(generic []schedule.Config, ranges []Range, tuned []Tuned) []schedule.Config {
	for _, r := range ranges {
		for _, b := range r.Buckets {
			i := slices.IndexFunc(tuned, func(t Tuned) bool { return slices.Equal(t.Shape, b) })
			if w := tuned[i].Record.Config; !slices.ContainsFunc(generic, w.Equal) {
				generic = append(generic, w)
			}
		}
	}
	return generic
}
