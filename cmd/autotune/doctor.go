package main

import (
	"cmp"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/device"
	measurecpu "github.com/autotune-dev/autotune/measure/cpu"
)

var doctorCommand = command{
	name:    "doctor",
	summary: "say how busy this machine is, and what that means for tuning",
	help: `
Usage: autotune doctor [--window 1s] [--samples N] [--json]

Watches this machine for --window, idle itself, then times the FMA peak
loop (bench's peak entry) on every core for as long again, and reports:
the share of the CPUs other processes used and the busiest of them, the
steal (time the hypervisor gave to other machines), the load average, the
frequency governor and turbo (where the OS says), and how steady the peak
loop ran: its median against its best. The last line says what that means
for a long tune. A tune on a busy machine still works: every measurement
carries the evidence of contention, disturbed samples are taken again and
a disturbed leader is measured again before it can win (docs/measuring.md),
but it costs time, and the winner is surer on a quiet machine.

--samples N then times N samples of the peak loop of each of 200µs, 2ms
and 20ms, on one goroutine and on every core, with the evidence the tuner
reads around a sample, and prints how much time the samples lost and how
many the judgment marks disturbed; with --json, every sample. It is the
experiment from which the judgment's thresholds were chosen: run it on a
quiet machine and with another process holding a core (docs/measuring.md).

Examples:
  autotune doctor
  autotune doctor --window 5s --json
  autotune doctor --samples 200
`,
	run: runDoctor,
}

// doctorOptions are doctor's flags.
type doctorOptions struct {
	window  time.Duration
	samples int
	json    bool
}

// doctorJSON is doctor's --json output.
type doctorJSON struct {
	Cores          int                      `json:"cores"`
	WindowS        float64                  `json:"window_s"`
	Known          bool                     `json:"cpu_times_known"` // the OS reports CPU times; busy and steal are 0 otherwise
	Busy           float64                  `json:"busy"`            // share of all cores' time other work used
	Steal          float64                  `json:"steal"`           // share the hypervisor took
	Processes      []measurecpu.Process     `json:"processes"`
	Load           string                   `json:"load_average,omitempty"`
	Governor       string                   `json:"governor,omitempty"`
	Turbo          string                   `json:"turbo,omitempty"`
	PeakRuns       int                      `json:"peak_runs"`
	PeakSteadiness float64                  `json:"peak_steadiness"` // the peak loop's best time over its median
	Verdict        string                   `json:"verdict"`
	Evidence       []measurecpu.EvidenceSet `json:"evidence,omitempty"` // --samples
}

func runDoctor(c *command, std *stdio, args []string) error {
	var o doctorOptions
	fs := newFlags(c, std)
	fs.DurationVar(&o.window, "window", time.Second, "how long to watch the machine, and to time the peak loop")
	fs.IntVar(&o.samples, "samples", 0, "then time this many samples of the peak loop per length and goroutine count, with their evidence")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.window <= 0 || o.window > time.Minute {
		return usagef("--window must be above 0 and at most 1m")
	}
	if o.samples < 0 || o.samples > maxEvidenceSamples {
		return usagef("--samples must be 0 to %d", maxEvidenceSamples)
	}
	ctx, caught, stop := signalContext()
	defer stop()
	m, err := measurecpu.ReadMachine(ctx, device.Host(), o.window)
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	var sets []measurecpu.EvidenceSet
	if o.samples > 0 {
		sets, err = measurecpu.SampleEvidence(ctx, device.Host(), o.samples)
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		if err != nil {
			return err
		}
	}
	if o.json {
		return writeJSON(std, doctorJSON{
			Cores: m.Cores, WindowS: m.Window.Seconds(), Known: m.Known, Busy: m.Busy, Steal: m.Steal,
			Processes: append([]measurecpu.Process{}, m.Processes...), Load: m.Load, Governor: m.Governor, Turbo: m.Turbo,
			PeakRuns: len(m.Peak), PeakSteadiness: m.PeakSteadiness(), Verdict: m.Verdict(), Evidence: sets,
		})
	}
	printMachine(std, m)
	printEvidence(std, sets)
	return nil
}

// maxEvidenceSamples bounds --samples: 10000 samples of each length take
// about 15 minutes.
const maxEvidenceSamples = 10000

func printMachine(std *stdio, m measurecpu.Machine) {
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	unknown := func(s string) string { return cmp.Or(s, "not reported") }
	if m.Known {
		fmt.Fprintf(tw, "other work\t%.0f%% of %d cores over %v (%.1f cores' worth)\n", 100*m.Busy, m.Cores, m.Window, m.Busy*float64(m.Cores))
		fmt.Fprintf(tw, "steal\t%.1f%%\n", 100*m.Steal)
	} else {
		fmt.Fprintf(tw, "other work\tnot reported by this OS\n")
	}
	var procs []string
	for _, p := range m.Processes[:min(len(m.Processes), 5)] {
		procs = append(procs, fmt.Sprintf("%s (%d) %.0f%%", p.Name, p.PID, 100*p.Share))
	}
	fmt.Fprintf(tw, "busy processes\t%s\n", cmp.Or(strings.Join(procs, ", "), "none over 5% of a core"))
	fmt.Fprintf(tw, "load average\t%s\n", unknown(m.Load))
	fmt.Fprintf(tw, "governor\t%s\n", unknown(m.Governor))
	fmt.Fprintf(tw, "turbo\t%s\n", unknown(m.Turbo))
	fmt.Fprintf(tw, "peak loop\tmedian at %.0f%% of its best over %d runs on %d cores\n", 100*m.PeakSteadiness(), len(m.Peak), m.Cores)
	fmt.Fprintf(tw, "verdict\t%s\n", m.Verdict())
	tw.Flush()
}

// printEvidence prints, for each set of doctor --samples, the figures of
// its EvidenceStats.
func printEvidence(std *stdio, sets []measurecpu.EvidenceSet) {
	if len(sets) == 0 {
		return
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\ngoroutines\tsample\tsamples\tpreempted\tstolen\tlost p50\tp90\tp99\tmax\tpooled\tdisturbed\n")
	for _, s := range sets {
		st := s.Stats()
		fmt.Fprintf(tw, "%d\t%v\t%d\t%.0f%%\t%.0f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.0f%%\n", s.Goroutines, s.Length, len(s.Samples),
			100*st.Preempted, 100*st.Stolen, 100*st.Lost[0], 100*st.Lost[1], 100*st.Lost[2], 100*st.Lost[3], 100*st.PooledLost, 100*st.Disturbed)
	}
	tw.Flush()
}
