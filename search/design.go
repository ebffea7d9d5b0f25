package search

import (
	"cmp"
	"math/rand/v2"
	"slices"

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
// holds valid configs only. It returns fewer than n when sampling fails.
func spread(space *schedule.Space, r *rand.Rand, seen seenSet, near []schedule.Config, n int,
	skip func(schedule.Config) bool) []schedule.Config {
	if n <= 0 {
		return nil
	}
	pos := knobPositions(space)
	cfgs := pool(space, r, seen, designPool*n, skip)
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

// pool returns up to size distinct valid configs of space drawn at random
// that seen does not hold and skip (when set) does not rule out; fewer
// when sampling keeps failing or hitting those.
func pool(space *schedule.Space, r *rand.Rand, seen seenSet, size int, skip func(schedule.Config) bool) []schedule.Config {
	var cfgs []schedule.Config
	inPool := map[string]bool{}
	for misses := 0; len(cfgs) < size && misses < 10*size; {
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
	return cfgs
}

// rankLimit bounds the spaces whose every point ranked reads: up to it,
// all the valid configs are candidates, beyond it a random pool.
const rankLimit = 1 << 15

// rankTie and rankFloor shape ranked's batch. Configs the estimate places
// within rankTie of each other count as equally good: 5%, the margin
// within which the suite counts a config as good as the best. rankFloor
// is the distance (knobPositions) a pick must first keep from every other:
// one knob from end to end, or one enum or bool changed.
const (
	rankTie   = 1.05
	rankFloor = 1.0
)

// ranked returns up to n valid configs of space that seen does not hold
// and skip (when set) does not rule out, for a first batch led by an
// estimate. The candidates go in groups, best first: those left that the
// estimate cannot tell from the best of them (within rankTie for a Timer,
// the same score otherwise). Within a group, in the estimate's order, a
// candidate is taken when it lies at least a floor away from every config
// taken or in near, the floor starting at rankFloor and halving whenever
// a pass over the group leaves candidates behind. An estimate orders
// configs roughly (its τ against the recorded landscapes is 0.6 to 0.8)
// and cannot tell apart configs that differ in knobs it does not model,
// so the best by estimate alone are one config and its near copies; the
// floor spends the batch on the best of different kinds instead. Ties
// break at random, by r. The candidates are every valid config of a space
// of up to rankLimit points, a random pool of designPool per config asked
// for otherwise.
func ranked(space *schedule.Space, r *rand.Rand, seen seenSet, near []schedule.Config, n int,
	skip func(schedule.Config) bool, est Estimator) []schedule.Config {
	if n <= 0 {
		return nil
	}
	var cfgs []schedule.Config
	if space.Size() <= rankLimit {
		for i := range space.Size() {
			c := space.At(i)
			if space.Valid(c) && !seen[c.String()] && (skip == nil || !skip(c)) {
				cfgs = append(cfgs, c)
			}
		}
		r.Shuffle(len(cfgs), func(i, j int) { cfgs[i], cfgs[j] = cfgs[j], cfgs[i] })
	} else {
		cfgs = pool(space, r, seen, designPool*n, skip)
	}
	scores := est.Estimate(cfgs)
	order := make([]int, len(cfgs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	pos := knobPositions(space)
	var taken [][]float64
	for _, c := range near {
		if space.Check(c) == nil {
			taken = append(taken, pos(c))
		}
	}
	_, times := est.(Timer)
	tie := func(best, s float64) bool {
		if times {
			return best < 0 && s/best <= rankTie // both negative: s ≤ best
		}
		return s == best
	}
	var out []schedule.Config
	used := make([]bool, len(cfgs))
	for len(out) < n {
		// The group: the candidates left that the estimate cannot
		// tell from the best of them (tie).
		var group []int
		for _, i := range order {
			if !used[i] && (len(group) == 0 || tie(scores[group[0]], scores[i])) {
				group = append(group, i)
			}
		}
		if len(group) == 0 {
			break
		}
		for floor := rankFloor; len(out) < n; floor /= 2 {
			if floor < 1e-3 {
				floor = 0
			}
			left := false
			for _, i := range group {
				if len(out) == n {
					break
				}
				if used[i] {
					continue
				}
				p := pos(cfgs[i])
				if !farFrom(p, taken, floor) {
					left = true
					continue
				}
				used[i] = true
				seen.add(cfgs[i])
				out = append(out, cfgs[i])
				taken = append(taken, p)
			}
			if !left {
				break
			}
		}
	}
	return out
}

// farFrom reports whether p is at least floor from every position of ps.
func farFrom(p []float64, ps [][]float64, floor float64) bool {
	for _, q := range ps {
		if distance(p, q) < floor {
			return false
		}
	}
	return true
}
