package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var bestCommand = command{
	name:    "best",
	summary: "print the best stored config of a workload",
	help: `
Usage: autotune best --op OP --shape SHAPE [--device DEV] [--db PATH] [--json]

Prints the fastest correct config recorded for a workload on a device, with
its median time and spread, for the op's current template version: records
of older versions measured other code and are not used.

Examples:
  autotune best --op softmax --shape 4096x1024 --device cpu
  autotune best --op gemm --shape 1024x1024x1024 --json
`,
	run: runBest,
}

// bestJSON is best's --json output; tune --json prints the same "best" member.
type bestJSON struct {
	Op       string     `json:"op"`
	Shape    []int      `json:"shape"`
	DType    string     `json:"dtype"`
	Device   string     `json:"device"`
	Template string     `json:"template"`
	Best     bestConfig `json:"best"`
}

type bestConfig struct {
	Config   schedule.Config `json:"config"`
	MedianNS float64         `json:"median_ns"`
	P20NS    float64         `json:"p20_ns"`
	P80NS    float64         `json:"p80_ns"`
	GBps     float64         `json:"gbps,omitempty"`
	GFLOPs   float64         `json:"gflops,omitempty"`
	Samples  int             `json:"samples"`
	Time     time.Time       `json:"time"`
	Tool     string          `json:"tool"`
}

// newBestConfig describes a record; with the op's template it adds GB/s
// and GFLOP/s.
func newBestConfig(r tunedb.Record, tmpl kernels.Template, shape []int) bestConfig {
	b := bestConfig{Config: r.Config, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
		Samples: len(r.SamplesNS), Time: r.Time, Tool: r.Tool}
	if tmpl.Bytes != nil && r.MedianNS > 0 {
		b.GBps, b.GFLOPs = tmpl.Bytes(shape)/r.MedianNS, tmpl.FLOPs(shape)/r.MedianNS
	}
	return b
}

func runBest(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var wf workloadFlags
	var path string
	wf.register(fs)
	dbFlag(fs, &path)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w, err := wf.resolve()
	if err != nil {
		return err
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	best, ok, err := latestBest(db, w)
	if err != nil {
		return err
	}
	if !ok && w.target.IsCUDA() {
		return fmt.Errorf("no successful record for %s in %s, and no CUDA backend yet to tune it with", describeWorkload(w), db.Path())
	}
	if !ok {
		return fmt.Errorf("no successful record for %s in %s; tune it first", describeWorkload(w), db.Path())
	}
	tmpl, _ := w.template()
	if *asJSON {
		return writeJSON(std, bestJSON{
			Op: w.op.Name, Shape: w.shape, DType: tune.DType, Device: w.target.Name, Template: best.Workload.Template,
			Best: newBestConfig(best, tmpl, w.shape),
		})
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", describeWorkload(w))
	fmt.Fprintf(tw, "config\t%s\n", best.Config)
	fmt.Fprintf(tw, "median\t%s (p20 %s, p80 %s, %d samples)", formatNS(best.MedianNS), formatNS(best.P20NS),
		formatNS(best.P80NS), len(best.SamplesNS))
	if tmpl.Bytes != nil {
		fmt.Fprintf(tw, "  %s", throughput(tmpl, w.shape, best.MedianNS))
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "template\t%s\n", best.Workload.Template)
	fmt.Fprintf(tw, "measured\t%s by autotune %s\n", best.Time.Format(time.RFC3339), best.Tool)
	return tw.Flush()
}

// latestBest returns the best record of the workload for the op's current
// template, whose code is what this autotune emits. For an op without a
// template it falls back to the version whose best record is newest.
func latestBest(db *tunedb.DB, w workload) (tunedb.Record, bool, error) {
	if tmpl, ok := w.template(); ok {
		r, found, err := db.Best(tune.Workload(tmpl, w.shape, w.target))
		if err != nil || found {
			return r, found, err
		}
		others, err := db.Find(w.op.Name, w.shape, tune.DType, w.target.Fingerprint())
		if err != nil || len(others) == 0 {
			return r, false, err
		}
		return r, false, fmt.Errorf("the records of %s are for template %s, not %s (this autotune's): they measured other code; tune again",
			describeWorkload(w), others[0].Template, tmpl.Version)
	}
	wls, err := db.Find(w.op.Name, w.shape, tune.DType, w.target.Fingerprint())
	if err != nil {
		return tunedb.Record{}, false, err
	}
	var best tunedb.Record
	found := false
	for _, wl := range wls {
		r, ok, err := db.Best(wl)
		if err != nil {
			return tunedb.Record{}, false, err
		}
		if ok && (!found || r.Time.After(best.Time)) {
			best, found = r, true
		}
	}
	return best, found, nil
}

func describeWorkload(w workload) string {
	return fmt.Sprintf("%s %s %s on %s", w.op.Name, kernels.FormatShape(w.shape), tune.DType, w.target.Fingerprint())
}
