package search

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/autotune-dev/autotune/schedule"
)

// Model predicts how fast configs are: higher is faster. The scores only
// need to order configs; costmodel's models satisfy it.
type Model interface {
	Predict(features [][]float64) []float64
}

// EvolutionaryOptions configure NewEvolutionary. Zero fields take the
// defaults given with each.
type EvolutionaryOptions struct {
	Options
	Guide

	Population  int     // configs kept per generation; default 128
	Generations int     // rounds of mutation and crossover per batch; default 4
	Epsilon     float64 // share of each batch spent exploring, away from what was measured; default 0.1, negative for none
	Crossover   float64 // share of children made by crossover rather than mutation; default 0.3
}

// Evolutionary is the search of Ansor and MetaSchedule: it evolves a
// population of configs (mutation and crossover, valid configs only), scores
// it with a learned cost model, and proposes the best predicted configs not
// yet measured, plus a few random ones so that a wrong model cannot trap it.
type Evolutionary struct {
	space *schedule.Space
	rng   *rand.Rand
	seen  seenSet
	opts  EvolutionaryOptions

	// seeds are proposed before anything else: configs that were best
	// elsewhere are the likeliest to be good here.
	seeds []schedule.Config
	// elite are the configs measured so far, fastest first; they seed each
	// batch's population.
	elite []scored
	// measured counts the measurements behind the model: those it
	// learned from before (Guide.Learned) or the elite, then the configs
	// told. The estimate's weight falls with it.
	measured int
	// ref are the model's scores and the estimates of the current
	// batch's starting population, sorted: what score places every
	// candidate of the batch among (quantiles), so that the two mix
	// whatever their scales. Nil until evolve scores its population.
	ref *reference
}

type reference struct{ pred, est []float64 }

type scored struct {
	cfg   schedule.Config
	score float64 // higher is better: predicted speed, or -cost for measured
}

var _ Strategy = (*Evolutionary)(nil)

// NewEvolutionary returns an evolutionary search over space.
func NewEvolutionary(space *schedule.Space, opts EvolutionaryOptions) *Evolutionary {
	opts.Population = cmp.Or(opts.Population, 128)
	opts.Generations = cmp.Or(opts.Generations, 4)
	opts.Epsilon = max(cmp.Or(opts.Epsilon, 0.1), 0)
	opts.Crossover = cmp.Or(opts.Crossover, 0.3)
	e := &Evolutionary{space: space, rng: opts.rand(), seen: newSeen(opts.Measured), opts: opts}
	e.Tell(opts.Elite, opts.EliteCosts)
	e.measured = max(e.measured, opts.Learned) // the elite are among the rows learned
	for _, c := range opts.Seeds {
		if c, err := space.Canonical(c); err == nil && space.Valid(c) {
			e.seeds = append(e.seeds, c)
		}
	}
	return e
}

// Next returns up to n unmeasured valid configs: the best predicted of an
// evolved population, and about Epsilon·n others, spread away from those
// measured (see spread).
func (e *Evolutionary) Next(n int) ([]schedule.Config, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []schedule.Config
	for len(e.seeds) > 0 && len(out) < n {
		if e.seen.add(e.seeds[0]) {
			out = append(out, e.seeds[0])
		}
		e.seeds = e.seeds[1:]
	}
	if len(out) == n {
		return out, nil
	}
	if !e.modelReady() {
		// Nothing to rank by yet (no model, or one not trained): with an
		// estimate, its best configs of different kinds (ranked);
		// without, a space-filling design around what is already known,
		// rather than independent draws. Either takes the configs the
		// prior does not rule out, and the others when those run short.
		design := func(k int, skip func(schedule.Config) bool) []schedule.Config {
			if e.opts.Estimate != nil {
				return ranked(e.space, e.rng, e.seen, e.known(out), k, skip, e.opts.Estimate)
			}
			return spread(e.space, e.rng, e.seen, e.known(out), k, skip)
		}
		out = append(out, design(n-len(out), e.dominated)...)
		out = append(out, design(n-len(out), nil)...)
		return e.fill(out, n)
	}
	pop, err := e.evolve()
	if err != nil {
		return nil, err
	}
	explore := int(math.Round(e.opts.Epsilon * float64(n-len(out))))
	for _, s := range pop {
		if len(out) >= n-explore {
			break
		}
		// A model that never saw a dominated config cannot tell it is
		// slow: those are left to the exploring share.
		if !e.dominated(s.cfg) && e.seen.add(s.cfg) {
			out = append(out, s.cfg)
		}
	}
	// The exploring share, too, goes where nothing was measured.
	out = append(out, spread(e.space, e.rng, e.seen, e.known(out), n-len(out), nil)...)
	return e.fill(out, n)
}

// estimateWeight is the estimate's share of the ranking now: 0 without
// one.
func (e *Evolutionary) estimateWeight() float64 {
	if e.opts.Estimate == nil {
		return 0
	}
	trust := cmp.Or(e.opts.EstimateTrust, DefaultEstimateTrust)
	return trust / (trust + float64(e.measured))
}

// fill completes out to n configs with random picks, as when the
// population ran out of unmeasured configs.
func (e *Evolutionary) fill(out []schedule.Config, n int) ([]schedule.Config, error) {
	misses := 0
	for len(out) < n && misses < 100*n {
		c, err := e.space.Sample(e.rng)
		if err != nil {
			return out, err
		}
		if e.seen.add(c) {
			out = append(out, c)
		} else {
			misses++
		}
	}
	if len(out) < n {
		// Sampling keeps hitting measured configs: the space is nearly
		// exhausted, so walk it for whatever is left.
		for i := int64(0); i < e.space.Size() && len(out) < n; i++ {
			c := e.space.At(i)
			if e.space.Valid(c) && e.seen.add(c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// dominated reports whether the prior rules c out of a cold batch; with
// no prior, nothing is.
func (e *Evolutionary) dominated(c schedule.Config) bool {
	return e.opts.Prior != nil && e.opts.Prior.Dominated(c)
}

// modelReady reports whether the model ranks configs: it is set and
// trained (an untrained one predicts nil).
func (e *Evolutionary) modelReady() bool {
	if e.opts.Model == nil {
		return false
	}
	var c schedule.Config
	if len(e.elite) > 0 {
		c = e.elite[0].cfg
	} else {
		// Features may be asked of valid configs only.
		i := int64(0)
		for ; i < e.space.Size() && !e.space.Valid(e.space.At(i)); i++ {
		}
		if i == e.space.Size() {
			return false
		}
		c = e.space.At(i)
	}
	return e.opts.Model.Predict([][]float64{e.opts.Features(c)}) != nil
}

// known returns the configs measured so far (the elite) and those in
// batch: what a space-filling design should keep away from.
func (e *Evolutionary) known(batch []schedule.Config) []schedule.Config {
	out := slices.Clone(batch)
	for _, s := range e.elite {
		out = append(out, s.cfg)
	}
	return out
}

// evolve grows a population from the elite and random samples, and returns
// it ordered by predicted score, best first, without duplicates.
func (e *Evolutionary) evolve() ([]scored, error) {
	size := e.opts.Population
	var pop []schedule.Config
	for _, s := range e.elite {
		if len(pop) >= size/2 {
			break
		}
		pop = append(pop, s.cfg)
	}
	for len(pop) < size {
		c, err := e.space.Sample(e.rng)
		if err != nil {
			return nil, err
		}
		pop = append(pop, c)
	}
	e.ref = nil // score takes the population's as the batch's reference
	ranked := e.score(pop)
	for range e.opts.Generations {
		children := make([]schedule.Config, 0, size)
		for range size {
			a := e.pick(ranked)
			var child schedule.Config
			var err error
			if e.rng.Float64() < e.opts.Crossover {
				child, err = e.space.Crossover(e.rng, a, e.pick(ranked))
			} else {
				child, err = e.space.Mutate(e.rng, a)
			}
			if err == nil { // no valid child nearby: skip it, others will do
				children = append(children, child)
			}
		}
		ranked = topUnique(append(ranked, e.score(children)...), size)
	}
	return ranked, nil
}

// pick chooses a parent by a binary tournament on predicted score.
func (e *Evolutionary) pick(ranked []scored) schedule.Config {
	a, b := ranked[e.rng.IntN(len(ranked))], ranked[e.rng.IntN(len(ranked))]
	if b.score > a.score {
		return b.cfg
	}
	return a.cfg
}

// score predicts every config with the model, or at random without one;
// with an estimate, it mixes the two as quantiles of the batch's
// reference (estimateWeight).
func (e *Evolutionary) score(cfgs []schedule.Config) []scored {
	out := make([]scored, len(cfgs))
	var pred []float64
	if e.opts.Model != nil {
		feats := make([][]float64, len(cfgs))
		for i, c := range cfgs {
			feats[i] = e.opts.Features(c)
		}
		pred = e.opts.Model.Predict(feats)
	}
	for i, c := range cfgs {
		out[i].cfg = c
		if pred != nil {
			out[i].score = pred[i]
		} else {
			out[i].score = e.rng.Float64()
		}
	}
	w := e.estimateWeight()
	if w == 0 {
		return out
	}
	est := e.opts.Estimate.Estimate(cfgs)
	if e.ref == nil {
		e.ref = &reference{pred: make([]float64, len(out)), est: slices.Clone(est)}
		for i, s := range out {
			e.ref.pred[i] = s.score
		}
		slices.Sort(e.ref.pred)
		slices.Sort(e.ref.est)
	}
	for i := range out {
		out[i].score = (1-w)*quantile(e.ref.pred, out[i].score) + w*quantile(e.ref.est, est[i])
	}
	return out
}

// quantile is the share of sorted below x, ties counting half.
func quantile(sorted []float64, x float64) float64 {
	lo, _ := slices.BinarySearch(sorted, x)
	hi := lo
	for hi < len(sorted) && sorted[hi] == x {
		hi++
	}
	return (float64(lo) + float64(hi-lo)/2) / float64(len(sorted))
}

// topUnique returns the n best-scored distinct configs, best first. Ties keep
// their order, so results depend only on the seed.
func topUnique(s []scored, n int) []scored {
	slices.SortStableFunc(s, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		k := x.cfg.String()
		if seen[k] || len(out) >= n {
			continue
		}
		seen[k] = true
		out = append(out, x)
	}
	return out
}

// Tell keeps the measured configs that succeeded, fastest first, as the
// elite that seeds the next population.
func (e *Evolutionary) Tell(configs []schedule.Config, costs []float64) {
	e.measured += len(configs)
	for i, c := range configs {
		if !math.IsInf(costs[i], 1) && !math.IsNaN(costs[i]) {
			e.elite = append(e.elite, scored{cfg: c, score: -costs[i]})
		}
	}
	slices.SortStableFunc(e.elite, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	e.elite = e.elite[:min(len(e.elite), e.opts.Population)]
}
