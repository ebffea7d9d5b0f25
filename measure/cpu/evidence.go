package cpu

import (
	"context"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
	"github.com/autotune-dev/autotune/measure/harness"
)

// An EvidenceSet is what the evidence of contention read around samples
// of a fixed kernel, the peak loop on Goroutines goroutines run for about
// Length a sample: the data from which the judgment's thresholds
// (harness.Judge) are chosen, taken once on a quiet machine and once with
// another process holding a core.
type EvidenceSet struct {
	Goroutines int              `json:"goroutines"`
	Length     time.Duration    `json:"length_ns"`
	Samples    []harness.Sample `json:"samples"`
	// StealNS is the steal of each sample's interval, summed over CPUs
	// (/proc/stat, in clock ticks of 10 ms): the harness reads it per
	// candidate, not per sample, since reading it costs a file read.
	StealNS []int64 `json:"steal_ns"`
}

// evidenceLengths are the lengths of the experiment's samples: the
// shortest a tuned candidate's sample is when evidence is gathered, a
// typical one and a long one.
var evidenceLengths = []time.Duration{200 * time.Microsecond, 2 * time.Millisecond, 20 * time.Millisecond}

// SampleEvidence times n samples of the peak loop for each length of
// evidenceLengths on one goroutine and on every core of t, with the
// evidence the tuning harness reads around each sample, plus each
// sample's steal. ctx stops it between samples.
func SampleEvidence(ctx context.Context, t device.Target, n int) ([]EvidenceSet, error) {
	lanes, cores := peakLanes(t), peakGoroutines(t)
	var sets []EvidenceSet
	for _, g := range []int{1, cores} {
		for _, length := range evidenceLengths {
			if g == 1 && cores == 1 && len(sets) == len(evidenceLengths) {
				break
			}
			set := EvidenceSet{Goroutines: g, Length: length}
			steps := stepsFor(lanes, g, length)
			for range n {
				if err := ctx.Err(); err != nil {
					return sets, err
				}
				s, steal := evidenceSample(lanes, g, steps)
				set.Samples, set.StealNS = append(set.Samples, s), append(set.StealNS, steal)
			}
			sets = append(sets, set)
		}
	}
	return sets, nil
}

// stepsFor returns how many steps of the peak loop on g goroutines take
// about length, doubling from a few until the fastest of three runs does:
// on a busy machine one run may stall.
func stepsFor(lanes, g int, length time.Duration) int {
	steps := 1 << 8
	for ; steps < 1<<40; steps *= 2 {
		took := time.Duration(1<<63 - 1)
		for range 3 {
			t0 := time.Now()
			peak.Run(lanes, g, steps)
			took = min(took, time.Since(t0))
		}
		if took >= length {
			return max(1, int(float64(steps)*float64(length)/float64(took)))
		}
	}
	return steps
}

// evidenceSample times one sample as the tuning harness does, and reads
// the steal around it.
func evidenceSample(lanes, g, steps int) (harness.Sample, int64) {
	steal0, _ := harness.Steal()
	cpu0, invol0, ok0 := harness.Usage()
	t0 := time.Now()
	peak.Run(lanes, g, steps)
	s := harness.Sample{Wall: time.Since(t0)}
	cpu1, invol1, ok1 := harness.Usage()
	steal1, _ := harness.Steal()
	if ok0 && ok1 {
		s.CPU, s.Involuntary = cpu1-cpu0, invol1-invol0
	}
	return s, steal1 - steal0
}

// EvidenceStats sums up an EvidenceSet: the share of its samples in
// which a thread was preempted, and of those whose interval had steal;
// the 50th, 90th and 99th percentiles and the maximum of the share of
// their wall time they lost (harness.Sample.Lost, against
// harness.Expected); the share of Goroutines cores' worth of CPU time
// they lost together; and the share the judgment marks disturbed.
type EvidenceStats struct {
	Preempted, Stolen float64
	Lost              [4]float64
	PooledLost        float64
	Disturbed         float64
}

// Stats returns the set's EvidenceStats.
func (s EvidenceSet) Stats() EvidenceStats {
	var st EvidenceStats
	n := len(s.Samples)
	if n == 0 {
		return st
	}
	want := harness.Expected(s.Samples, s.Goroutines)
	lost := make([]float64, n)
	for i, u := range s.Samples {
		if u.Involuntary > 0 {
			st.Preempted++
		}
		if s.StealNS[i] > 0 {
			st.Stolen++
		}
		lost[i] = float64(u.Lost(want)) / float64(max(u.Wall, 1))
	}
	slices.Sort(lost)
	st.Lost = [4]float64{lost[n/2], lost[n*9/10], lost[n*99/100], lost[n-1]}
	disturbed, share := harness.Judge(s.Samples, s.Goroutines)
	st.PooledLost = 1 - share
	for _, d := range disturbed {
		if d {
			st.Disturbed++
		}
	}
	st.Preempted, st.Stolen, st.Disturbed = st.Preempted/float64(n), st.Stolen/float64(n), st.Disturbed/float64(n)
	return st
}
