// Package costmodel predicts which configs of a template run fastest, so
// that the search measures only the promising ones.
//
// The evolutionary search scores thousands of candidate configs per
// generation with a model's Predict and measures the best predicted few;
// after every measured batch the tuner refits the model on all the rows it
// has. One model serves one op on one device across all the op's workload
// shapes: it is saved into the tuning database (MarshalBinary) and loaded by
// the next run, which can then rank configs of a shape it has never
// measured (warm start, transfer across shapes).
//
// # Features
//
// A row is a Sample: a feature vector, the workload (Group) it was measured
// on, and its cost in nanoseconds per call, +Inf for a failed config. The
// package knows nothing of templates: the caller builds the vector, usually
// the config's schedule.Space.Features (log2 of sizes, one-hot enums, 0/1
// bools), then the template's analytic features, then workload features such
// as log2 of each dimension, which is what lets one model tell shapes apart;
// on a GPU, then the registers and local memory its compiler gave the
// config's kernel, where known (kernels.Template.ModelFeaturesCompiled).
// Every row of a model has the same layout. The model stores its feature
// count: Fit reports an error when rows disagree, and Predict panics on a
// vector of another length, so check NumFeatures after loading a saved
// model, and discard a model saved under another layout (a new template
// version).
//
// # Targets
//
// Costs of different shapes differ by orders of magnitude and mean nothing
// across shapes, so training targets are normalized within each group to
// relative throughput y = best/cost: 1 for the group's fastest config, 0.5
// for one twice as slow, and 0 for a failure, the limit of an ever slower
// config (failures are data: they teach the model where not to look). A
// cost that is NaN, zero or negative is a caller bug and Fit rejects it.
//
// # Model and objectives
//
// GBT is gradient-boosted regression trees in the manner of XGBoost: each
// tree is fit to the first and second derivatives of the loss (Newton leaf
// values with an L2 penalty), splits are chosen on per-feature histograms of
// at most 64 bins (features are mostly small integers), and each tree sees a
// random subsample of rows. Two losses are available (Options.Objective):
//
//   - Regression: squared error on y. Predictions estimate relative
//     throughput, which is meaningful on its own, but every target of a
//     group moves when the search finds a new best config, and the loss
//     spends as much effort on slow configs as on fast ones.
//   - Rank (the default): the pairwise logistic loss of RankNet over pairs of
//     rows of the same group with different y, each pair weighted by the gap
//     in y, in the spirit of LambdaRank: misordering two fast configs costs
//     more than misordering two slow ones, and pairs of failures cost
//     nothing. Scores are unitless; only their order within a workload means
//     something, which is all the search uses. Large groups are paired by
//     sampling a fixed number of partners per row and tree, so a fit stays
//     linear in the rows.
//
// Rank is the default because it optimizes what the search consumes (the
// order of candidates within a workload), is untouched by the scale of a
// group and by a change of its best cost, and ranked held-out configs of
// measured workloads better than Regression on the synthetic landscape of
// the tests (Kendall τ about 0.78 against 0.71, TestHeldOutTau). Regression
// did better there on a workload it had never seen (τ 0.58 to 0.68 against
// 0.51 to 0.62, TestHeldOutTauTransfer), which matters only until the first
// batch of a new shape is measured. The choice is to be confirmed on
// recorded real landscapes by held-out τ (autotune simulate reports it);
// switching is one option.
//
// Before its first Fit (or a load) a GBT's Predict returns nil, which
// package search takes as no model and scores at random.
//
// Refitting from scratch is cheap while the rows are few: with the default
// 100 trees of depth 6, a fit of 2000 rows of 30 features takes on the
// order of 100 to 150 ms on one core, 5 to 8% of measuring a batch of 16
// configs (BenchmarkFit; tune's BenchmarkRetrain sets it against recorded
// batches). As the history grows the fit grows with it, so a GBT can refit
// incrementally (Options.WarmRounds): past WarmFrom rows it keeps its trees
// and boosts a few more rounds on what they still get wrong, and only every
// RefitEvery-th fit starts from scratch. The registered "gbt" does, with 10
// rounds from 1000 rows: a refit at 2000 rows then costs about a fifth as
// much on average over a cycle, and ranks held-out rows as well
// (TestWarmFit, BenchmarkUpdate).
//
// # Baseline and evaluation
//
// None scores configs at random: a search guided by it is a random search,
// the control a learned model must beat. KendallTau (τ-b, with ties)
// measures how well scores order configs, e.g. a model's scores of configs
// it was not trained on against their measured speed.
//
// # Uncertainty
//
// Bagged is an ensemble of GBTs on bootstrap resamples of the rows; the
// spread of its members' scores says how unsure it is, and its Predict is
// an upper confidence bound, mean + Kappa·spread, so that a search ranking
// by it leans toward configs the model knows little about. Registered as
// "ucb", it did not beat the single GBT on the landscape suite
// (docs/benchmarks.md), and costs about 2.5 fits of one, so it is Extra:
// autotune simulate compares it only when named.
//
// # Choosing a model by name
//
// Kinds lists the models a user can choose, by name ("gbt", the default,
// "ucb" and "none"), each with a constructor; Lookup finds one. The tuner
// and the command line take their choices, help and errors from it.
//
// # Saved models
//
// MarshalBinary writes format version 1: the magic "ATCM", the version, the
// objective, the feature count, the base score and the trees (varints and
// little-endian float64s), then a CRC-32C of it all. A saved and loaded model
// predicts bit for bit as before. UnmarshalBinary rejects truncated or
// corrupt bytes and other versions with an error and never panics; a tuner
// that meets one retrains from its records. Options are not saved: they
// govern training, and the loading model's own apply to its next Fit.
//
// All randomness (row subsampling, pair sampling, None's scores) comes from
// a *rand.Rand the caller passes, so a seed fixes every model. The trees
// need no numerical library; the package uses only the standard library.
package costmodel
