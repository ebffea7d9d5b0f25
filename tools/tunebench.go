//go:build ignore

// Tunebench checks that tune and bench agree (issue 26: their medians of
// the same config within 15% on a quiet machine): for each workload, a
// brief tune into a fresh database, then bench of its winner, and a row
// with the winner, tune's median (re-measured with the leaders) and
// bench's, each with its p20–p80 spread, and bench's over tune's. Run it
// on a quiet machine (make tune-vs-bench):
//
//	go run tools/tunebench.go -bin ./autotune gemm:256x256x256 softmax:4096x1024 attention:1x8x1024x64
//
// A workload is op:shape; attention_causal is an op of its own.
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
	"strings"
	"syscall"
)

// timing is a median with its spread, as tune --json's best and bench
// --json's results give it.
type timing struct {
	Name     string          `json:"name"`
	Config   json.RawMessage `json:"config"`
	MedianNS float64         `json:"median_ns"`
	P20NS    float64         `json:"p20_ns"`
	P80NS    float64         `json:"p80_ns"`
}

// maxApart is the target: bench's median at most this much above or
// below tune's.
const maxApart = 0.15

func main() {
	bin := flag.String("bin", "./autotune", "the autotune binary")
	trials := flag.Int("trials", 40, "trials of each tune")
	budget := flag.String("time", "2m", "the most each tune may take")
	samples := flag.Int("samples", 10, "bench's --samples")
	flag.Parse()
	if flag.NArg() == 0 || *trials < 1 || *samples < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run tools/tunebench.go [-bin ./autotune] [-trials N] [-time 2m] [-samples N] OP:SHAPE...")
		os.Exit(2)
	}
	if err := compare(*bin, *trials, *budget, *samples, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// compare tunes and benches each workload and prints the table.
func compare(bin string, trials int, budget string, samples int, workloads []string) error {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	dir, err := os.MkdirTemp("", "tunebench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Printf("%s, %d trials or %s a tune, bench --samples %d\n\n", cpuModel(), trials, budget, samples)
	fmt.Println("| workload | load | winner | tune median (p20–p80) | bench median (p20–p80) | bench/tune | within 15% |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	apart := 0
	for i, w := range workloads {
		op, shape, ok := strings.Cut(w, ":")
		if !ok {
			return fmt.Errorf("%q: want OP:SHAPE", w)
		}
		flags := []string{"--op", op, "--shape", shape, "--device", "cpu", "--db", filepath.Join(dir, fmt.Sprintf("w%d.db", i))}
		load := loadAverage()
		var tuned struct {
			Best *timing `json:"best"`
		}
		if err := runJSON(stop, &tuned, bin, append([]string{"tune", "--trials", fmt.Sprint(trials), "--time", budget, "--seed", "1", "--json"}, flags...)...); err != nil {
			return err
		}
		if tuned.Best == nil {
			return fmt.Errorf("%s: the tune found no valid config", w)
		}
		var bench struct {
			Results []timing `json:"results"`
		}
		if err := runJSON(stop, &bench, bin, append([]string{"bench", "--samples", fmt.Sprint(samples), "--json"}, flags...)...); err != nil {
			return err
		}
		var b *timing
		for i := range bench.Results {
			if bench.Results[i].Name == "tuned" {
				b = &bench.Results[i]
			}
		}
		if b == nil {
			return fmt.Errorf("%s: bench --json has no tuned entry", w)
		}
		t := tuned.Best
		ratio := b.MedianNS / t.MedianNS
		within := ratio <= 1+maxApart && ratio >= 1/(1+maxApart)
		if !within {
			apart++
		}
		fmt.Printf("| %s %s | %s | %s | %s | %s | %.2f | %s |\n", op, shape, load, compact(t.Config), spread(*t), spread(*b), ratio,
			map[bool]string{true: "yes", false: "**no**"}[within])
	}
	fmt.Printf("\n%d of %d workloads within 15%%\n", len(workloads)-apart, len(workloads))
	return nil
}

// runJSON runs bin with args and decodes its standard output into v; a
// signal to this process passes on to it and, once it is gone, is the
// error.
func runJSON(stop <-chan os.Signal, v any, bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errs.String())
		}
	case sig := <-stop:
		cmd.Process.Signal(sig)
		<-done
		return fmt.Errorf("stopped by %v", sig)
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("%s %s: %v", bin, args[0], err)
	}
	return nil
}

func spread(t timing) string {
	return fmt.Sprintf("%s (%s–%s)", ns(t.MedianNS), ns(t.P20NS), ns(t.P80NS))
}

// ns formats a time in ns with three significant digits.
func ns(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.3g ms", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3g µs", x/1e3)
	}
	return fmt.Sprintf("%.3g ns", x)
}

// compact returns a config's JSON on one line without quotes and braces.
func compact(raw json.RawMessage) string {
	return strings.NewReplacer("{", "", "}", "", `"`, "", ":", "=").Replace(string(raw))
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
