package search

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// costEstimate is an Estimator from cost: sign 1 ranks the fastest first
// (a good estimate), -1 the slowest (one the measurements contradict).
type costEstimate float64

func (s costEstimate) Estimate(cfgs []schedule.Config) []float64 {
	out := make([]float64, len(cfgs))
	for i, c := range cfgs {
		out[i] = -float64(s) * cost(c)
	}
	return out
}

func medianCost(cfgs []schedule.Config) float64 {
	costs := make([]float64, len(cfgs))
	for i, c := range cfgs {
		costs[i] = cost(c)
	}
	slices.Sort(costs)
	return costs[len(costs)/2]
}

// TestEstimateNarrowsFirstBatch: with no model yet, a good estimate
// makes the first batch faster than the plain space-filling design, for
// every seed, and the batch is still new and valid.
func TestEstimateNarrowsFirstBatch(t *testing.T) {
	s := landscapeSpace()
	for seed := range uint64(8) {
		plain, err := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: seed}}).Next(16)
		if err != nil {
			t.Fatal(err)
		}
		est, err := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: seed}, Guide: Guide{Estimate: costEstimate(1)}}).Next(16)
		if err != nil {
			t.Fatal(err)
		}
		if len(est) != 16 {
			t.Fatalf("seed %d: %d configs, want 16", seed, len(est))
		}
		seen := map[string]bool{}
		for _, c := range est {
			if !s.Valid(c) || seen[c.String()] {
				t.Errorf("seed %d: %s invalid or repeated", seed, c)
			}
			seen[c.String()] = true
		}
		if a, b := medianCost(est), medianCost(plain); a >= b {
			t.Errorf("seed %d: median cost %.2f with the estimate, %.2f without: want lower", seed, a, b)
		}
	}
}

// TestEstimateOutweighedByMeasurements: an estimate that ranks the
// slowest first steers the model-ranked batch while nothing is measured,
// and stops steering it once many measurements are told, whose model
// (here a perfect one) then decides.
func TestEstimateOutweighedByMeasurements(t *testing.T) {
	s := landscapeSpace()
	var every []schedule.Config
	for i := range s.Size() {
		every = append(every, s.At(i))
	}
	all := medianCost(every)
	for seed := range uint64(4) {
		e := NewEvolutionary(s, EvolutionaryOptions{
			Options: Options{Seed: seed}, Epsilon: -1,
			Guide: Guide{Model: oracle{s}, Features: s.Features, Estimate: costEstimate(-1)},
		})
		first, err := e.Next(16)
		if err != nil {
			t.Fatal(err)
		}
		// Measurements of random configs: they teach the model nothing
		// (it is perfect already) but outweigh the estimate.
		told, err := NewRandom(s, Options{Seed: seed + 100}).Next(400)
		if err != nil {
			t.Fatal(err)
		}
		costs := make([]float64, len(told))
		for i, c := range told {
			costs[i] = cost(c)
		}
		e.Tell(told, costs)
		later, err := e.Next(16)
		if err != nil {
			t.Fatal(err)
		}
		if w := e.estimateWeight(); w > 0.1 {
			t.Errorf("seed %d: the estimate weighs %.2f after %d measurements", seed, w, len(told)+16)
		}
		if a, b := medianCost(first), medianCost(later); a <= all || b >= all {
			t.Errorf("seed %d: median cost %.2f before the measurements, %.2f after, %.2f over the space: want the estimate to steer, then the model", seed, a, b, all)
		}
	}
}

// blindEstimate estimates cost without knobs c and d, which it cannot
// see but for a slope of 0.1% a step: every value of them ties within
// 5%. Its scores are negated costs (Timer).
type blindEstimate struct{}

func (blindEstimate) Estimate(cfgs []schedule.Config) []float64 {
	out := make([]float64, len(cfgs))
	for i, c := range cfgs {
		sure, err := schedule.NewConfig([]string{"a", "b", "c", "d"}, []schedule.Value{c.Get("a"), c.Get("b"), schedule.IntValue(64), schedule.IntValue(2)})
		if err != nil {
			panic(err)
		}
		steps := math.Log2(float64(c.Int("c"))) + math.Log2(float64(c.Int("d")))
		out[i] = -cost(sure) * (1 + 0.001*steps)
	}
	return out
}

type blindTimer struct{ blindEstimate }

func (blindTimer) Times() {}

// TestEstimateLeadsFirstBatch: the first batch starts with the estimate's
// best config, and spends itself on the configs the estimate cannot tell
// apart from it (within 5%, for a Timer), spread over the knobs it does
// not see, rather than on one config and its neighbours, for every seed.
func TestEstimateLeadsFirstBatch(t *testing.T) {
	s := landscapeSpace()
	for seed := range uint64(8) {
		first, err := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: seed}, Guide: Guide{Estimate: costEstimate(1)}}).Next(16)
		if err != nil {
			t.Fatal(err)
		}
		if got := cost(first[0]); got != 1 {
			t.Errorf("seed %d: first proposal %s of cost %.2f, want the estimate's best, of cost 1", seed, first[0], got)
		}
		blind, err := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: seed}, Guide: Guide{Estimate: blindTimer{}}}).Next(16)
		if err != nil {
			t.Fatal(err)
		}
		cs, ds := map[int]bool{}, map[int]bool{}
		for _, c := range blind {
			if c.Int("a") != 16 || c.Int("b") != 4 {
				t.Errorf("seed %d: %s in the batch, want a=16,b=4 (the estimate's best) with any c and d", seed, c)
			}
			cs[c.Int("c")], ds[c.Int("d")] = true, true
		}
		if len(cs) < 6 || len(ds) < 6 {
			t.Errorf("seed %d: the batch takes %d values of c and %d of d, want 6 or more of each: %v", seed, len(cs), len(ds), blind)
		}
	}
}
