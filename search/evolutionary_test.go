package search

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// landscapeSpace has 8^4 = 4096 points with a single best one.
func landscapeSpace() *schedule.Space {
	vals := []int{1, 2, 4, 8, 16, 32, 64, 128}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("a", vals...), schedule.Choice("b", vals...),
		schedule.Choice("c", vals...), schedule.Choice("d", vals...),
	})
}

// cost is a smooth bowl in log2 space with its minimum at a=16,b=4,c=64,d=2.
func cost(c schedule.Config) float64 {
	d := func(k string, best float64) float64 { return math.Log2(float64(c.Int(k))) - best }
	return 1 + d("a", 4)*d("a", 4) + 2*d("b", 2)*d("b", 2) + 0.5*d("c", 6)*d("c", 6) + d("d", 1)*d("d", 1) +
		0.3*d("a", 4)*d("b", 2)
}

// oracle is a perfect model of cost: it scores with the true speed.
type oracle struct{ s *schedule.Space }

func (o oracle) Predict(feats [][]float64) []float64 {
	out := make([]float64, len(feats))
	for i, f := range feats {
		c := o.s.At(0)
		names := o.s.FeatureNames()
		vals := make([]schedule.Value, len(names))
		for j := range names {
			vals[j] = schedule.IntValue(int(math.Round(math.Exp2(f[j]))))
		}
		c, _ = schedule.NewConfig(names, vals)
		out[i] = -cost(c)
	}
	return out
}

// trialsToBest runs a strategy against cost until it proposes the optimum.
func trialsToBest(t *testing.T, st Strategy, budget int) int {
	t.Helper()
	trials := 0
	for trials < budget {
		batch, err := st.Next(8)
		if err != nil {
			t.Fatal(err)
		}
		costs := make([]float64, len(batch))
		for i, c := range batch {
			trials++
			costs[i] = cost(c)
			if costs[i] == 1 {
				return trials
			}
		}
		st.Tell(batch, costs)
	}
	return budget
}

func TestEvolutionaryWithAGoodModelBeatsRandom(t *testing.T) {
	s := landscapeSpace()
	var evo, rnd []int
	for seed := range uint64(10) {
		evo = append(evo, trialsToBest(t, NewEvolutionary(s, EvolutionaryOptions{
			Options: Options{Seed: seed}, Guide: Guide{Model: oracle{s}, Features: s.Features}}), 4096))
		rnd = append(rnd, trialsToBest(t, NewRandom(s, Options{Seed: seed}), 4096))
	}
	slices.Sort(evo)
	slices.Sort(rnd)
	t.Logf("trials to the optimum of 4096 points, median of 10 seeds: evolutionary+oracle %d, random %d", evo[5], rnd[5])
	// Random needs about half the space; a perfect model finds it in the first batches.
	if evo[5] > 64 || evo[5]*10 > rnd[5] {
		t.Errorf("evolutionary with a perfect model took %v trials, random %v", evo, rnd)
	}
}

func TestEvolutionaryStartsFromSeeds(t *testing.T) {
	s := landscapeSpace()
	best, _ := s.Parse("a=16,b=4,c=64,d=2")
	outside, _ := schedule.ParseConfig("a=3,b=4,c=64,d=2") // not a point of s: dropped
	st := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: 1}, Guide: Guide{Seeds: []schedule.Config{outside, best}}, Epsilon: -1})
	// Without a model the scores are random, but seeds lead the population.
	batch, err := st.Next(4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(batch, best.Equal) {
		t.Errorf("first batch %v does not try the seed %s", batch, best)
	}
}

func TestEvolutionaryExhaustsSmallSpaces(t *testing.T) {
	s := space() // 20 valid configs
	st := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: 4}, Population: 8})
	all := drain(t, st, 6, 1000)
	if len(all) != 20 {
		t.Errorf("proposed %d configs, want all 20", len(all))
	}
}

func TestTopUnique(t *testing.T) {
	c := func(s string) schedule.Config { x, _ := schedule.ParseConfig(s); return x }
	got := topUnique([]scored{{c("a=1"), 1}, {c("a=2"), 3}, {c("a=1"), 5}, {c("a=3"), 2}}, 2)
	if len(got) != 2 || got[0].cfg.String() != "a=1" || got[1].cfg.String() != "a=2" {
		t.Errorf("topUnique = %v", got)
	}
}

func TestEvolutionaryKeepsTheEliteFromEarlierRuns(t *testing.T) {
	s := landscapeSpace()
	best, _ := s.Parse("a=16,b=4,c=64,d=2")
	near, _ := s.Parse("a=16,b=4,c=64,d=4")
	// The earlier run measured near; its neighbour, the optimum, is one
	// mutation away and the oracle knows it is better.
	st := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: 2, Measured: map[string]bool{near.String(): true}},
		Guide: Guide{Model: oracle{s}, Features: s.Features, Elite: []schedule.Config{near}, EliteCosts: []float64{cost(near)}}})
	batch, err := st.Next(4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(batch, best.Equal) || slices.ContainsFunc(batch, near.Equal) {
		t.Errorf("first batch %v: want the optimum next to the elite, and not the measured elite itself", batch)
	}
}

// priorFunc is a Prior that is a function.
type priorFunc func(schedule.Config) bool

func (f priorFunc) Dominated(c schedule.Config) bool { return f(c) }

// Without a model, the first batch keeps to the configs the prior does
// not rule out while there are enough of them, tops up with the others
// when there are not, and every config stays reachable: draining the
// search proposes the whole space, the dominated configs included.
func TestEvolutionaryFirstBatchAvoidsDominated(t *testing.T) {
	for _, tt := range []struct {
		name      string
		dominated func(schedule.Config) bool
		others    int // configs not dominated
	}{
		{"most are fine", func(c schedule.Config) bool { return c.Int("a") == 1 }, 7 * 8 * 8 * 8},
		{"few are fine", func(c schedule.Config) bool { return c.Int("a") != 1 || c.Int("b") != 1 || c.Int("c") > 2 }, 2 * 8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := landscapeSpace()
			st := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: 3}, Guide: Guide{Prior: priorFunc(tt.dominated)}})
			const n = 32
			batch, err := st.Next(n)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, c := range batch {
				if tt.dominated(c) {
					bad++
				}
			}
			if want := max(n-tt.others, 0); len(batch) != n || bad != want {
				t.Errorf("first batch: %d configs, %d dominated; want %d and %d", len(batch), bad, n, want)
			}
			st.Tell(batch, make([]float64, len(batch)))
			all := append(batch, drain(t, st, 256, int(s.Size()))...)
			if got := len(all); got != int(s.Size()) {
				t.Errorf("proposed %d configs in all, want the %d of the space", got, s.Size())
			}
		})
	}
}

// A model ranks a dominated config by the configs like it, never having
// seen one measured, so the model-ranked batches skip them: even the
// optimum, when the prior (wrongly here) rules it out, is left to the
// exploring share.
func TestEvolutionaryRankedBatchesSkipDominated(t *testing.T) {
	s := landscapeSpace()
	dominated := func(c schedule.Config) bool { return c.Int("a") == 16 } // the optimum's a
	st := NewEvolutionary(s, EvolutionaryOptions{Options: Options{Seed: 1}, Epsilon: -1,
		Guide: Guide{Model: oracle{s}, Features: s.Features, Prior: priorFunc(dominated)}})
	for range 4 {
		batch, err := st.Next(16)
		if err != nil {
			t.Fatal(err)
		}
		costs := make([]float64, len(batch))
		for i, c := range batch {
			if dominated(c) {
				t.Errorf("a model-ranked batch proposed %s, which the prior rules out", c)
			}
			costs[i] = cost(c)
		}
		st.Tell(batch, costs)
	}
}
