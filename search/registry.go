package search

import (
	"github.com/autotune-dev/autotune/choice"
	"github.com/autotune-dev/autotune/schedule"
)

// Guide is what a guided strategy learns from besides its own
// measurements: a cost model, and what the tuning database knows.
type Guide struct {
	// Model scores proposals; nil scores them at random, which makes the
	// search a random search with extra steps (useful as a control).
	Model Model
	// Features turns a config into the model's input. Required with a Model.
	Features func(schedule.Config) []float64

	// Prior, when set, says which configs are dominated before anything
	// is measured: the first batch, drawn before the model ranks
	// anything, avoids them while there are enough others, and the
	// model-ranked part of later batches skips them (the exploring share
	// does not).
	Prior Prior

	// Estimate, when set, scores configs without measuring them: the
	// template's analytic estimate, or a model trained on other
	// machines. The first batch, drawn before the model ranks anything,
	// is its best configs of different kinds, best first (see ranked),
	// and later batches rank by it and the model together, the
	// estimate's weight falling as measurements arrive (EstimateTrust).
	Estimate Estimator
	// EstimateTrust is how many measurements the estimate is worth: with
	// m measurements behind the model (Learned, then this run's), the ranking of the
	// model-ranked part of a batch is EstimateTrust/(EstimateTrust+m) the
	// estimate's and the rest the model's, each as a quantile among the
	// batch's starting population, so that neither's scale matters. 0
	// means DefaultEstimateTrust.
	EstimateTrust float64
	// Learned is how many measurements the model has learned from before
	// the search starts (its training rows: other shapes' too): a model
	// warmed by a tuned shape outweighs the estimate from the start.
	Learned int

	// Seeds are proposed first, in order, and then join the population: the
	// best configs transferred from other shapes of the same op. Configs
	// that are not valid points of the space are dropped.
	Seeds []schedule.Config

	// Elite are configs measured in earlier runs with their costs (ns per
	// call), which seed the population as if told by Tell.
	Elite      []schedule.Config
	EliteCosts []float64
}

// A Prior knows, without measuring, that some configs are slower than
// others of the space: kernels.Template.Dominated for the tuned shape
// and target.
type Prior interface {
	Dominated(schedule.Config) bool
}

// An Estimator scores configs before any is measured: higher is
// faster, and only the order of the scores matters.
type Estimator interface {
	Estimate([]schedule.Config) []float64
}

// A Timer is an Estimator whose scores are negated times, in any unit:
// the ratio of two says how much faster one config is. The first batch
// treats configs within 5% of each other as equally good (see ranked);
// for other estimators, as a ranking model's scores, only configs that
// score the same are.
type Timer interface {
	Estimator
	Times()
}

// DefaultEstimateTrust is Guide.EstimateTrust's default: the estimate
// and the model weigh the same once two batches of 16 are measured, and
// the estimate a fifth after eight.
const DefaultEstimateTrust = 32

// Kind is a strategy as a user chooses it, by name.
type Kind struct {
	Name string
	Doc  string // what it does, a phrase for help texts
	// Guided says that the strategy uses a Guide; the others ignore it,
	// and a caller need not train a model or read history for them.
	Guided bool
	// Estimates says what a guided strategy takes as its Guide.Estimate,
	// which the caller makes: "" none, Analytic or Shipped.
	Estimates string
	// Extra marks a strategy that autotune simulate compares only when
	// named: one that, today, proposes what another listed does.
	Extra bool
	// New returns the strategy over space.
	New func(space *schedule.Space, opts Options, g Guide) Strategy
}

// kinds are the strategies by name, the default first.
var kinds = choice.New("search: strategy", func(k Kind) string { return k.Name },
	Kind{Name: "analytic", Doc: "evolutionary, its first batches filtered and ordered by the template's estimate of each config's time", Guided: true, Estimates: Analytic,
		New: newEvolutionary},
	Kind{Name: "evolutionary", Doc: "evolves a population, ranked by a cost model (a space-filling first batch)", Guided: true,
		New: newEvolutionary},
	Kind{Name: "shipped", Doc: "analytic, ranked first by a cost model trained on other machines and shipped with autotune", Guided: true, Estimates: Shipped, Extra: true,
		New: newEvolutionary},
	Kind{Name: "random", Doc: "uniform over the valid configs",
		New: func(s *schedule.Space, o Options, _ Guide) Strategy { return NewRandom(s, o) }},
	Kind{Name: "grid", Doc: "every valid config in index order",
		New: func(s *schedule.Space, o Options, _ Guide) Strategy { return NewGrid(s, o) }},
)

// Kind.Estimates: the template's own estimate, or a cost model shipped
// with the program, trained on landscapes of other machines (the
// template's estimate where none is shipped for the template's version).
const (
	Analytic = "analytic"
	Shipped  = "shipped"
)

func newEvolutionary(s *schedule.Space, o Options, g Guide) Strategy {
	return NewEvolutionary(s, EvolutionaryOptions{Options: o, Guide: g})
}

// Kinds returns every strategy by name; the first is the default.
func Kinds() []Kind { return kinds.All() }

// Names returns the names of Kinds, in order.
func Names() []string { return kinds.Names() }

// Lookup returns the strategy of the given name; the error lists the
// names there are.
func Lookup(name string) (Kind, error) { return kinds.Lookup(name) }
