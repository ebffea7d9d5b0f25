package costmodel

import (
	"fmt"
	"math"
)

// Sample is one training row: the features of a measured config and its
// measured cost.
type Sample struct {
	// Features is the config's feature vector (see the package doc). Every
	// row given to one model has the same layout, and so the same length.
	Features []float64
	// Group names the workload the config was measured on, e.g.
	// "softmax 4096x1024 f32". Costs are comparable only within a group.
	Group string
	// Cost is the median time per call in nanoseconds, or +Inf for a
	// config that failed to build, crashed, timed out or computed a wrong
	// answer.
	Cost float64
}

// check reports whether the rows can be trained on, and returns their
// feature count.
func check(rows []Sample) (int, error) {
	if len(rows) == 0 {
		return 0, fmt.Errorf("costmodel: no rows to fit")
	}
	width := len(rows[0].Features)
	if width > maxFeatures {
		return 0, fmt.Errorf("costmodel: %d features, at most %d", width, maxFeatures)
	}
	for i, r := range rows {
		if len(r.Features) != width {
			return 0, fmt.Errorf("costmodel: row %d has %d features, row 0 has %d: rows of one model share a feature layout", i, len(r.Features), width)
		}
		for j, x := range r.Features {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return 0, fmt.Errorf("costmodel: row %d: feature %d is %v", i, j, x)
			}
		}
		if !(r.Cost > 0) { // also NaN
			return 0, fmt.Errorf("costmodel: row %d: cost %v: want > 0, or +Inf for a failure", i, r.Cost)
		}
	}
	return width, nil
}

// groups returns the rows of each group, groups in order of first
// appearance, rows in input order.
func groups(rows []Sample) [][]int {
	index := make(map[string]int)
	var out [][]int
	for i, r := range rows {
		g, ok := index[r.Group]
		if !ok {
			g = len(out)
			index[r.Group] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out
}

// targets normalizes costs to relative throughput within each group:
// y = best/cost, so the group's fastest config has 1, a config twice as slow
// 0.5, and a failure 0 (the limit of an ever slower config). A group where
// every config failed has 0 throughout.
func targets(rows []Sample, grp [][]int) []float64 {
	y := make([]float64, len(rows))
	for _, g := range grp {
		best := math.Inf(1)
		for _, i := range g {
			best = min(best, rows[i].Cost)
		}
		for _, i := range g {
			if !math.IsInf(rows[i].Cost, 1) {
				y[i] = best / rows[i].Cost
			}
		}
	}
	return y
}
