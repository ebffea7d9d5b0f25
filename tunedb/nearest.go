package tunedb

import (
	"cmp"
	"math"
	"slices"
)

// ShapeDistance is how far apart two shapes are, in doublings: the sum over
// dimensions of |log2 a[i] - log2 b[i]|. 2048x1024 is 1 from 1024x1024, and
// so are 1024x512 and 512x1024; 512x2048 is 2 from it. The distance is a
// ratio, not a difference, because what a tuned config is good for scales
// with the size of a dimension: 64 and 128 are as far apart as 4096 and
// 8192. Shapes of different ranks are +Inf apart, as no dimension of one
// corresponds to a dimension of the other. Dimensions are at least 1, as in
// a valid Workload.
func ShapeDistance(a, b []int) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d += math.Abs(math.Log2(float64(a[i])) - math.Log2(float64(b[i])))
	}
	return d
}

// Nearest returns up to n of candidates that differ from w at most in
// shape (the same op, dtype, device and template, a shape of the same
// rank), nearest to w's shape first by ShapeDistance; w's own shape, if
// among them, comes first at distance 0. Of shapes equally far, the smaller
// comes first (fewer elements, then the smaller first differing dimension),
// so the answer does not depend on the order of candidates. Candidates are
// not changed; a workload given twice is returned twice.
func Nearest(w Workload, candidates []Workload, n int) []Workload {
	type near struct {
		w        Workload
		distance float64
		size     float64
	}
	var ns []near
	for _, c := range candidates {
		if c.Op != w.Op || c.DType != w.DType || c.Device != w.Device || c.Template != w.Template || len(c.Shape) != len(w.Shape) {
			continue
		}
		size := 1.0
		for _, d := range c.Shape {
			size *= float64(d)
		}
		ns = append(ns, near{c, ShapeDistance(w.Shape, c.Shape), size})
	}
	slices.SortStableFunc(ns, func(a, b near) int {
		return cmp.Or(cmp.Compare(a.distance, b.distance), cmp.Compare(a.size, b.size), slices.Compare(a.w.Shape, b.w.Shape))
	})
	out := make([]Workload, 0, max(0, min(n, len(ns))))
	for _, x := range ns[:cap(out)] {
		out = append(out, x.w)
	}
	return out
}

// PreferToolchain returns one summary of each group of sums that differ
// only in their workload's toolchain, in the order the groups first
// appear: the one of toolchain tc when it has a best record, else, of those
// with one, the one whose best was measured last (another toolchain's, or
// an unknown one's: "" is every record written before schema 2), else the
// first. A kernel's speed depends on the toolchain that built it, so a
// caller that knows its toolchain (tc != "") must say so when the summary
// it gets is of another one: Workload.Toolchain != tc.
func PreferToolchain(sums []Summary, tc string) []Summary {
	var out []Summary
	group := map[string]int{} // key without the toolchain → index in out
	for _, s := range sums {
		w := s.Workload
		w.Toolchain = ""
		i, ok := group[w.Key()]
		if !ok {
			group[w.Key()] = len(out)
			out = append(out, s)
			continue
		}
		if better(s, out[i], tc) {
			out[i] = s
		}
	}
	return out
}

// better reports whether a is to be preferred to b for toolchain tc.
func better(a, b Summary, tc string) bool {
	switch {
	case a.Best == nil:
		return false
	case b.Best == nil:
		return true
	case tc != "" && (a.Workload.Toolchain == tc) != (b.Workload.Toolchain == tc):
		return a.Workload.Toolchain == tc
	}
	return a.Best.Time.After(b.Best.Time)
}

// A Serving says which tuned shape serves a shape, and by which rule
// (Serve).
type Serving struct {
	Tuned int  // the index in tuned of the shape whose winner serves; -1: none does, the default serves
	Exact bool // tuned[Tuned] is the shape itself
	Range int  // the index in ranges of the range whose bucket serves; -1 unless a bucket does
}

// Serve is the rule by which gen's dispatch and lookup's answers choose
// the tuned shape whose winner serves shape: exact, bucket, nearest,
// default. The shape itself when tuned holds it; else, when a range of
// ranges contains it, that range's bucket nearest to it (NearestShape)
// among the buckets tuned holds, the first such range deciding; else the
// nearest of tuned (NearestShape) that generic accepts (nil accepts
// every one); else none: the default serves.
func Serve(shape []int, tuned [][]int, ranges []Range, generic func(i int) bool) Serving {
	at := func(s []int) int { return slices.IndexFunc(tuned, func(t []int) bool { return slices.Equal(t, s) }) }
	if i := at(shape); i >= 0 {
		return Serving{Tuned: i, Exact: true, Range: -1}
	}
	for ri, r := range ranges {
		if !r.Contains(shape) {
			continue
		}
		var buckets [][]int
		for _, b := range r.Buckets {
			if at(b) >= 0 {
				buckets = append(buckets, b)
			}
		}
		if j := NearestShape(shape, buckets); j >= 0 {
			return Serving{Tuned: at(buckets[j]), Range: ri}
		}
	}
	var cands [][]int
	var index []int
	for i, t := range tuned {
		if generic == nil || generic(i) {
			cands, index = append(cands, t), append(index, i)
		}
	}
	if j := NearestShape(shape, cands); j >= 0 {
		return Serving{Tuned: index[j], Range: -1}
	}
	return Serving{Tuned: -1, Range: -1}
}
