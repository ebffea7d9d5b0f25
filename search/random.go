package search

import (
	"math/rand/v2"

	"github.com/autotune-dev/autotune/schedule"
)

// shuffleLimit is the largest space Random enumerates and shuffles, which
// guarantees it finds every valid config; larger spaces are sampled.
const shuffleLimit = 1 << 16

// Random proposes valid configs uniformly at random, without repeats.
type Random struct {
	space *schedule.Space
	rng   *rand.Rand
	seen  seenSet
	order []int64 // small spaces: every index, shuffled; nil for large ones
}

var _ Strategy = (*Random)(nil)

// NewRandom returns a random search over space.
func NewRandom(space *schedule.Space, opts Options) *Random {
	r := &Random{space: space, rng: opts.rand(), seen: newSeen(opts.Measured)}
	if space.Size() <= shuffleLimit {
		r.order = make([]int64, space.Size())
		for i := range r.order {
			r.order[i] = int64(i)
		}
		r.rng.Shuffle(len(r.order), func(i, j int) { r.order[i], r.order[j] = r.order[j], r.order[i] })
	}
	return r
}

// Next returns up to n valid configs not proposed or measured before.
func (r *Random) Next(n int) ([]schedule.Config, error) {
	var out []schedule.Config
	if r.order != nil {
		for len(out) < n && len(r.order) > 0 {
			c := r.space.At(r.order[0])
			r.order = r.order[1:]
			if r.space.Valid(c) && r.seen.add(c) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	// A large space: draw valid configs and drop repeats. Running into many
	// repeats in a row means the space is close to exhausted; stop there.
	misses := 0
	for len(out) < n && misses < 100*n {
		c, err := r.space.Sample(r.rng)
		if err != nil {
			return out, err
		}
		if r.seen.add(c) {
			out = append(out, c)
			misses = 0
		} else {
			misses++
		}
	}
	return out, nil
}

// Tell does nothing: random search does not learn.
func (r *Random) Tell([]schedule.Config, []float64) {}
