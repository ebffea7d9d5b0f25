// Package measure is the contract between the tuner and the backends that
// measure candidates: a Batch of configs goes in, one Result per config comes
// out.
//
// A backend (measure/cpu for Go kernels on this machine, measure/cuda for
// CUDA C on the local GPU) turns each config of a batch into code, builds the
// batch, runs every candidate in a child process, checks its output against
// the template's float64 reference and times it. measure/sim answers a batch
// from recorded results instead, and measure/remote has it measured by
// workers on other machines; both return the same Results. Whatever a candidate does wrong
// (it does not compile, panics, kills its process, hangs, or computes the
// wrong answer) becomes a Result with a Status and an Error message, so one
// bad candidate never stops a batch. Go errors are kept for failures of the
// machinery itself: no toolchain, no temporary directory, a cancelled
// context.
//
// What every backend shares lives here or in the leaf package
// measure/harness, which a backend compiles into its child process: the
// input sets (Inputs) and their references, the protocol between parent
// and child, the check of an output against the reference, and the
// statistics of samples (Summarize).
//
// Status is the closed list of outcomes, declared here once; the tuning
// database stores it as it is (tunedb.Status is the same type), so a Result
// becomes a tuning-database record by copying fields. Timings are kept as every sample
// plus the median and the 20th and 80th percentiles (Summarize), because the
// spread says how far a median can be trusted on a shared machine.
package measure
