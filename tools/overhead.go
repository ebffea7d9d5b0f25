//go:build ignore

// Overhead measures what the evidence of contention costs tuning's
// throughput (issue 26: under 2%): the same tune, into a fresh database
// each time, with the evidence on and off (AUTOTUNE_NO_EVIDENCE=1),
// interleaved on, off, off, on, ... so that a drift of the machine falls
// on both sides alike, -repeats times each. It prints every run (load
// average, candidates a minute, build and run time, records mostly
// disturbed) and the ratio of the medians, on against off: throughput
// and run time. Run it on a quiet machine (make evidence-overhead):
//
//	go run tools/overhead.go -bin ./autotune -op softmax -shape 256x256 -trials 64 -repeats 5
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// summary is what the tool reads of tune --json.
type summary struct {
	PerMinute  float64 `json:"candidates_per_minute"`
	BuildS     float64 `json:"build_s"`
	RunS       float64 `json:"run_s"`
	Contention struct {
		Evidenced int `json:"evidenced"`
		Contended int `json:"contended"`
	} `json:"contention"`
}

func main() {
	bin := flag.String("bin", "./autotune", "the autotune binary")
	op := flag.String("op", "softmax", "the op to tune")
	shape := flag.String("shape", "256x256", "its shape")
	trials := flag.Int("trials", 64, "trials of each run")
	repeats := flag.Int("repeats", 5, "runs with the evidence on, and as many off")
	seed := flag.Int("seed", 3, "the search's seed, the same for every run")
	flag.Parse()
	if *repeats < 1 || *trials < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run tools/overhead.go [-bin ./autotune] [-op OP -shape SHAPE] [-trials N] [-repeats N] [-seed N]")
		os.Exit(2)
	}
	if err := measure(*bin, *op, *shape, *trials, *repeats, *seed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// measure runs the tunes and prints the table and the ratios.
func measure(bin, op, shape string, trials, repeats, seed int) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	dir, err := os.MkdirTemp("", "overhead")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Printf("%s, %s %s, %d trials, seed %d\n\n", cpuModel(), op, shape, trials, seed)
	fmt.Println("| run | evidence | load | candidates/min | build time | run time | mostly disturbed |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	var cpm, run [2][]float64 // [0] on, [1] off
	for i := range 2 * repeats {
		off := i%4 == 1 || i%4 == 2 // on, off, off, on, ...
		side := 0
		if off {
			side = 1
		}
		db := filepath.Join(dir, fmt.Sprintf("run%d.db", i))
		cmd := exec.Command(bin, "tune", "--op", op, "--shape", shape, "--device", "cpu", "--trials", fmt.Sprint(trials),
			"--seed", fmt.Sprint(seed), "--strategy", "random", "--remeasure", "0", "--db", db, "--json")
		cmd.Env = os.Environ()
		if off {
			cmd.Env = append(cmd.Env, "AUTOTUNE_NO_EVIDENCE=1")
		}
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		load := loadAverage()
		if err := runStoppable(cmd, stop); err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, errs.String())
		}
		var s summary
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			return fmt.Errorf("tune --json: %v", err)
		}
		cpm[side], run[side] = append(cpm[side], s.PerMinute), append(run[side], s.RunS)
		disturbed := "–"
		if !off {
			disturbed = fmt.Sprintf("%d of %d", s.Contention.Contended, s.Contention.Evidenced)
		}
		fmt.Printf("| %d | %s | %s | %.0f | %.2f s | %.2f s | %s |\n", i/2+1, map[bool]string{false: "on", true: "off"}[off],
			load, s.PerMinute, s.BuildS, s.RunS, disturbed)
	}
	fmt.Printf("\nmedian candidates/min: on %.0f, off %.0f: on/off %.3f (the target: above 0.98)\n",
		median(cpm[0]), median(cpm[1]), median(cpm[0])/median(cpm[1]))
	fmt.Printf("median run time: on %.2f s, off %.2f s: on/off %.3f\n", median(run[0]), median(run[1]), median(run[0])/median(run[1]))
	return nil
}

// runStoppable runs cmd to its end; a signal to this process passes it
// on to cmd and, once cmd is gone, is the error.
func runStoppable(cmd *exec.Cmd, stop <-chan os.Signal) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case sig := <-stop:
		cmd.Process.Signal(sig)
		<-done
		return fmt.Errorf("stopped by %v", sig)
	}
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, or "CPU not
// reported".
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "CPU not reported"
}

// loadAverage returns the 1-minute load average, "?" where the OS does
// not say.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
