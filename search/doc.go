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
// Users choose a strategy by name: Kinds lists them (the default first) with
// a constructor each, and Lookup finds one, so that the command line's help
// and errors and the tuner's choice come from the same list. A Kind that is
// Guided uses the Guide; the others ignore it.
package search
