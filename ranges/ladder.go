package ranges

import (
	"math"
	"slices"
)

// Ladder returns up to levels points from lo to hi, ends included, spaced
// geometrically and rounded to integers, without repeats: 1..64 with 9
// levels is 1 2 3 5 8 13 23 38 64.
func Ladder(lo, hi, levels int) []int {
	if lo >= hi || levels < 2 {
		return []int{lo}
	}
	ratio := float64(hi) / float64(lo)
	var out []int
	for i := range levels {
		n := int(math.Round(float64(lo) * math.Pow(ratio, float64(i)/float64(levels-1))))
		n = min(max(n, lo), hi)
		if len(out) == 0 || n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return out
}

// Candidates returns the shapes of the product of the ladders of the
// extents of the range from lo to hi, in lexical order.
func Candidates(lo, hi []int, levels int) [][]int {
	ladders := make([][]int, len(lo))
	for d := range lo {
		ladders[d] = Ladder(lo[d], hi[d], levels)
	}
	return product(ladders)
}

// FirstBuckets returns the shapes a range tune tunes first: the product
// of the ends and the middle point of each extent's ladder of levels
// points (1..64 with 9: 1, 8 and 64).
func FirstBuckets(lo, hi []int, levels int) [][]int {
	ladders := make([][]int, len(lo))
	for d := range lo {
		l := Ladder(lo[d], hi[d], levels)
		ladders[d] = slices.Compact([]int{l[0], l[len(l)/2], l[len(l)-1]})
	}
	return product(ladders)
}

// product returns every shape taking extent d from ladders[d], in lexical
// order.
func product(ladders [][]int) [][]int {
	out := [][]int{nil}
	for _, l := range ladders {
		var next [][]int
		for _, prefix := range out {
			for _, n := range l {
				next = append(next, append(slices.Clone(prefix), n))
			}
		}
		out = next
	}
	return out
}

// TailWidth is the widest vector an extent is split into (16 float32
// lanes, AVX-512): an extent that is not a multiple of it makes a kernel
// run its tail loop, which a winner tuned only at multiples never ran.
const TailWidth = 16

// hasTail reports whether an extent of shape is not a multiple of
// TailWidth.
func hasTail(shape []int) bool {
	return slices.ContainsFunc(shape, func(n int) bool { return n%TailWidth != 0 })
}

// withTail returns cands, the candidates of the range from lo to hi,
// with a shape of a vector tail added when none has one and the range
// holds one: the middle candidate with its first ranged extent one less
// (or one more, where that is no tail or leaves the range).
func withTail(cands [][]int, lo, hi []int) [][]int {
	if len(cands) == 0 || slices.ContainsFunc(cands, hasTail) {
		return cands
	}
	mid := cands[len(cands)/2]
	for d := range mid {
		for _, n := range []int{mid[d] - 1, mid[d] + 1} {
			if n >= lo[d] && n <= hi[d] && n%TailWidth != 0 {
				s := slices.Clone(mid)
				s[d] = n
				return append(cands, s)
			}
		}
	}
	return cands
}
