package search

import "github.com/autotune-dev/autotune/schedule"

// Grid proposes every valid config in index order (last knob fastest).
type Grid struct {
	space *schedule.Space
	next  int64
	seen  seenSet
}

var _ Strategy = (*Grid)(nil)

// NewGrid returns a grid search over space.
func NewGrid(space *schedule.Space, opts Options) *Grid {
	return &Grid{space: space, seen: newSeen(opts.Measured)}
}

// Next returns the next n valid, unmeasured configs in index order.
func (g *Grid) Next(n int) ([]schedule.Config, error) {
	var out []schedule.Config
	for ; len(out) < n && g.next < g.space.Size(); g.next++ {
		c := g.space.At(g.next)
		if g.space.Valid(c) && g.seen.add(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Tell does nothing: a grid does not learn.
func (g *Grid) Tell([]schedule.Config, []float64) {}
