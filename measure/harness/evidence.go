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

// maxLost is the share of its wall time a sample may lose to other work
// and still count as undisturbed. The evidence is bimodal: on a quiet
// machine a sample loses what a kernel worker's preemption costs, tens of
// microseconds, a few per cent of the shortest sample the tuner times
// (200 µs) and far less of a long one; a sample that shared its core with
// another busy task lost a scheduler slice, a millisecond or more, which
// is most of a short sample. doctor --samples measured few samples
// between 5% and 20% on a loaded 2-vCPU VM (docs/measuring.md); a tenth
// lies between the two.
const maxLost = 0.1

// maxSustainedLost is the share of its wall time the median sample of a
// kernel on several goroutines may lose to other work, against threads
// cores' worth of CPU time, before every sample counts as disturbed: looser than maxLost, since a kernel that shares
// one of two cores with another busy process loses a quarter or more
// (half, when the runtime ends up running its goroutines one after
// another), and the estimate of what was lost to other work is coarse
// (preemptionCost).
const maxSustainedLost = 0.25

// preemptionCost is the most time an involuntary switch plausibly cost
// the kernel: about the slice the Linux scheduler gives the task that
// preempted it when that task is busy (EEVDF's base slice, 0.75 ms times
// 1 + log2 of the CPUs: 1.5 ms on 2, 3 ms from 8). A kernel on several
// goroutines also leaves threads idle of its own accord, when their work
// is unequal or too short to be worth a second one, and that is no
// disturbance: the CPU time it fell short of threads cores' worth counts
// as lost to other work only as far as its preemptions can account for.
const preemptionCost = 2 * time.Millisecond

// accountingGrain is how late the OS may add a running thread's CPU time
// to its process's clock: Linux adds the time of a thread running on
// another core at the scheduler's tick (4 ms at 250 Hz, the common
// setting) or when it stops. On a 2-vCPU VM, 71% of 100 µs windows read
// none of the time of a second thread that ran throughout them. A sample
// of a kernel on several goroutines may therefore read up to a grain per
// other thread short of what it got, with no disturbance at all.
const accountingGrain = 4 * time.Millisecond

// Judge says which samples of a kernel on threads goroutines (0: not
// known) were disturbed, and the share of the CPU time the kernel got.
//
// A sample is disturbed when it lost maxLost of its wall time or more
// (Sample.Lost) against the share of a core an undisturbed sample gets
// (Expected). That judges a sample by the time it lost, not by whether
// the OS preempted one of its threads: on a small VM nearly every sample
// sees a preemption or two of a few microseconds, which cost nothing
// worth a retake. Involuntary switches are left out for that reason; a
// preemption that cost time shows in the CPU time. A sample of a kernel
// on several goroutines must lose that much beyond what the late
// accounting of its other threads' time can hide (accountingGrain): a
// sample much shorter than a tick cannot be judged alone.
//
// A kernel on two goroutines or more is also measured against threads
// cores' worth, which the samples measured against each other cannot see
// when all of them lost the same: when the samples not judged disturbed
// alone lost, together, maxSustainedLost of their wall time or more to
// other work (sustainedLost), the kernel had fewer cores than it runs on
// for the whole timing, and every sample is disturbed. Together, since
// the late accounting evens out over many samples and not in one. One
// goroutine needs no such check: one core's worth is what each of its
// samples is measured against.
//
// share is the samples' CPU time against threads cores' worth of their
// wall time, or, with threads not known, the median sample's against the
// expectation; at most 1.
func Judge(samples []Sample, threads int) (disturbed []bool, share float64) {
	want := Expected(samples, threads)
	disturbed = make([]bool, len(samples))
	if threads > 0 {
		share = pooledShare(samples, threads)
	} else if want > 0 {
		share = median(samples) / want
	}
	for i, s := range samples {
		disturbed[i] = Disturbed(s, want, threads)
	}
	if share > 0 && threads > 1 && sustainedLost(samples, disturbed, threads) >= maxSustainedLost { // share 0: no CPU time read
		for i := range disturbed {
			disturbed[i] = true
		}
	}
	return disturbed, min(1, share)
}

// Expected returns the CPU time per wall time an undisturbed sample of a
// kernel on threads goroutines gets (0 threads: not known). One goroutine
// gets one core's worth: the thread that times the sample runs it, and the
// OS counts that thread's time exactly. More get the samples' median,
// but at least one core's worth and at most threads: the other threads'
// time arrives in lumps (see Judge), so the median sample is the typical
// one. Not known, the reference share of the samples (Reference).
func Expected(samples []Sample, threads int) float64 {
	if threads <= 0 {
		return Reference(samples)
	}
	return min(max(median(samples), 1), float64(threads))
}

// median returns the median CPU time per wall time of samples; 0 for none.
func median(samples []Sample) float64 {
	if len(samples) == 0 {
		return 0
	}
	return sortedRatios(samples)[len(samples)/2]
}

// sortedRatios returns the CPU time per wall time of each sample, in
// increasing order.
func sortedRatios(samples []Sample) []float64 {
	ratios := make([]float64, len(samples))
	for i, s := range samples {
		ratios[i] = s.ratio()
	}
	slices.Sort(ratios)
	return ratios
}

// sustainedLost returns the share of their wall time the samples of a
// kernel on threads goroutines not judged disturbed alone lost, together,
// to other work: the CPU time they fell short of threads cores' worth,
// per core, but no more than their involuntary switches can account for
// (preemptionCost). Samples disturbed alone are left out, so that one
// long stall does not speak for the other samples.
func sustainedLost(samples []Sample, disturbed []bool, threads int) float64 {
	var lost, wall float64
	for i, s := range samples {
		if disturbed[i] {
			continue
		}
		lost += min(float64(s.Lost(float64(threads))), float64(s.Involuntary)*float64(preemptionCost))
		wall += float64(s.Wall)
	}
	if wall <= 0 {
		return 0
	}
	return lost / wall
}

// pooledShare returns the CPU time of samples against threads cores'
// worth of their wall time; 0 for none.
func pooledShare(samples []Sample, threads int) float64 {
	var cpu, wall time.Duration
	for _, s := range samples {
		cpu, wall = cpu+s.CPU, wall+s.Wall
	}
	if wall <= 0 {
		return 0
	}
	return float64(cpu) / (float64(threads) * float64(wall))
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
	return sortedRatios(samples)[(len(samples)-1)*9/10]
}

// Disturbed reports whether s, a sample of a kernel on threads
// goroutines (0: not known) when an undisturbed sample gets want cores'
// worth of CPU time per wall time, was disturbed: it lost maxLost of its
// wall time or more beyond what the late accounting of the other threads'
// time can hide (threads-1 grains of CPU time, accountingGrain).
func Disturbed(s Sample, want float64, threads int) bool {
	hidden := time.Duration(0)
	if threads > 1 && want > 0 {
		hidden = time.Duration(float64(threads-1) * float64(accountingGrain) / want)
	}
	return s.Wall > 0 && float64(s.Lost(want)-hidden) >= maxLost*float64(s.Wall)
}

// Lost returns the wall time s lost to other work when an undisturbed
// sample gets want cores' worth of CPU time per wall time: the CPU time it
// fell short of that, per core. 0 when the CPU time is not known.
func (s Sample) Lost(want float64) time.Duration {
	if want <= 0 || s.CPU <= 0 {
		return 0
	}
	return time.Duration(max(0, (want*float64(s.Wall)-float64(s.CPU))/want))
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
// configs it is compared with would. A core shared with another process
// about doubles the probe's time, since it ends when its slowest core
// does; with nothing else running, the probe right after a kernel that
// kept every core busy with 512-bit FMAs read up to 1.5 times its best on
// a Zen 4 VM (the clock drops under sustained vector load), and at 1.25
// that marked every sample of 36 of a quiet GEMM tune's 104 records.
const probeSlowdown = 1.6

// Summary returns the evidence of samples, judged by Judge, with the
// steal of their interval, the probe's slowdown (its time around the
// samples against its best; 0 when not run) and whether other work was
// runnable throughout (busy, see Busy). Every sample counts as disturbed
// when the machine was busy, when the probe ran probeSlowdown times slower
// than its best, or when the steal took maxSustainedLost of the cores'
// time over the samples: /proc/stat counts steal in ticks of 10 ms over
// all cores of the machine, too coarse to charge to a sample, and some
// kernels do not take it out of a thread's CPU time.
func Summary(samples []Sample, disturbed []bool, share float64, stealNS int64, cores int, probe float64, busy bool) Evidence {
	e := Evidence{Samples: len(samples), CPUShare: share, StealNS: stealNS, Probe: probe}
	var wall time.Duration
	for _, s := range samples {
		e.InvoluntarySwitches += s.Involuntary
		wall += s.Wall
	}
	stolen := wall > 0 && cores > 0 && float64(stealNS) >= maxSustainedLost*float64(cores)*float64(wall)
	for i := range samples {
		if disturbed[i] || stolen || busy || probe > probeSlowdown {
			e.Disturbed++
		}
	}
	return e
}

// Busy reports whether other work was runnable at every one of the
// readings of the machine's runnable tasks not of this process (Others)
// taken around a candidate's samples. It is what a kernel on fewer
// goroutines than cores does not see in its own CPU time: another process
// holding a core leaves it its own core, and the probe, a tenth of a
// millisecond a core, runs before the scheduler gives the other process
// its turn. It also marks a kernel on every core whose samples' CPU time,
// added late by the OS, does not show the core it shared. Every reading,
// since one may catch a task of a moment (the tuner's own, a kernel
// thread); a process holding a core is runnable at all of them.
func Busy(others []int) bool {
	for _, n := range others {
		if n < 1 {
			return false
		}
	}
	return len(others) > 0
}

// Others returns how many runnable tasks of the machine are not threads
// of this process: the runnable tasks of /proc/loadavg's fourth field,
// less this process's threads in state R (/proc/self/task/*/stat), the
// reader among them. ok is false where the OS does not say. A file read
// per thread of the process, taken twice a candidate.
func Others() (n int, ok bool) {
	ours, ok := ownRunnable()
	if !ok {
		return 0, false
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	all, ok := parseRunnable(b)
	return max(0, all-ours), ok
}

// ownRunnable returns how many of this process's threads are runnable.
func ownRunnable() (n int, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	for _, t := range tasks {
		if b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/stat"); err == nil && taskState(b) == 'R' {
			n++
		}
	}
	return n, true
}

// taskState returns the state letter of a /proc stat line, which follows
// the command name in parentheses (a name may hold spaces and ")").
func taskState(stat []byte) byte {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// parseRunnable reads the number before the slash of /proc/loadavg's
// fourth field ("1.20 1.10 0.90 3/181 4242").
func parseRunnable(b []byte) (n int, ok bool) {
	f := bytes.Fields(b)
	if len(f) < 4 {
		return 0, false
	}
	running, _, found := bytes.Cut(f[3], []byte("/"))
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(string(running))
	return n, err == nil
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
