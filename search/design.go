package search

import (
	"math/rand/v2"

	"github.com/autotune-dev/autotune/schedule"
)

// designPool is how many random valid configs a space-filling design picks
// from, per config it picks.
const designPool = 32

// spread returns up to n valid configs of space that seen does not hold
// and skip (when set) does not rule out, spread over the space: a greedy maximin design, in which each pick is,
// of a pool of random valid draws, the one farthest from every config
// picked or already in near. Independent draws cluster by chance, and a
// first batch that covers every value of every knob teaches a model more
// than one that repeats a few. Constraints are respected because the pool
// holds valid configs only. narrow, when set, keeps part of the pool
// (the most promising by an estimate) before the picks. It returns fewer
// than n when sampling fails.
func spread(space *schedule.Space, r *rand.Rand, seen seenSet, near []schedule.Config, n int,
	skip func(schedule.Config) bool, narrow func([]schedule.Config) []schedule.Config) []schedule.Config {
	if n <= 0 {
		return nil
	}
	pos := knobPositions(space)
	var cfgs []schedule.Config
	inPool := map[string]bool{}
	for misses := 0; len(cfgs) < designPool*n && misses < 10*designPool*n; {
		c, err := space.Sample(r)
		if err != nil {
			break
		}
		k := c.String()
		if seen[k] || inPool[k] || skip != nil && skip(c) {
			misses++
			continue
		}
		inPool[k] = true
		cfgs = append(cfgs, c)
	}
	if narrow != nil {
		cfgs = narrow(cfgs)
	}
	pool := make([][]float64, len(cfgs))
	for i, c := range cfgs {
		pool[i] = pos(c)
	}
	// nearest[i] is the distance of pool[i] to the closest config chosen
	// so far (or in near).
	nearest := make([]float64, len(pool))
	for i := range nearest {
		nearest[i] = float64(len(space.Knobs())) + 1 // farther than any two configs
	}
	update := func(p []float64) {
		for i, q := range pool {
			nearest[i] = min(nearest[i], distance(p, q))
		}
	}
	for _, c := range near {
		if space.Check(c) == nil {
			update(pos(c))
		}
	}
	var out []schedule.Config
	for len(out) < n {
		best := -1
		for i := range pool {
			if nearest[i] >= 0 && (best < 0 || nearest[i] > nearest[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		seen.add(cfgs[best])
		out = append(out, cfgs[best])
		update(pool[best])
		nearest[best] = -1 // taken
	}
	return out
}

// knobPositions returns a function that places a config of space in the
// unit cube, one coordinate per knob: a choice knob's value by its rank
// among the knob's values (sizes are ordered), an enum's or bool's as 0 or
// 1 per value (one-hot, halved so that any change of value is a distance
// of 1 as for the ends of a choice).
func knobPositions(space *schedule.Space) func(schedule.Config) []float64 {
	knobs := space.Knobs()
	rank := make([]map[schedule.Value]int, len(knobs))
	for k, knob := range knobs {
		rank[k] = map[schedule.Value]int{}
		for j, v := range knob.Values {
			rank[k][v] = j
		}
	}
	return func(c schedule.Config) []float64 {
		var p []float64
		for k, knob := range knobs {
			j := rank[k][c.Get(knob.Name)]
			n := len(knob.Values)
			switch {
			case n == 1:
			case knob.Kind == schedule.ChoiceKind:
				p = append(p, float64(j)/float64(n-1))
			default:
				for i := range n {
					if i == j {
						p = append(p, 0.5)
					} else {
						p = append(p, 0)
					}
				}
			}
		}
		return p
	}
}

// distance is the L1 distance between two positions.
func distance(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		if a[i] > b[i] {
			d += a[i] - b[i]
		} else {
			d += b[i] - a[i]
		}
	}
	return d
}
