package search

import (
	"math/rand/v2"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// minDistance is the smallest distance between two of cfgs.
func minDistance(s *schedule.Space, cfgs []schedule.Config) float64 {
	pos := knobPositions(s)
	d := -1.0
	for i := range cfgs {
		for j := range i {
			if x := distance(pos(cfgs[i]), pos(cfgs[j])); d < 0 || x < d {
				d = x
			}
		}
	}
	return d
}

// TestSpreadFillsTheSpace: a design of 16 configs is valid, new and
// farther apart than 16 independent draws of the same generator, for
// every seed tried, and keeps away from the configs it is told of.
func TestSpreadFillsTheSpace(t *testing.T) {
	s := landscapeSpace()
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 1))
		taken, _ := s.Parse("a=1,b=1,c=1,d=1")
		seen := newSeen(map[string]bool{taken.String(): true})
		design := spread(s, r, seen, []schedule.Config{taken}, 16, nil)
		if len(design) != 16 {
			t.Fatalf("seed %d: %d configs, want 16", seed, len(design))
		}
		fresh := map[string]bool{}
		for _, c := range design {
			if !s.Valid(c) || fresh[c.String()] || c.Equal(taken) || !seen[c.String()] {
				t.Errorf("seed %d: %s is invalid, repeated, already measured, or not marked seen", seed, c)
			}
			fresh[c.String()] = true
		}
		var draws []schedule.Config
		for range 16 {
			c, _ := s.Sample(r)
			draws = append(draws, c)
		}
		if dd, dr := minDistance(s, design), minDistance(s, draws); dd <= dr {
			t.Errorf("seed %d: the design's closest pair is %.2f apart, independent draws' %.2f", seed, dd, dr)
		}
		if d := minDistance(s, append(design, taken)); d < 1 {
			t.Errorf("seed %d: a config of the design is %.2f from the one measured before", seed, d)
		}
	}
}

// TestSpreadRespectsConstraints on a space where most points are invalid.
func TestSpreadRespectsConstraints(t *testing.T) {
	s := space() // 20 valid configs
	seen := newSeen(nil)
	design := spread(s, rand.New(rand.NewPCG(3, 0)), seen, nil, 30, nil)
	if len(design) != 20 {
		t.Errorf("%d configs from a space of 20 valid ones, want all 20", len(design))
	}
	for _, c := range design {
		if !s.Valid(c) {
			t.Errorf("%s is not valid", c)
		}
	}
}
