// Package report writes a tuning database as one self-contained HTML page:
// what each tuning run found and how fast, where its time went, how close
// the winner is to the machine's limits, and how good the cost model's
// guesses were. The page has no scripts, fonts, style sheets or images
// from elsewhere; its charts are inline SVG drawn with gonum.org/v1/plot,
// so it reads offline and can be attached to an issue (about 1 MB for
// 10,000 records).
//
// # Sections
//
// With more than one workload a summary comes first: per workload its
// records, failures, best median, GFLOP/s and GB/s and the trials it took
// to come within 5% of its best. With tuned shape ranges
// (Options.Ranges), a table gives each range's buckets and the median
// and largest regret of dispatching its held-out shapes to them. Then,
// per workload:
//
//   - Tuning curves: the best median so far against the trial number and
//     against wall-clock time since the run began, one line per tuning run,
//     with re-measured leaders marked.
//   - Latencies: a histogram of the medians of the correct configs, and the
//     failures counted by status.
//   - Compile and execute: build time (code generation and compilation)
//     and run time (checking and timing) per batch, stacked, with totals.
//   - Roofline: the machine's multiply-add peak and memory bandwidth, when
//     Options.Limits has them for the workload's device, and the winner at
//     its arithmetic intensity, FLOPs over bytes from the op's counts.
//   - Top configs: the 10 fastest with median, p20–p80 and throughput, and
//     only the knobs whose values differ among them.
//   - Cost model: a fresh boosted-tree model (costmodel.GBT, seed 1)
//     trained on the first 80% of the workload's records in time order and
//     tested on the rest: predicted score against measured latency, Kendall
//     τ (failures count as the slowest), and the knobs that matter most to
//     it, by how much τ drops when a knob's feature columns are shuffled
//     among the test rows (the template's analytic features, which depend
//     on several knobs, count as one entry). A model saved in the database
//     is described, not evaluated: it was trained on every record.
//
// Every figure that best, bench or db ls also prints comes from the same
// function: the best config is tunedb's ranking (Summary.Best, TopK), the
// times are formatted by tunedb.FormatNS and the rates by kernels.Op.Rates.
//
// # Runs and batches
//
// The database does not record which run or batch a record came from, so
// the report infers both from the records, sorted by time. A record starts
// a new run when its tool differs from the previous record's, when it
// comes more than 10 minutes after it, or when the previous record
// re-measured a config already measured in the run and this one does not:
// a tuner re-measures its leaders last (tune --remeasure), so that is
// where one run ends and the next, started at once, begins. A record of a
// config already measured in the same run is a re-measurement. Within a
// run, a record starts a new batch when its build time differs from the
// previous record's: the CPU measurer gives each candidate of a batch an
// equal share of the batch's build (to within a nanosecond, and summed over
// the rounds of a re-measurement). Where that finds no batches, because a
// backend times each candidate's compilation on its own (CUDA), the report
// groups 16 consecutive records instead and says so. Strategy and seed are
// not recorded, so the legend names a run by its start and its tool.
package report
