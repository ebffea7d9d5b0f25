package search

import (
	"math/rand/v2"

	"github.com/autotune-dev/autotune/schedule"
)

// Strategy proposes configs to measure and learns from their costs.
type Strategy interface {
	// Next returns up to n valid configs never proposed or measured before.
	// It returns fewer, possibly none, when the space is exhausted.
	Next(n int) ([]schedule.Config, error)
	// Tell reports the costs of configs Next proposed: nanoseconds per call,
	// +Inf for a candidate that failed.
	Tell(configs []schedule.Config, costs []float64)
}

// Options are shared by the strategies. The zero value is usable.
type Options struct {
	// Seed fixes every random choice.
	Seed uint64
	// Measured holds the canonical text of configs measured in earlier runs;
	// they are never proposed.
	Measured map[string]bool
}

func (o Options) rand() *rand.Rand {
	return rand.New(rand.NewPCG(o.Seed, 0x61757475_6e65)) // second word: "autune", any constant will do
}

// seenSet tracks the configs measured or proposed so far.
type seenSet map[string]bool

func newSeen(measured map[string]bool) seenSet {
	s := make(seenSet, len(measured))
	for k := range measured {
		s[k] = true
	}
	return s
}

// add marks c as proposed and reports whether it was new.
func (s seenSet) add(c schedule.Config) bool {
	k := c.String()
	if s[k] {
		return false
	}
	s[k] = true
	return true
}
