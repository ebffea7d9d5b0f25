package main

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tune/lab"
	"github.com/autotune-dev/autotune/tunedb"
)

// runSimulateRange is simulate --range: range tuning replayed on a range
// landscape, a directory of full landscapes of one op at several shapes
// of one range.
func runSimulateRange(std *stdio, fs *flag.FlagSet, o simulateOptions) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case o.suite != "" || o.tasks != "" || o.db != "" || o.records != "" || o.prior != "" || o.op != "" || o.shape != "" || o.heldOut != "":
		return usagef("--range takes its op and shapes from its directory: no --db, --records, --prior, --op, --shape, --suite, --tasks or --held-out")
	case o.gain > 0 || set["scheduler"] || set["at"]:
		return usagef("--range replays range tuning: no --stop-gain, --scheduler or --at")
	case o.alone < 1:
		return usagef("--alone must be at least 1, not %d", o.alone)
	}
	if err := o.checkRuns(); err != nil {
		return err
	}
	method, err := o.oneSearch("--range", set["strategy"])
	if err != nil {
		return err
	}
	fingerprint, _, err := o.fingerprint()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(o.rangeDir, "*.jsonl"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("--range %s: no landscape (*.jsonl) in it", o.rangeDir)
	}
	var recs []tunedb.Record
	for _, f := range files {
		rs, err := fileRecordsOf(f)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
	}
	var ops []string
	for _, r := range recs {
		if !slices.Contains(ops, r.Workload.Op) {
			ops = append(ops, r.Workload.Op)
		}
	}
	if len(ops) != 1 {
		return fmt.Errorf("%s: a range landscape is of one op, not %s", o.rangeDir, strings.Join(ops, ", "))
	}
	tmpl, ok := kernels.TemplateFor(ops[0], kernels.CPU) // recorded landscapes are of CPUs
	if !ok {
		return fmt.Errorf("no template for op %s yet: nothing to simulate", ops[0])
	}
	recordings, err := lab.RangeRecordings(recs, tmpl, fingerprint)
	if err != nil {
		return err
	}

	ctx, caught, stop := signalContext()
	defer stop()
	fmt.Fprintf(std.errs, "simulating range tuning of %s at %d recorded shapes of %s: %s search, seeds 1..%d\n",
		tmpl.Op.Name, len(recordings), o.rangeDir, method, o.seeds)
	report, err := lab.ReplayRange(ctx, lab.RangeReplay{
		Template: tmpl, Recordings: recordings, Method: method, Seeds: o.seeds,
		Trials: o.budget, Alone: o.alone, BatchSize: o.batch,
		Progress: func(r lab.RangeRun) {
			fmt.Fprintf(std.errs, "seed %d: %d trials, %d buckets, regret median %s max %s (against tunes alone: %s, %s)\n",
				r.Seed, r.Spent, len(r.Buckets), percent(r.Median), percent(r.Worst), percent(r.MedianAlone), percent(r.WorstAlone))
		},
	})
	if err != nil {
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		return err
	}
	if o.json {
		return writeJSON(std, newSimRangeJSON(report, method))
	}
	printSimRange(std, report, method)
	return nil
}

// percent is a regret as "4.1%", "-" when NaN (none measured) and "inf"
// when a bucket's winner cannot run a shape.
func percent(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 1):
		return "inf"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// simRangeJSON is simulate --range --json's output. Regrets that are
// infinite (a bucket's winner cannot run a shape) or NaN are null.
type simRangeJSON struct {
	Op          string   `json:"op"`
	Lo          []int    `json:"lo"`
	Hi          []int    `json:"hi"`
	DType       string   `json:"dtype"`
	Device      string   `json:"device"`
	Template    string   `json:"template"`
	Shapes      [][]int  `json:"shapes"`
	Strategy    string   `json:"strategy"`
	Seeds       int      `json:"seeds"`
	Budget      int      `json:"budget"` // the range tune's trials
	Alone       int      `json:"alone"`  // trials of a tune of one shape alone
	Median      *float64 `json:"regret_median"`
	Worst       *float64 `json:"regret_max"`
	MedianAlone *float64 `json:"regret_alone_median"`
	WorstAlone  *float64 `json:"regret_alone_max"`
	Fraction    float64  `json:"trial_fraction"`
	// The range tuner's own median regret and the true one at the same
	// shapes (medians over the seeds), and the correlation of its regrets
	// with the true ones there.
	Tuner     *float64         `json:"tuner_regret_median"`
	TunerTrue *float64         `json:"tuner_true_regret_median"`
	TunerCorr *float64         `json:"tuner_regret_correlation"`
	Runs      []simRangeRunRow `json:"runs"`
}

type simRangeRunRow struct {
	Seed        uint64               `json:"seed"`
	Trials      int                  `json:"trials"`
	Buckets     [][]int              `json:"buckets"`
	Median      *float64             `json:"regret_median"`
	Worst       *float64             `json:"regret_max"`
	MedianAlone *float64             `json:"regret_alone_median"`
	WorstAlone  *float64             `json:"regret_alone_max"`
	Tuner       *float64             `json:"tuner_regret_median"`
	TunerTrue   *float64             `json:"tuner_true_regret_median"`
	Fraction    float64              `json:"trial_fraction"`
	HeldOut     []simRangeHeldOutRow `json:"held_out"`
}

// simRangeHeldOutRow is the regret at one held-out shape; null when
// infinite (the bucket's winner cannot run it, or failed there).
type simRangeHeldOutRow struct {
	Shape       []int    `json:"shape"`
	Bucket      []int    `json:"bucket"`
	Regret      *float64 `json:"regret"`
	RegretAlone *float64 `json:"regret_alone"`
}

func newSimRangeJSON(r lab.RangeReport, m lab.Method) simRangeJSON {
	w := r.Workload
	out := simRangeJSON{
		Op: w.Op, Lo: r.Lo, Hi: r.Hi, DType: string(w.DType), Device: w.Device, Template: w.Template,
		Shapes: r.Shapes, Strategy: m.String(), Seeds: len(r.Runs), Budget: r.Trials, Alone: r.Alone,
		Median: finite(r.Median), Worst: finite(r.Worst), MedianAlone: finite(r.MedianAlone), WorstAlone: finite(r.WorstAlone),
		Fraction: r.Fraction, Tuner: finite(r.Tuner), TunerTrue: finite(r.TunerTrue), TunerCorr: finite(r.TunerCorr), Runs: []simRangeRunRow{},
	}
	for _, run := range r.Runs {
		out.Runs = append(out.Runs, simRangeRunRow{
			Seed: run.Seed, Trials: run.Spent, Buckets: run.Buckets,
			Median: finite(run.Median), Worst: finite(run.Worst), MedianAlone: finite(run.MedianAlone), WorstAlone: finite(run.WorstAlone),
			Tuner: finite(run.Tuner), TunerTrue: finite(run.TunerTrue), Fraction: run.Fraction, HeldOut: []simRangeHeldOutRow{},
		})
		for _, h := range run.HeldOut {
			row := &out.Runs[len(out.Runs)-1]
			row.HeldOut = append(row.HeldOut, simRangeHeldOutRow{Shape: h.Shape, Bucket: h.Bucket, Regret: finite(h.Regret), RegretAlone: finite(h.RegretAlone)})
		}
	}
	return out
}

func printSimRange(std *stdio, r lab.RangeReport, m lab.Method) {
	w := r.Workload
	shapes := make([]string, len(r.Shapes))
	for i, s := range r.Shapes {
		shapes[i] = kernels.FormatShape(s)
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "range\t%s %s %s on %s, template %s\n", w.Op, kernels.ShapeRange{Lo: r.Lo, Hi: r.Hi}, w.DType, w.Device, w.Template)
	fmt.Fprintf(tw, "recorded\t%d shapes: %s\n", len(r.Shapes), strings.Join(shapes, " "))
	fmt.Fprintf(tw, "runs\t%d seeds of %s search, %d trials for the range, %d for a shape alone\n", len(r.Runs), m, r.Trials, r.Alone)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "seed\ttrials\tbuckets\tregret median\tmax\tvs alone median\tmax\ttuner's median\tfraction")
	for _, run := range r.Runs {
		buckets := make([]string, len(run.Buckets))
		for i, b := range run.Buckets {
			buckets[i] = kernels.FormatShape(b)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\n", run.Seed, run.Spent, strings.Join(buckets, " "),
			percent(run.Median), percent(run.Worst), percent(run.MedianAlone), percent(run.WorstAlone), percent(run.Tuner), run.Fraction)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "regret\tmedian %s, max %s against the best recorded; median %s, max %s against tunes alone\n",
		percent(r.Median), percent(r.Worst), percent(r.MedianAlone), percent(r.WorstAlone))
	fmt.Fprintf(tw, "trials\t%.2f of tuning each held-out shape alone (median over the seeds)\n", r.Fraction)
	fmt.Fprintf(tw, "tuner\tits own median regret %s where the true one is %s at the same shapes (medians over the seeds), correlation %.2f\n",
		percent(r.Tuner), percent(r.TunerTrue), r.TunerCorr)
	tw.Flush()
}
