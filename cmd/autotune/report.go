package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/device"
	measurecpu "github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/report"
	"github.com/autotune-dev/autotune/tunedb"
)

var reportCommand = command{
	name:    "report",
	summary: "write an HTML report of the tuning database: curves, time, roofline, top configs, cost model",
	help: `
Usage: autotune report [--op OP --shape SHAPE [--dtype DTYPE] | --all] [--device DEV] [--out FILE.html] [--db PATH]

Writes one self-contained HTML page (no scripts, fonts or images from
elsewhere; the charts are inline SVG) about the workloads of the tuning
database: every workload by default or with --all, one workload with --op
and --shape (every template version of it). With --all, --device keeps the
workloads of that device only. With several workloads a summary comes
first. Per workload:

  - the best median so far against the trial number and against the time
    since the run began, one line per tuning run, re-measured leaders marked
  - a histogram of the correct configs' medians, and the failures by status
  - compile (generate and build) against execute (check and time) time per
    batch, with totals
  - a roofline: the FMA peak and the copy bandwidth of this machine,
    measured in process (bench's peak loop, a copy of 32 MiB, under a
    second), with the winner at its arithmetic intensity; only for
    workloads tuned on this machine
  - the 10 fastest configs with median, p20–p80 and the knobs that differ
  - a fresh cost model trained on the first 80% of the records and tested
    on the rest: predicted against measured, Kendall τ, and the knobs that
    matter most to it

The database keeps no run ids: runs are inferred from the records' times
and tools (package report's documentation says how). The best config,
times and rates are those 'autotune best' and 'autotune db ls' print.
The page goes to stdout unless --out names a file, which is written beside
its target and renamed into place: a report that fails or is stopped by
a signal (exit 128+signal) leaves the previous page as it was.

Examples:
  autotune report --out report.html
  autotune report --op softmax --shape 4096x1024 --out softmax.html
  autotune report --all --device cpu --db team.db > team.html
`,
	run: runReport,
}

func runReport(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var wf workloadFlags
	var path string
	wf.register(fs)
	dbFlag(fs, &path)
	all := fs.Bool("all", false, "report every workload (the default without --op)")
	out := fs.String("out", "", "write the page to `FILE` instead of standard output")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	one := set["op"] || set["shape"]
	if one && *all {
		return usagef("--all reports every workload; leave out --op and --shape, or --all")
	}
	var keep func(tunedb.Workload) bool
	switch {
	case one:
		w, err := wf.resolve()
		if err != nil {
			return err
		}
		fp := w.target.Fingerprint()
		keep = func(x tunedb.Workload) bool {
			return x.Op == w.op.Name && slices.Equal(x.Shape, w.shape) && x.DType == w.dtype && x.Device == fp
		}
	case set["device"]:
		target, err := lookupDevice(wf.device)
		if err != nil {
			return usagef("--device: %v", err)
		}
		fp := target.Fingerprint()
		keep = func(x tunedb.Workload) bool { return x.Device == fp }
	default:
		keep = func(tunedb.Workload) bool { return true }
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	allSums, err := db.Workloads()
	if err != nil {
		return err
	}
	var sums []tunedb.Summary
	for _, s := range allSums {
		if keep(s.Workload) {
			sums = append(sums, s)
		}
	}
	if len(sums) == 0 {
		if len(allSums) == 0 {
			return fmt.Errorf("no workloads in %s; tune one first", db.Path())
		}
		return fmt.Errorf("no workload in %s matches; run 'autotune db ls' to see what is there", db.Path())
	}
	opts := &report.Options{Generated: time.Now(), Limits: map[string]report.Limits{}}
	// The page is drawn in memory, where a signal can abandon it, and
	// only then written out: a stopped report leaves no file behind.
	ctx, caught, stop := signalContext()
	defer stop()
	var page bytes.Buffer
	err = interruptible(ctx, func() error {
		host := device.Host()
		if slices.ContainsFunc(sums, func(s tunedb.Summary) bool { return s.Workload.Device == host.Fingerprint() }) {
			fmt.Fprintln(std.errs, "measuring this machine's FMA peak and copy bandwidth for the roofline")
			gflops, gbps := measurecpu.Limits(host)
			opts.Limits[host.Fingerprint()] = report.Limits{PeakGFLOPs: gflops, GBps: gbps,
				Source: fmt.Sprintf("Peak %.1f GFLOP/s and bandwidth %.1f GB/s measured by autotune report on this machine as it wrote the page (bench's FMA loop on every core, a copy of 32 MiB)", gflops, gbps)}
		}
		ranges, err := db.Ranges()
		if err != nil {
			return err
		}
		opts.Ranges = ranges
		return report.Write(&page, db, sums, opts)
	})
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := std.out.Write(page.Bytes())
		return err
	}
	if err := writeFile(*out, func(w io.Writer) error { _, err := w.Write(page.Bytes()); return err }); err != nil {
		return err
	}
	fmt.Fprintf(std.errs, "wrote %s: %d workloads\n", *out, len(sums))
	return nil
}

// writeFile writes path through write, beside it first and renamed into
// place, so that a failure never leaves a truncated file where a good one
// was. The file is readable by all, as a file meant to be shared.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(dirOf(path), ".autotune-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
