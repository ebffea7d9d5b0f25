//go:build ignore

// Anchors prints the table of `make bench-anchors` from the --json output
// of autotune bench, one file per workload, in the order given:
//
//	go run tools/anchors.go bench1.json bench2.json ...
//
// Each row has the tuned kernel's median and p20–p80 spread, its GFLOP/s,
// the median of every baseline that ran (— where one did not), the best
// baseline and the tuned kernel's speed-up over it (its median divided by
// the tuned one's: above 1, tuned is faster), and the tuned kernel's
// distance from a bound: its time as a multiple of the memory-copy floor
// where the floor moves all the bytes the op must move (softmax), else its
// fraction of the FMA peak measured in the same run. It is a Markdown
// table, for docs/benchmarks.md.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

type result struct {
	Name     string  `json:"name"`
	MedianNS float64 `json:"median_ns"`
	P20NS    float64 `json:"p20_ns"`
	P80NS    float64 `json:"p80_ns"`
	GFLOPs   float64 `json:"gflops"`
	GBps     float64 `json:"gbps"`
}

type bench struct {
	Op         string   `json:"op"`
	Shape      []int    `json:"shape"`
	Machine    string   `json:"machine"`
	ISA        string   `json:"isa"`
	Results    []result `json:"results"`
	PeakGFLOPs float64  `json:"peak_gflops"`
	OfPeak     float64  `json:"of_peak"`
	Notes      []string `json:"notes"`
}

// own are the bench's entries that are not baselines.
var own = []string{"tuned", "peak", "floor"}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run tools/anchors.go BENCH.json...")
		os.Exit(2)
	}
	var benches []bench
	var baselines []string
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var b bench
		if err := json.Unmarshal(data, &b); err != nil || len(b.Results) == 0 {
			fmt.Fprintf(os.Stderr, "%s: not the output of autotune bench --json: %v\n", path, err)
			os.Exit(1)
		}
		benches = append(benches, b)
		for _, r := range b.Results {
			if !slices.Contains(own, r.Name) && !slices.Contains(baselines, r.Name) {
				baselines = append(baselines, r.Name)
			}
		}
	}
	fmt.Printf("| workload | tuned (p20–p80) | tuned GFLOP/s | %s | best baseline | tuned × best | bound |\n", strings.Join(baselines, " | "))
	fmt.Printf("| --- | --- | --- |%s --- | --- | --- |\n", strings.Repeat(" --- |", len(baselines)))
	var machines, notes []string
	for _, b := range benches {
		by := make(map[string]result)
		for _, r := range b.Results {
			by[r.Name] = r
		}
		tuned := by["tuned"]
		shape := make([]string, len(b.Shape))
		for i, n := range b.Shape {
			shape[i] = fmt.Sprint(n)
		}
		row := []string{b.Op + " " + strings.Join(shape, "x"),
			fmt.Sprintf("%s (%s–%s)", ns(tuned.MedianNS), ns(tuned.P20NS), ns(tuned.P80NS)),
			fmt.Sprintf("%.1f", tuned.GFLOPs)}
		best := ""
		for _, name := range baselines {
			r, ok := by[name]
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, ns(r.MedianNS))
			if best == "" || r.MedianNS < by[best].MedianNS {
				best = name
			}
		}
		if best == "" {
			row = append(row, "—", "—")
		} else {
			row = append(row, best, fmt.Sprintf("%.2f", by[best].MedianNS/tuned.MedianNS))
		}
		floor, hasFloor := by["floor"]
		bytes := tuned.GBps * tuned.MedianNS
		switch {
		case hasFloor && floor.GBps*floor.MedianNS >= 0.9*bytes:
			row = append(row, fmt.Sprintf("%.2f× the copy floor", tuned.MedianNS/floor.MedianNS))
		case b.PeakGFLOPs > 0:
			row = append(row, fmt.Sprintf("%.0f%% of the FMA peak (%.0f GFLOP/s)", 100*b.OfPeak, b.PeakGFLOPs))
		default:
			row = append(row, "—")
		}
		fmt.Printf("| %s |\n", strings.Join(row, " | "))
		m := b.Machine
		if b.ISA != "" {
			m += ", measured at " + b.ISA
		}
		if !slices.Contains(machines, m) {
			machines = append(machines, m)
		}
		for _, n := range b.Notes {
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	fmt.Println()
	for _, m := range machines {
		fmt.Printf("Machine: %s.\n", m)
	}
	for _, n := range notes {
		fmt.Printf("Note: %s.\n", n)
	}
}

// ns formats a time in ns with three significant digits: "812 ns",
// "1.04 ms".
func ns(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.3g s", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3g ms", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.3g µs", x/1e3)
	}
	return fmt.Sprintf("%.3g ns", x)
}
