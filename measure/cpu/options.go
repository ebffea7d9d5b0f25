package cpu

import (
	"os"
	"time"
)

// NoEvidenceEnv is the environment variable that turns off the evidence
// of contention (Options.NoEvidence) when it is 1.
const NoEvidenceEnv = "AUTOTUNE_NO_EVIDENCE"

// Options configure a Measurer. The zero value, and a nil *Options, mean the
// defaults given with each field.
type Options struct {
	// Seed seeds the inputs (math/rand/v2 PCG). Every batch of a workload
	// sees the same inputs for the same seed, so candidates are compared on
	// equal terms. Default 0, which is a seed like any other.
	Seed uint64

	// Warmup is the number of untimed samples run before timing, after the
	// correctness check. Default 3: enough to fault in pages and train the
	// branch predictors without costing much next to the timed samples.
	Warmup int

	// MinSamples and MinTime: timing goes on until there are at least
	// MinSamples samples and they add up to at least MinTime. Defaults 10
	// and 20ms: ten samples give a median and a spread worth keeping, and
	// 20ms averages out timer and scheduler noise for fast kernels while a
	// 1ms kernel still costs only ~25ms in all, so a 2-core machine
	// measures well over 200 such candidates a minute.
	MinSamples int
	MinTime    time.Duration

	// MinSampleTime is the least time one sample should take. A kernel
	// faster than that is called k times per sample (k a power of two) and
	// the sample is the mean, so that the clock's resolution and overhead
	// do not show. Default 10µs.
	MinSampleTime time.Duration

	// SlowFactor makes clearly slow candidates cheap to measure: when a
	// candidate's first timed call takes more than SlowFactor × the fastest
	// sample known (the batch's Best hint, or a candidate measured earlier
	// in the same harness), it is timed with SlowSamples samples and no
	// warm-up or MinTime. Its rank far below the best is certain after a
	// few samples, and timing it fully would cost most of a tuning run (a
	// scalar softmax is 100× slower than the best). Default 10.
	SlowFactor float64

	// SlowSamples is the number of samples a clearly slow candidate gets.
	// Default 3.
	SlowSamples int

	// Timeout, when set, limits one candidate: its correctness check,
	// warm-up and timing together. A candidate that runs past its limit
	// is killed (with the whole process group) and recorded as timeout.
	//
	// When zero, each candidate gets a deadline of its own, in two steps.
	// Until it has passed its correctness check, the limit comes from the
	// batch's Best hint:
	//
	//	max(2s, MinTime + 50 × (1+Warmup+MinSamples) × Best)
	//
	// or 10s without one, which waits for any kernel worth tuning on a
	// CPU. The harness then says how long the slowest call of the check
	// took and how many calls its timing will make, and the limit becomes
	//
	//	min(2min, 2s + 3 × call × calls)
	//
	// so that a slow but correct candidate (a scalar exp in float64) is
	// timed, however slow it is next to the best, while one that hangs
	// in its timing is still killed within seconds of when it should have
	// finished. The 2s floor covers process noise and page faults.
	Timeout time.Duration

	// TimingBudget bounds the timing of one candidate: one whose full
	// timing (warm-up and MinSamples samples adding up to MinTime) would
	// take longer, at the speed of its correctness check, is timed like a
	// clearly slow one (SlowSamples samples). Default 10s.
	TimingBudget time.Duration

	// NoEvidence turns off the evidence of contention (measure.Disturbance):
	// the CPU time and preemptions of every sample, the steal of each
	// candidate's timing and the calibration probe around it, and taking
	// disturbed samples again. It is on by default, since it costs a
	// system call per sample and a few hundred microseconds of probe per
	// candidate; turning it off is for measuring that cost. NoEvidenceEnv
	// set to 1 in the environment turns it off too, for every Measurer of
	// the process (autotune tune, worker).
	NoEvidence bool

	// Env is added to the environment of the harness processes, after
	// this process's: the variables that keep a bench's C libraries at an
	// ISA level, say. A GODEBUG there replaces this process's; the harness
	// gets asyncpreemptoff=1 added to it either way (harnessGODEBUG).
	Env []string

	// KeepDir, when set, is a directory under which each batch's throw-away
	// module (sources, harness, inputs and binary) is created and left for
	// debugging. By default the module goes to os.TempDir and is removed.
	KeepDir string

	// GoCommand is the go command that builds candidates. Default "go",
	// looked up in PATH. It must be Go 1.26 or later, for GOEXPERIMENT=simd.
	GoCommand string
}

const (
	defaultWarmup        = 3
	defaultMinSamples    = 10
	defaultMinTime       = 20 * time.Millisecond
	defaultMinSampleTime = 10 * time.Microsecond
	defaultSlowFactor    = 10
	defaultSlowSamples   = 3
	defaultTimingBudget  = 10 * time.Second
	defaultGoCommand     = "go"

	timeoutFloor    = 2 * time.Second
	timeoutNoBest   = 10 * time.Second
	timeoutSlowdown = 50
	timeoutMargin   = 3 // on a checked candidate's own estimate
	timeoutCap      = 2 * time.Minute
	startupTimeout  = 30 * time.Second // harness start and input loading, before any candidate
	stderrHeadBytes = 2560             // of a dead harness's stderr, shown in Error
	stderrTailBytes = 1024
)

// withDefaults returns o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	r.NoEvidence = r.NoEvidence || os.Getenv(NoEvidenceEnv) == "1"
	if r.Warmup <= 0 {
		r.Warmup = defaultWarmup
	}
	if r.MinSamples <= 0 {
		r.MinSamples = defaultMinSamples
	}
	if r.MinTime <= 0 {
		r.MinTime = defaultMinTime
	}
	if r.MinSampleTime <= 0 {
		r.MinSampleTime = defaultMinSampleTime
	}
	if r.SlowFactor <= 0 {
		r.SlowFactor = defaultSlowFactor
	}
	if r.SlowSamples <= 0 {
		r.SlowSamples = defaultSlowSamples
	}
	if r.TimingBudget <= 0 {
		r.TimingBudget = defaultTimingBudget
	}
	if r.GoCommand == "" {
		r.GoCommand = defaultGoCommand
	}
	return r
}

// timeout returns the limit of a candidate of a batch whose best known
// median is best (0 when unknown) until it has passed its check. o has
// its defaults set.
func (o Options) timeout(best time.Duration) time.Duration {
	switch {
	case o.Timeout > 0:
		return o.Timeout
	case best <= 0:
		return timeoutNoBest
	}
	calls := time.Duration(1 + o.Warmup + o.MinSamples)
	return max(timeoutFloor, o.MinTime+timeoutSlowdown*calls*best)
}

// checkedTimeout returns the limit of a candidate from its check on,
// given the slowest call of the check (callNS) and the calls its timing
// will make; ok is false when Options.Timeout fixes the limit instead.
func (o Options) checkedTimeout(callNS float64, calls int) (limit time.Duration, ok bool) {
	if o.Timeout > 0 {
		return 0, false
	}
	return min(timeoutCap, timeoutFloor+timeoutMargin*timingEstimate(callNS, calls)), true
}

// timingEstimate is callNS × calls, what a checked candidate's timing
// should take, as a Duration of at most timeoutCap (the product of a
// harness's figures may overflow one).
func timingEstimate(callNS float64, calls int) time.Duration {
	return time.Duration(min(callNS*float64(calls), float64(timeoutCap)))
}
