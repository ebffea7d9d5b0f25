package measure

import (
	"math"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// Status is the outcome of measuring one config. The list is closed and
// this is its one source: the tuning database stores a Status as it is
// (tunedb.Status is this type), so a new kind of failure is a schema change.
type Status string

const (
	StatusOK           Status = "ok"
	StatusInvalid      Status = "invalid"       // rejected by the space's constraints, never built
	StatusBuildError   Status = "build_error"   // the emitted code did not compile (or could not be emitted)
	StatusRuntimeError Status = "runtime_error" // the candidate could not be run; not produced by measure/cpu
	StatusCrash        Status = "crash"         // panicked, or killed the process running it
	StatusTimeout      Status = "timeout"       // ran past its time limit and was killed
	StatusWrongAnswer  Status = "wrong_answer"  // ran, but its output is not the reference's
)

var statuses = []Status{
	StatusOK, StatusInvalid, StatusBuildError, StatusRuntimeError,
	StatusCrash, StatusTimeout, StatusWrongAnswer,
}

// Statuses returns every status, in the order of their declaration.
func Statuses() []Status { return slices.Clone(statuses) }

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool { return slices.Contains(statuses, s) }

// Transient reports whether s may not happen again: a timeout, a crash or a
// runtime error can come from the machine (load, a killed harness, a lost
// device) rather than from the config, so a later run retries such a config
// once (tunedb.DB.Measured). Every other failure (invalid, build_error,
// wrong_answer) is deterministic and final.
func (s Status) Transient() bool {
	return s == StatusTimeout || s == StatusCrash || s == StatusRuntimeError
}

// A Batch is the unit of work of a backend: configs of one template for one
// shape on one target.
type Batch struct {
	Template kernels.Template
	Shape    []int
	DType    dtype.DType // element type of the inputs and output; "" means dtype.Default
	Target   device.Target
	Configs  []schedule.Config

	// Best is the fastest median known so far for this workload, 0 when none
	// is. Backends derive their default per-candidate time limit from it, so
	// that a candidate many times slower than the best is given up early.
	Best time.Duration

	// Finished, when set, hears each config's result as soon as it is
	// final, before Measure returns, so that the caller can store it while
	// the rest of the batch runs: a killed tuner then loses seconds of work,
	// not a batch. It is called from the measurer's goroutine, once per
	// config that finishes, and must return quickly. The results Measure
	// returns may differ in RunNS, which it can only share out among the
	// configs once the batch has ended.
	Finished func(Result)
}

// Result is the measurement of one config of a batch.
type Result struct {
	Config schedule.Config
	Status Status
	// Error says what went wrong for any status but ok: the compiler's
	// messages, the panic and the head of its stack, the signal or exit
	// status and the end of stderr, the first wrong output.
	Error string

	SamplesNS []float64 // every timed sample, in ns per call; only for ok
	MedianNS  float64   // Summarize(SamplesNS); 0 unless ok
	P20NS     float64
	P80NS     float64

	// BuildNS and RunNS are the shares of the batch's build and run wall
	// time attributed to this config; over a batch they add up to the
	// batch's totals. How a backend splits them is documented with it.
	BuildNS int64
	RunNS   int64

	// Registers and LocalBytes are what the compiler gave the kernel: 32-bit
	// registers per thread and local memory per thread in bytes (spills and
	// arrays it could not keep in registers). Backends that compile to a
	// GPU fill them once the kernel is loaded, whatever the status after
	// that; 0 elsewhere.
	Registers  int
	LocalBytes int

	// Disturbance is the evidence of contention while the samples were
	// taken; nil when the measurer gathered none.
	Disturbance *Disturbance
	// Measurer says who measured; nil means the process that reports the
	// result (the tuner's own measurer).
	Measurer *Measurer
}

// Summarize returns the median and the 20th and 80th percentiles of samples,
// interpolating linearly between order statistics (the definition numpy and
// R use by default). It returns zeros for no samples, because they encode in
// JSON where NaN does not. samples is not modified.
func Summarize(samples []float64) (median, p20, p80 float64) {
	if len(samples) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return quantile(s, 0.5), quantile(s, 0.2), quantile(s, 0.8)
}

// quantile returns the q-quantile of sorted s.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	frac := pos - float64(lo)
	return s[lo] + frac*(s[lo+1]-s[lo])
}
