package main

import (
	"runtime"
	"time"

	"github.com/autotune-dev/autotune/measure/cpu/peak"
	"github.com/autotune-dev/autotune/measure/harness"
)

// A meter reads what the process used over each timed sample. A nil
// meter reads nothing, so that timing without evidence pays nothing.
type meter struct {
	samples []harness.Sample
	cpu     time.Duration // at the start of the sample being timed
	invol   int64
}

func (m *meter) start() {
	if m != nil {
		m.cpu, m.invol, _ = harness.Usage()
	}
}

func (m *meter) stop(wall time.Duration) {
	if m == nil {
		return
	}
	cpu, invol, ok := harness.Usage()
	s := harness.Sample{Wall: wall}
	if ok {
		s.CPU, s.Involuntary = cpu-m.cpu, invol-m.invol
	}
	m.samples = append(m.samples, s)
}

// probeSteps makes the calibration probe last about 100 µs on a core of
// a current x86 CPU: short next to a candidate's timing, long next to the
// clock's resolution and to waking the goroutines.
const probeSteps = 1 << 13

// probeRuns is how many times the probe runs for one reading, the
// fastest counting: one interruption does not make a slow reading.
const probeRuns = 3

// probeBest is the fastest reading of the probe known: -probe, or one
// seen by this process.
var probeBest time.Duration

// probe times the calibration probe, a fixed loop of scalar multiply-adds
// on one goroutine per core the runtime uses (peak.Run), and returns its
// fastest of probeRuns runs, after lowering probeBest to it. On a machine
// where other work holds a core, the probe is slower than its best, even
// when the kernel it brackets runs on fewer goroutines than cores.
func probe() time.Duration {
	goroutines := runtime.GOMAXPROCS(0)
	fastest := time.Duration(1<<63 - 1)
	for range probeRuns {
		t0 := time.Now()
		sink = peak.Run(1, goroutines, probeSteps)
		fastest = min(fastest, time.Since(t0))
	}
	fastest = max(fastest, 1)
	if probeBest == 0 || fastest < probeBest {
		probeBest = fastest
	}
	return fastest
}

// sink keeps the probe's result alive.
var sink float32
