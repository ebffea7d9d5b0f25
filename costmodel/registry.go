package costmodel

import (
	"math/rand/v2"

	"github.com/autotune-dev/autotune/choice"
)

// Kind is a cost model as a user chooses it, by name.
type Kind struct {
	Name string
	Doc  string // what it is, a phrase for help texts
	// New returns an untrained model. seed is the run's seed, for a model
	// that draws on it: None's scores come from it, while GBT keeps its
	// fixed generator, so that a model depends only on its rows.
	New func(seed uint64) Model
	// Extra marks a model that comparisons leave out unless asked for
	// (autotune simulate's default searches): it costs more than the
	// default and did not beat it on the landscape suite.
	Extra bool
}

// noneStream is the second word of None's PCG seed, so that its scores do
// not repeat the draws a search makes from the same seed.
const noneStream = 0x6e6f6e65 // "none"

// warmRounds are the boosting rounds of gbt's incremental refits, past
// 1,000 rows: a tenth of a fit from scratch, which ranked held-out rows as
// well (TestWarmFit) at about a seventh of the cost (BenchmarkRetrain).
const warmRounds = 10

// ucbKappa weighs the spread in ucb's scores: the best of 0.1, 0.3 and 1
// on the landscape suite, where none beat gbt (docs/benchmarks.md).
const ucbKappa = 0.3

// kinds are the cost models by name, the default first.
var kinds = choice.New("costmodel: cost model", func(k Kind) string { return k.Name },
	Kind{Name: "gbt", Doc: "gradient-boosted trees, saved in the database",
		New: func(uint64) Model { return NewGBT(Options{WarmRounds: warmRounds}) }},
	Kind{Name: "ucb", Doc: "an upper confidence bound: mean + 0.3·spread of five boosted-tree models on resamples",
		New: func(uint64) Model {
			return NewBagged(BaggedOptions{Kappa: ucbKappa, GBT: Options{WarmRounds: warmRounds / 2}})
		},
		Extra: true},
	Kind{Name: "none", Doc: "random scores, the control for the model's worth",
		New: func(seed uint64) Model { return NewNone(rand.New(rand.NewPCG(seed, noneStream))) }},
)

// Kinds returns every cost model by name; the first is the default.
func Kinds() []Kind { return kinds.All() }

// Names returns the names of Kinds, in order.
func Names() []string { return kinds.Names() }

// Lookup returns the cost model of the given name; the error lists the
// names there are.
func Lookup(name string) (Kind, error) { return kinds.Lookup(name) }
