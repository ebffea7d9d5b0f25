package harness

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strconv"
	"time"
)

// Evidence is the evidence of contention a harness gathers while it times
// a kernel, as it sends it to the parent (measure.Disturbance is the
// parent's form, with the meaning of each field).
type Evidence struct {
	Samples             int     `json:"samples"`
	Disturbed           int     `json:"disturbed"`
	CPUShare            float64 `json:"cpu_share,omitempty"`
	StealNS             int64   `json:"steal_ns,omitempty"`
	InvoluntarySwitches int64   `json:"involuntary_switches,omitempty"`
	Probe               float64 `json:"probe,omitempty"`
}

// A Sample is one timed sample with what the process used meanwhile: the
// wall time, the CPU time of all its threads, and how often the OS
// preempted one of them for another task.
type Sample struct {
	Wall        time.Duration `json:"wall_ns"`
	CPU         time.Duration `json:"cpu_ns"`
	Involuntary int64         `json:"involuntary,omitempty"`
}

// minShare is how much of the CPU time of its least disturbed samples
// (per unit of wall time) a sample must have got to count as undisturbed:
// a kernel whose threads lost a fifth of their time to other tasks was
// timed on a machine it did not have.
const minShare = 0.8

// Judge says which samples were disturbed, and the median share of the
// CPU time the kernel got. A kernel on n goroutines that has its cores to
// itself gets about n times the wall time in CPU time, but how many it
// runs on is not known here (a thread count is a knob of some templates,
// and the runtime's spinning threads add CPU time of their own), so each
// sample is measured against the reference share (Reference), the level
// of the samples the machine disturbed least (Disturbed). share is the
// median against the reference, at most 1.
func Judge(samples []Sample) (disturbed []bool, share float64) {
	ref := Reference(samples)
	disturbed = make([]bool, len(samples))
	ratios := make([]float64, len(samples))
	for i, s := range samples {
		disturbed[i], ratios[i] = Disturbed(s, ref), s.ratio()
	}
	if ref == 0 {
		return disturbed, 0
	}
	slices.Sort(ratios)
	return disturbed, min(1, ratios[len(ratios)/2]/ref)
}

// Reference is the CPU time per wall time of the samples the machine
// disturbed least: the 90th percentile over samples, 0 for none. Not the
// highest: the OS adds the time of a thread running on another core to
// the process only when it stops or at a clock tick, and the sample that
// gets that lump reads several cores' worth.
func Reference(samples []Sample) float64 {
	if len(samples) == 0 {
		return 0
	}
	ratios := make([]float64, len(samples))
	for i, s := range samples {
		ratios[i] = s.ratio()
	}
	slices.Sort(ratios)
	return ratios[(len(ratios)-1)*9/10]
}

// Disturbed reports whether s was disturbed, against the reference share
// ref: the OS preempted one of the process's threads during it, or it got
// under minShare of ref.
func Disturbed(s Sample, ref float64) bool {
	return s.Involuntary > 0 || s.ratio() < minShare*ref
}

// ratio is the sample's CPU time per wall time; 0 without a wall time.
func (s Sample) ratio() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.CPU) / float64(s.Wall)
}

// probeSlowdown is how much slower than its best the calibration probe
// around a kernel may run before every sample of the kernel counts as
// disturbed: the probe runs on every core, so it sees a busy core that a
// kernel on fewer goroutines than cores would not notice but the
// configs it is compared with would.
const probeSlowdown = 1.25

// Summary returns the evidence of samples, judged by Judge, with the
// steal of their interval and the probe's slowdown (its time around the
// samples against its best; 0 when not run): a probe that ran
// probeSlowdown times slower than its best makes every sample disturbed.
func Summary(samples []Sample, disturbed []bool, share float64, stealNS int64, probe float64) Evidence {
	e := Evidence{Samples: len(samples), CPUShare: share, StealNS: stealNS, Probe: probe}
	for i, s := range samples {
		e.InvoluntarySwitches += s.Involuntary
		if disturbed[i] || probe > probeSlowdown {
			e.Disturbed++
		}
	}
	return e
}

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 on every Linux
// architecture Go runs on.
const userHZ = 100

// Steal returns the time the hypervisor gave this machine's CPUs to
// others since boot, summed over CPUs, from /proc/stat; ok is false where
// the OS does not say.
func Steal() (ns int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return parseSteal(b)
}

// parseSteal reads the eighth number of the "cpu" line of /proc/stat.
func parseSteal(b []byte) (ns int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 9 || string(f[0]) != "cpu" {
			continue
		}
		ticks, err := strconv.ParseInt(string(f[8]), 10, 64)
		if err != nil {
			return 0, false
		}
		return ticks * (int64(time.Second) / userHZ), true
	}
	return 0, false
}
