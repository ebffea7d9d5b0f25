package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/lookup"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var bestCommand = command{
	name:    "best",
	summary: "print the best stored config of a workload",
	help: `
Usage: autotune best --op OP --shape SHAPE [--dtype DTYPE] [--device DEV] [--db PATH] [--fallback] [--json]

Prints the fastest correct config recorded for a workload on a device, with
its median time and spread, for the op's current template version: records
of older versions measured other code and are not used.

Records measured with this machine's toolchain (the Go version that builds
CPU kernels, NVRTC's for CUDA) come first. When a shape has records of
other toolchains only (or of an unknown one: databases written before
records named it), best answers with them and says so on stderr, and the
"measured" line (and the toolchain member) names it.

With --fallback, a shape that was not tuned gets the answer a program's
run-time lookup (package lookup) gets: inside a tuned shape range, the
winner of the range's nearest bucket; else the winner of the nearest tuned
shape of the op on the device (distance: the sum over dimensions of
|log2 a - log2 b|), or the template's default config when nothing of the op
was tuned there. The "rule" line (and member) says which.

Examples:
  autotune best --op softmax --shape 4096x1024 --device cpu
  autotune best --op gemm --shape 1024x1024x1024 --json
  autotune best --op gemm --shape 1000x1000x1000 --fallback
`,
	run: runBest,
}

// bestJSON is best's --json output; tune --json prints the same "best" member.
type bestJSON struct {
	Op       string `json:"op"`
	Shape    []int  `json:"shape"`
	DType    string `json:"dtype"`
	Device   string `json:"device"`
	Template string `json:"template"`
	// Toolchain built the kernel that answered; "" when unknown.
	Toolchain string `json:"toolchain,omitempty"`
	// Rule is lookup's rule with --fallback: exact, bucket, nearest or
	// default; TunedShape the shape whose winner answered.
	Rule       string     `json:"rule,omitempty"`
	TunedShape []int      `json:"tuned_shape,omitempty"`
	Best       bestConfig `json:"best"`
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
	// Disturbance is the evidence of contention of the record; omitted
	// when unknown.
	Disturbance *measure.Disturbance `json:"disturbance,omitempty"`
}

// newBestConfig describes a record; with the op's template it adds GB/s
// and GFLOP/s.
func newBestConfig(r tunedb.Record, tmpl kernels.Template, shape []int, dt dtype.DType) bestConfig {
	b := bestConfig{Config: r.Config, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
		Samples: len(r.SamplesNS), Time: r.Time, Tool: r.Tool, Disturbance: r.Disturbance}
	b.GBps, b.GFLOPs = tmpl.Rates(shape, dt, r.MedianNS)
	return b
}

func runBest(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var wf workloadFlags
	var path string
	wf.register(fs)
	dbFlag(fs, &path)
	fallback := fs.Bool("fallback", false, "for an untuned shape, answer as a run-time lookup does: the nearest tuned shape's winner, else the default config")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w, err := wf.resolve()
	if err != nil {
		return err
	}
	tmpl, ok := w.template()
	if !ok {
		return fmt.Errorf("no %s template for op %s yet: nothing to look up for %s", kernels.BackendOf(w.target), w.op.Name, describeWorkload(w))
	}
	if err := tmpl.CheckDType(w.dtype); err != nil {
		return usagef("%s template: %v", tmpl.Backend, err)
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	table, err := lookup.New(db)
	if err != nil {
		return err
	}
	tc := tune.LocalToolchain(context.Background(), tmpl.Backend)
	answer, err := table.Prefer(tc).Best(w.op.Name, w.shape, w.dtype, w.target.Fingerprint())
	if err != nil {
		return err
	}
	if answer.Rule != lookup.Exact && !*fallback {
		return noBest(db, w, tmpl, answer)
	}
	warnToolchain(std, answer.Record, tc)
	out := bestJSON{Op: w.op.Name, Shape: w.shape, DType: string(w.dtype), Device: w.target.Name, Template: tmpl.Version,
		Toolchain: answer.Toolchain()}
	if *fallback {
		out.Rule, out.TunedShape = string(answer.Rule), answer.Shape
	}
	if answer.Record != nil {
		out.Best = newBestConfig(*answer.Record, tmpl, w.shape, w.dtype)
	} else {
		out.Best = bestConfig{Config: answer.Config}
	}
	if *asJSON {
		return writeJSON(std, out)
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", describeWorkload(w))
	if *fallback {
		fmt.Fprintf(tw, "rule\t%s\n", answer)
	}
	fmt.Fprintf(tw, "config\t%s\n", answer.Config)
	if r := answer.Record; r != nil {
		measuredAt := ""
		if answer.Rule != lookup.Exact {
			measuredAt = " at " + kernels.FormatShape(answer.Shape)
		}
		fmt.Fprintf(tw, "median\t%s (p20 %s, p80 %s, %d samples)%s", tunedb.FormatNS(r.MedianNS), tunedb.FormatNS(r.P20NS),
			tunedb.FormatNS(r.P80NS), len(r.SamplesNS), measuredAt)
		if answer.Rule == lookup.Exact && tmpl.Bytes != nil {
			fmt.Fprintf(tw, "  %s", throughput(tmpl, w.shape, w.dtype, r.MedianNS))
		}
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "measured\t%s by autotune %s, toolchain %s\n", r.Time.Format(time.RFC3339), r.Tool, toolchainName(r.Workload.Toolchain))
	}
	fmt.Fprintf(tw, "template\t%s\n", tmpl.Version)
	return tw.Flush()
}

// warnToolchain says on stderr that r, the record that answers, was
// measured with another toolchain than tc, this machine's: its speed may
// not be this toolchain's, so it is never the best silently.
func warnToolchain(std *stdio, r *tunedb.Record, tc string) {
	if r == nil || tc == "" || r.Workload.Toolchain == tc {
		return
	}
	fmt.Fprintf(std.errs, "autotune: warning: %s %s was measured with toolchain %s, not %s (this machine's); tune again to rank with this one\n",
		r.Workload.Op, r.Workload.ShapeString(), toolchainName(r.Workload.Toolchain), tc)
}

// bestOfToolchain returns the best record of w for tmpl in db, of
// toolchain tc when it has one, else of the toolchain measured last
// (tunedb.PreferToolchain); ok is false when there is none.
func bestOfToolchain(db *tunedb.DB, w workload, tmpl kernels.Template, tc string) (best tunedb.Record, ok bool, err error) {
	found, err := db.Find(w.op.Name, w.shape, w.dtype, w.target.Fingerprint())
	if err != nil {
		return best, false, err
	}
	var sums []tunedb.Summary
	for _, x := range found {
		if x.Template != tmpl.Version {
			continue
		}
		r, ok, err := db.Best(x)
		if err != nil {
			return best, false, err
		}
		if ok {
			sums = append(sums, tunedb.Summary{Workload: x, Best: &r})
		}
	}
	if sums = tunedb.PreferToolchain(sums, tc); len(sums) == 0 {
		return best, false, nil
	}
	return *sums[0].Best, true, nil
}

// toolchainName is a workload's toolchain for people: "unknown" for "".
func toolchainName(tc string) string {
	if tc == "" {
		return "unknown"
	}
	return tc
}

// noBest is best's error for a shape without a record of the current
// template: it says why, and what --fallback would answer.
func noBest(db *tunedb.DB, w workload, tmpl kernels.Template, answer lookup.Answer) error {
	others, err := db.Find(w.op.Name, w.shape, w.dtype, w.target.Fingerprint())
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.Template != tmpl.Version {
			return fmt.Errorf("the records of %s are for template %s, not %s (this autotune's): they measured other code; tune again",
				describeWorkload(w), o.Template, tmpl.Version)
		}
	}
	hint := "; --fallback gives the template's default config"
	switch answer.Rule {
	case lookup.Nearest:
		hint = fmt.Sprintf("; --fallback gives the winner of the nearest tuned shape, %s", kernels.FormatShape(answer.Shape))
	case lookup.Bucket:
		hint = fmt.Sprintf("; --fallback gives the winner of its tuned range's %s", answer)
	}
	return fmt.Errorf("no successful record for %s in %s; tune it first%s", describeWorkload(w), db.Path(), hint)
}

func describeWorkload(w workload) string {
	return fmt.Sprintf("%s %s %s on %s", w.op.Name, kernels.FormatShape(w.shape), w.dtype, w.target.Fingerprint())
}
