// Package search proposes which configs of a knob space to measure next.
//
// A Strategy is asked for a batch (Next) and told how the batch did (Tell),
// in the manner of AutoTVM's tuners: the tuning loop, its budget and its
// bookkeeping live in package tune, and a strategy only decides what to try.
// Costs are nanoseconds per call; a failed candidate costs +Inf, so a
// strategy never has to know why something failed.
//
// No strategy proposes a config twice, and none proposes a config the
// caller says is already measured (Options.Measured, read from the tuning
// database), so a rerun resumes instead of repeating itself. All randomness
// comes from the seed in Options: the same seed, space and measured set give
// the same proposals.
//
// Grid walks the space in index order; Random draws uniformly among the valid
// configs not yet measured; Evolutionary evolves a population ranked by a
// cost model, starting from the Guide: the model, and the elite and seeds
// the tuning database offers. Until the model is trained (a cold start, with
// nothing of the op in the database) it has nothing to rank by, and its
// first batch is a space-filling design: a greedy maximin pick among random
// valid configs, each as far as can be from those picked and measured,
// which finds good configs sooner and teaches the model more than
// independent draws (docs/benchmarks.md, the landscape suite). The Guide's
// Prior (the template's Dominated: scalar code where the target has
// vectors) keeps that design to the configs it does not rule out while
// there are enough of them; and since a model that never saw one cannot
// tell it is slow, the model-ranked part of later batches skips them too.
// They stay in the space: the exploring share, Random and Grid still
// propose them.
//
// The Guide's Estimate ranks configs before anything is measured: the
// template's analytic estimate of their time (kernels.Template.Estimate:
// FLOPs against the vector peak, register spills, cache footprints,
// tails, goroutines against cores), or a cost model trained on landscapes
// of other machines and shipped with the program (package tune). It is
// the first stage, in the manner of Pruner (ASPLOS'25) ahead of its
// learned model: the cold first batch takes the estimate's best configs
// of different kinds, best first (those within 5% of the best left count
// as equally good, and of those each pick keeps away from the configs
// already taken by a whole knob while it can: the knobs an estimate
// cannot tell apart get tried, not one config and its near copies), and
// the model-ranked part of later batches ranks by the
// estimate and the model together, each as a quantile among the batch's
// starting population, the estimate weighing T/(T+m) for m measurements
// behind the model (its training rows, other shapes' included, then the
// run's) and T = EstimateTrust, 32 by default: it counts as much as two
// batches of 16, and a model warmed by a tuned shape outweighs it from
// the start. The strategies "analytic" (the template's estimate) and
// "shipped" (the shipped model, else the template's estimate) are
// evolutionary with it; "evolutionary" runs without. docs/benchmarks.md
// has them on the landscape suite.
//
// Users choose a strategy by name: Kinds lists them (the default first) with
// a constructor each, and Lookup finds one, so that the command line's help
// and errors and the tuner's choice come from the same list. A Kind that is
// Guided uses the Guide; the others ignore it.
package search
