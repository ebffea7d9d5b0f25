package cpu

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
)

// Machine is what this machine is doing that bears on measuring kernels
// on it, as autotune doctor reports it before a long tune: how much of
// its CPUs other processes and the hypervisor take, how the frequency is
// governed, and how steady the FMA peak loop runs.
type Machine struct {
	Cores  int
	Window time.Duration // of the CPU shares below

	// Known says the OS reports CPU times (Linux's /proc/stat); the shares
	// are 0 otherwise. Busy is the share of all cores' time that was not
	// idle over the window, this process's own sleep aside: other work.
	// Steal is the share the hypervisor gave to other machines.
	Known       bool
	Busy, Steal float64
	Processes   []Process // the processes that used 5% of a core or more, busiest first
	Load        string    // /proc/loadavg's 1, 5 and 15 minute averages; "" unknown

	// Governor is the cpufreq governor of CPU 0 ("performance",
	// "powersave", "schedutil"), and Turbo whether the CPU may boost above
	// its base frequency ("on", "off"); "" where the OS does not say (a VM
	// often does not).
	Governor, Turbo string

	// Peak is the FMA peak loop timed on every core for another window
	// (at least minPeakRuns times): its samples, ns per run. Its median against its best says how steady
	// the machine is: at 1 every run got the cores, lower when other work
	// took them.
	Peak []float64
}

// A Process is another process and the share of a core it used over the
// window.
type Process struct {
	PID   int
	Name  string
	Share float64
}

// minPeakRuns is the fewest times ReadMachine times the peak loop.
const minPeakRuns = 10

// busyProcess is the share of a core from which a process is listed.
const busyProcess = 0.05

// ReadMachine watches the machine for window, idle itself, then times the
// peak loop on every core of t for another window. ctx stops it early.
func ReadMachine(ctx context.Context, t device.Target, window time.Duration) (Machine, error) {
	m := Machine{Cores: peakGoroutines(t), Window: window}
	m.Governor = readFirstLine("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	m.Turbo = turbo()
	m.Load = loadAverage()

	stat0, err0 := os.ReadFile("/proc/stat")
	procs0 := processTicks()
	select {
	case <-ctx.Done():
		return m, ctx.Err()
	case <-time.After(window):
	}
	stat1, err1 := os.ReadFile("/proc/stat")
	procs1 := processTicks()
	if err0 == nil && err1 == nil {
		a, okA := parseCPUTimes(stat0)
		b, okB := parseCPUTimes(stat1)
		if okA && okB && b.total > a.total {
			total := float64(b.total - a.total)
			m.Known = true
			m.Busy = float64((b.total-b.idle)-(a.total-a.idle)) / total
			m.Steal = float64(b.steal-a.steal) / total
		}
	}
	m.Processes = busiest(procs0, procs1, window)

	lanes, cores := peakLanes(t), peakGoroutines(t)
	for start := time.Now(); len(m.Peak) < minPeakRuns || time.Since(start) < window; {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		t0 := time.Now()
		peak.Run(lanes, cores, peakSteps)
		m.Peak = append(m.Peak, float64(time.Since(t0)))
	}
	return m, nil
}

// PeakSteadiness is the peak loop's median time against its best: 1 on a
// machine that lends every core to every run, lower when other work takes
// some. 0 without runs.
func (m Machine) PeakSteadiness() float64 {
	if len(m.Peak) == 0 {
		return 0
	}
	median, _, _ := measure.Summarize(m.Peak)
	return slices.Min(m.Peak) / median
}

// Verdict says in one line what the machine's state means for tuning.
func (m Machine) Verdict() string {
	others := m.Busy * float64(m.Cores) // cores' worth of other work
	steady := m.PeakSteadiness()
	var why []string
	if m.Known && others >= 0.25 {
		why = append(why, fmt.Sprintf("other work holds %.1f of %d cores", others, m.Cores))
	}
	if m.Known && m.Steal >= 0.02 {
		why = append(why, fmt.Sprintf("the hypervisor takes %.0f%% of the CPUs", 100*m.Steal))
	}
	if steady > 0 && steady < 0.9 {
		why = append(why, fmt.Sprintf("the peak loop's median runs at %.0f%% of its best", 100*steady))
	}
	if m.Governor != "" && m.Governor != "performance" {
		why = append(why, "the frequency governor is "+m.Governor+" (performance holds the clock steady)")
	}
	if len(why) == 0 {
		return "quiet: measurements here can be trusted; a long tune is fine now"
	}
	return "busy (" + strings.Join(why, "; ") + "): tuning will mark many measurements disturbed, take them again and " +
		"re-measure contended leaders, which costs time, and thread counts above the free cores will look slow; " +
		"tune when the machine is quieter if you can"
}

// cpuTimes are the sums over CPUs of /proc/stat's "cpu" line, in ticks:
// everything, idle (with iowait), and steal.
type cpuTimes struct{ total, idle, steal uint64 }

// parseCPUTimes reads the "cpu" line of /proc/stat: user nice system idle
// iowait irq softirq steal guest guest_nice, guest time being counted in
// user time already.
func parseCPUTimes(stat []byte) (cpuTimes, bool) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[1+i], 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		v[i] = n
	}
	var t cpuTimes
	for _, n := range v {
		t.total += n
	}
	t.idle, t.steal = v[3]+v[4], v[7]
	return t, true
}

// processTicks returns the CPU time, in ticks, of every process but this
// one, by PID, with its name.
func processTicks() map[int]Process {
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make(map[int]Process, len(dirs))
	self := os.Getpid()
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // it ended
		}
		pid, name, ticks, ok := parseProcessStat(b)
		if ok && pid != self {
			out[pid] = Process{PID: pid, Name: name, Share: float64(ticks)}
		}
	}
	return out
}

// parseProcessStat reads /proc/PID/stat: the PID, the name in parentheses
// (which may hold spaces and parentheses), and utime + stime, the 14th and
// 15th fields.
func parseProcessStat(b []byte) (pid int, name string, ticks uint64, ok bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return 0, "", 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return 0, "", 0, false
	}
	f := strings.Fields(string(b[end+1:])) // from the state, the 3rd field
	if len(f) < 13 {
		return 0, "", 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, "", 0, false
	}
	return pid, string(b[open+1 : end]), u + s, true
}

// busiest returns the processes that used busyProcess of a core or more
// between two readings of processTicks window apart, busiest first.
func busiest(before, after map[int]Process, window time.Duration) []Process {
	var out []Process
	for pid, a := range after {
		b, ok := before[pid]
		if !ok {
			b.Share = 0 // started during the window: all its time is new
		}
		share := (a.Share - b.Share) / userHZ / window.Seconds()
		if share >= busyProcess {
			out = append(out, Process{PID: pid, Name: a.Name, Share: share})
		}
	}
	slices.SortFunc(out, func(x, y Process) int {
		if x.Share != y.Share {
			if x.Share > y.Share {
				return -1
			}
			return 1
		}
		return x.PID - y.PID
	})
	return out
}

// userHZ is the unit of /proc's CPU times on every Linux architecture Go
// runs on.
const userHZ = 100

// turbo says whether the CPU may boost: intel_pstate's no_turbo, or
// cpufreq's boost; "" when neither says.
func turbo() string {
	switch readFirstLine("/sys/devices/system/cpu/intel_pstate/no_turbo") {
	case "0":
		return "on"
	case "1":
		return "off"
	}
	switch readFirstLine("/sys/devices/system/cpu/cpufreq/boost") {
	case "1":
		return "on"
	case "0":
		return "off"
	}
	return ""
}

// loadAverage returns the first three fields of /proc/loadavg, or "".
func loadAverage() string {
	f := strings.Fields(readFirstLine("/proc/loadavg"))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func readFirstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}
