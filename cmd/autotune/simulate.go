package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tune/lab"
	"github.com/autotune-dev/autotune/tunedb"
)

var simulateCommand = command{
	name:    "simulate",
	summary: "compare search strategies (or task schedulers) by replaying recorded landscapes",
	help: fmt.Sprintf(`
Usage: autotune simulate (--db PATH | --records FILE.jsonl,...) --op OP --shape SHAPE [flags]
       autotune simulate --suite DIR [--held-out FILE,...] [flags]
       autotune simulate --tasks FILE (--db PATH | --records FILE.jsonl,...) [flags]
       autotune simulate --range DIR [--budget N] [--alone N] [flags]

Replays recorded measurements instead of measuring: each search runs once
per seed (1..--seeds) with the tuner's own loop, in a fresh tuning database
held in memory, against the records of one workload, until it has spent
--budget trials (by default %d, or as many as configs were recorded when
they are fewer) or tried every config. Nothing is built or timed, and runs
go side by side on every core, so a comparison of hundreds of runs takes
seconds to a minute, and the same command gives the same report.

The records come from a tuning database (--db) or JSON Lines exports
(--records, several separated by commas); the workload is picked by --op and
--shape, in the current version of the op's template, or else in an earlier
revision the template keeps for replay (softmax keeps softmax-2, the space
before its assembly form), searched in that revision's space; records of
other versions are refused: their configs would not correspond. The space searched is that of the machine
that recorded them, read from their device fingerprint; --device chooses
between machines when the records hold several (a name such as cpu, or a
fingerprint as 'autotune db ls' shows it). Record a full landscape with a grid
search, e.g. autotune --op softmax --shape 1024x1024 --strategy grid
--trials 100000 --time 0 --remeasure 0 --db landscape.db (no re-measured
leaders, so that every config is measured once).

A search is a strategy with, for a guided one, the cost model guiding it:

  %s

A guided strategy alone means it with the default model, %s. Per search
the report gives the median over seeds of the trials taken to get
within 5%% and 1%% of the best recorded median ("-" when half the runs or more
never did), the best found after 16, 32, 64 and 128 trials as a ratio to the
best recorded (1.00 is the best), and the proposals that fell outside the
recording (they count as failed trials). Model τ at 64 is the held-out
Kendall τ of the default cost model (%s) trained on the first 64 configs
its own search's runs measured and tested on every other recorded config.

--stop-gain F ends each run of a guided search as tune's --stop-gain does
(after --stop-gain-after trials, once the cost model expects less than the
fraction F from the configs left); the report's trials (median trials used)
and final (median best found, as a ratio to the best recorded) say what it
saved and what it gave up.

--prior loads records of other shapes of the op into each run's database
first, so that runs start warm, as on a machine that has tuned those shapes:
compare the trials to 5%% with and without it for the worth of transfer.

--suite runs every search on every landscape of a directory, the landscape
suite: each workload recorded in its JSON Lines files (*.jsonl) is one
landscape, replayed with a budget of every recorded config (runs stop once
within 1%% of the best and past 128 trials), and the guided searches run a
second time with the other landscapes of the op on the device as --prior.
It prints one Markdown table: per landscape and search the median trials to
5%% and 1%%, best@16/32/64, and the ratio of the trials to random search's
(0.20: five times fewer), then their geometric means. --held-out names files
whose landscapes are kept out of the tuning of the search: their geometric
mean is reported apart. The searches must include random, the baseline.

--tasks replays a tasks file (docs/tasks.md) through the task schedulers
instead of searches: every workload of the file must be recorded in --db or
--records, and each scheduler (--scheduler; by default every one: %s)
runs the whole file once per seed with one search (--strategy, the tuner's
default unless given), the same seeds, budget (--budget trials in all, by
default %d per task) and batch. The report gives, per scheduler, the weighted total
latency Σ weight·best after the trials of --at (by default a quarter, half,
three quarters and all of the budget) and at the end, as medians over the
seeds with their quartiles, as multiples of the best recorded total; the
trials each run took to reach the final total of round-robin's run of the
same seed; and the batches each task had. The weights are the file's: to
let a recorded landscape stand for a larger workload of a model, give it
the weight calls × (that workload's time / the recorded one's), see
docs/tasks.md.

--range replays range tuning (tune --shape lo..hi) instead: DIR holds full
landscapes (*.jsonl) of one op at several shapes of one range, the range
being their bounding box, and every shape of its ladder (9 points an
extent) must be among them; the others are held out from the tune. Each
seed runs the range tuner's own code on them with one search (--strategy,
the tuner's default unless given) and a budget of --budget trials (by
default a quarter of --alone trials for each recorded shape that is not a
first bucket). Then every recorded shape that is not a bucket is
dispatched to its nearest bucket, as gen's dispatch does, and the report
gives per seed and as medians over the seeds the regret of that bucket's
winner there against the best recorded there and against the best of a
tune of that shape alone in --alone trials (same search and seed), and
the trials the range took as a fraction of --alone for each of those
shapes. It sets the range tuner's own median regret beside the true one
at the shapes the tuner held out, served by the same buckets, with their
correlation (--json: tuner_regret_median, tuner_true_regret_median,
tuner_regret_correlation).

Progress goes to stderr, one line per run; the report to stdout.

Examples:
  autotune simulate --records softmax-1024x1024.jsonl --op softmax --shape 1024x1024
  autotune simulate --db landscape.db --op softmax --shape 1024x1024 --strategy evolutionary,random --seeds 20
  autotune simulate --records a.jsonl --op softmax --shape 1024x1024 --prior b.jsonl --json
  autotune simulate --suite tune/lab/testdata --strategy evolutionary,random --held-out gemm-64x64x64-epyc.jsonl
  autotune simulate --tasks tune/lab/testdata/tasks/bert-base-128-replay.json --batch 8 --seeds 20 \
    --records $(ls tune/lab/testdata/*.jsonl tune/lab/testdata/tasks/*.jsonl | paste -sd,)
  autotune simulate --range tune/lab/testdata/ranges/softmax-rows-x1024-epyc --seeds 20
`, lab.DefaultSimBudget, strings.Join(searchNames(), ", "), costmodel.Names()[0], costmodel.Names()[0], strings.Join(tasks.Names(), ", "), simTaskBudget),
	run: runSimulate,
}

// simulateOptions are the flags of simulate.
type simulateOptions struct {
	op, shape, device string
	dtype             string
	db, records       string
	prior             string
	suite, heldOut    string
	strategies        string
	seeds             int
	batch             int
	budget            int
	gain              float64
	gainMin           int
	json              bool
	tasks, scheduler  string
	at                string
	rangeDir          string
	alone             int
}

func (o *simulateOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.op, "op", "", "operator: "+strings.Join(kernels.Names(), ", ")+" (required)")
	fs.StringVar(&o.shape, "shape", "", "shape of the recorded workload, e.g. 1024x1024 (required)")
	dtypeFlag(fs, &o.dtype)
	fs.StringVar(&o.device, "device", "", "the recording machine, by name or fingerprint, when the records hold several (default: the only one)")
	fs.StringVar(&o.db, "db", "", "tuning database holding the recording")
	fs.StringVar(&o.records, "records", "", "JSON Lines exports holding the recording, separated by commas (instead of --db)")
	fs.StringVar(&o.prior, "prior", "", "JSON Lines records of other shapes of the op, loaded into each run's database first")
	fs.StringVar(&o.suite, "suite", "", "directory of JSON Lines landscapes: run every search on each (instead of --db or --records)")
	fs.StringVar(&o.heldOut, "held-out", "", "with --suite: files whose landscapes are reported apart, separated by commas")
	fs.StringVar(&o.strategies, "strategy", strings.Join(searchNames(), ","), "searches to compare, separated by commas")
	fs.IntVar(&o.seeds, "seeds", 20, "runs per search, with seeds 1..N")
	fs.IntVar(&o.batch, "batch", 16, "configs proposed and replayed together, as tune's --batch")
	fs.IntVar(&o.budget, "budget", 0, fmt.Sprintf("trials per run (0: %d, or as many as configs were recorded when they are fewer; with --tasks, %d per task)", lab.DefaultSimBudget, simTaskBudget))
	fs.Float64Var(&o.gain, "stop-gain", 0, "end each guided run as tune's --stop-gain does; the report gives the median trials and final best")
	fs.IntVar(&o.gainMin, "stop-gain-after", tune.DefaultStopGainAfter, "with --stop-gain, as tune's")
	fs.BoolVar(&o.json, "json", false, "print the report as one JSON object")
	fs.StringVar(&o.tasks, "tasks", "", "replay the workloads of this tasks file through the task schedulers (instead of --op and --shape)")
	fs.StringVar(&o.scheduler, "scheduler", strings.Join(tasks.Names(), ","), "with --tasks, the schedulers to compare, separated by commas")
	fs.StringVar(&o.rangeDir, "range", "", "replay range tuning on this directory of landscapes of one op at shapes of one range (instead of --op and --shape)")
	fs.IntVar(&o.alone, "alone", lab.DefaultAlone, "with --range, the trials of a tune of one shape alone, which the range's regret and trials are measured against")
	fs.StringVar(&o.at, "at", "", "with --tasks, trial counts to give the weighted total at, separated by commas (default: a quarter, half, three quarters and all of the budget)")
}

// searchNames are the text forms of lab.Methods: the searches simulate
// compares by default (models marked Extra, such as ucb, are left out).
// fingerprint returns --device as a device fingerprint: as given when it
// is one (it holds a "/"), else the fingerprint of the device it names
// (cuda: a CUDA one), or "" when it is not given. An unknown name is a
// usage error.
func (o simulateOptions) fingerprint() (fingerprint string, cuda bool, err error) {
	if o.device == "" || strings.Contains(o.device, "/") {
		return o.device, false, nil
	}
	t, err := device.Lookup(o.device)
	if err != nil {
		return "", false, usagef("%s", strings.TrimPrefix(err.Error(), "device: "))
	}
	return t.Fingerprint(), t.IsCUDA(), nil
}

// checkRuns refuses --seeds, --batch and --budget out of range: a usage
// error, as every mode of simulate reads them.
func (o simulateOptions) checkRuns() error {
	switch {
	case o.seeds < 1:
		return usagef("--seeds must be at least 1, not %d", o.seeds)
	case o.batch < 1:
		return usagef("--batch must be at least 1, not %d", o.batch)
	case o.budget < 0:
		return usagef("--budget must not be negative")
	}
	return nil
}

// oneSearch returns the one search that mode (--tasks, --range) replays:
// --strategy when given, else the default strategy; a list is a usage
// error.
func (o simulateOptions) oneSearch(mode string, given bool) (lab.Method, error) {
	text := search.Names()[0]
	if given {
		text = o.strategies
	}
	if strings.Contains(text, ",") {
		return lab.Method{}, usagef("%s replays one search: give one --strategy, not %s", mode, text)
	}
	m, err := lab.ParseMethod(strings.TrimSpace(text))
	if err != nil {
		return lab.Method{}, usagef("--strategy: %s", strings.TrimPrefix(err.Error(), "lab: "))
	}
	return m, nil
}

func searchNames() []string {
	var names []string
	for _, s := range lab.Methods() {
		names = append(names, s.String())
	}
	return names
}

// recordings reads the records simulate replays: the database of --db,
// else the files of --records.
func (o simulateOptions) recordings() ([]tunedb.Record, error) {
	if o.db != "" {
		return dbRecords(o.db)
	}
	return fileRecords(o.records)
}

func runSimulate(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o simulateOptions
	o.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.rangeDir != "" {
		return runSimulateRange(std, fs, o)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["alone"] {
		return usagef("--alone goes with --range")
	}
	if o.tasks != "" {
		return runSimulateTasks(std, fs, o)
	}
	if given["scheduler"] || given["at"] {
		return usagef("--scheduler and --at go with --tasks")
	}
	var searches []lab.Method
	for _, s := range strings.Split(o.strategies, ",") {
		sr, err := lab.ParseMethod(strings.TrimSpace(s))
		if err != nil {
			return usagef("--strategy: %s", strings.TrimPrefix(err.Error(), "lab: "))
		}
		searches = append(searches, sr)
	}
	switch {
	case !(o.gain >= 0 && o.gain < 1):
		return usagef("--stop-gain is a fraction from 0 to 1 (0.02: 2%%), not %v", o.gain)
	case o.gainMin < 1:
		return usagef("--stop-gain-after must be at least 1, not %d", o.gainMin)
	}
	if o.suite != "" {
		switch {
		case o.gain > 0:
			return usagef("--suite stops runs once within 1%% of the best: no --stop-gain (go test ./tune/lab -run TestSuiteStopGain measures it on the suite)")
		case o.db != "" || o.records != "" || o.prior != "" || o.op != "" || o.shape != "":
			return usagef("--suite takes its landscapes and priors from its directory: no --db, --records, --prior, --op or --shape")
		case o.json || o.budget != 0 || o.device != "":
			return usagef("--suite prints a Markdown table over whole landscapes: no --json, --budget or --device")
		case o.seeds < 1:
			return usagef("--seeds must be at least 1, not %d", o.seeds)
		case o.batch < 1:
			return usagef("--batch must be at least 1, not %d", o.batch)
		case !slices.Contains(searches, lab.Method{Strategy: "random"}):
			return usagef("--suite measures searches against random search: --strategy must include random")
		}
		return runSuite(std, o, searches)
	}
	if o.heldOut != "" {
		return usagef("--held-out goes with --suite")
	}
	wf := workloadFlags{op: o.op, shape: o.shape, dtype: o.dtype, device: "auto"}
	w, err := wf.resolve()
	if err != nil {
		return err
	}
	if w.dtype != tune.DType {
		// Recordings are found by op and shape; none of another dtype exists yet.
		return usagef("--dtype %s: simulate replays %s recordings only, for now", w.dtype, tune.DType)
	}
	switch {
	case o.db != "" && o.records != "":
		return usagef("--db and --records both name a recording; give one")
	case o.db == "" && o.records == "":
		return usagef("no recording: give --db PATH or --records FILE.jsonl")
	}
	if err := o.checkRuns(); err != nil {
		return err
	}
	fingerprint, _, err := o.fingerprint()
	if err != nil {
		return err
	}
	tmpl, ok := kernels.TemplateFor(w.op.Name, kernels.CPU) // recorded landscapes are of CPUs
	if !ok {
		return fmt.Errorf("no template for op %s yet: nothing to simulate", w.op.Name)
	}

	// Loading a large recording takes a while: signals stop that too.
	ctx, caught, stop := signalContext()
	defer stop()
	recs, err := o.recordings()
	if err != nil {
		return err
	}
	rec, err := lab.FindRecording(recs, tmpl, w.shape, fingerprint)
	if err != nil {
		return err
	}
	var prior []tunedb.Record
	if o.prior != "" {
		if prior, err = fileRecords(o.prior); err != nil {
			return err
		}
	}
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	names := make([]string, len(searches))
	for i, s := range searches {
		names[i] = s.String()
	}
	fmt.Fprintf(std.errs, "simulating %s %s on %s from %d records: %s with seeds 1..%d\n",
		tmpl.Op.Name, kernels.FormatShape(w.shape), rec.Workload.Device, len(rec.Records), strings.Join(names, ", "), o.seeds)
	report, err := lab.Simulate(ctx, lab.Simulation{
		Template: tmpl, Recording: rec, Prior: prior,
		Methods: searches, Seeds: o.seeds, Budget: o.budget, BatchSize: o.batch,
		StopGain: o.gain, StopGainAfter: o.gainMin,
		Progress: func(s lab.Method, r lab.SimRun) {
			fmt.Fprintf(std.errs, "%s seed %d: %d trials, within 5%% %s, within 1%% %s, %d never recorded\n",
				s, r.Seed, r.Trials, trialsText(r.TrialsTo5), trialsText(r.TrialsTo1), r.NotRecorded)
		},
	})
	if err != nil {
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		return err
	}
	if o.json {
		return writeJSON(std, newSimulateJSON(report))
	}
	printSimulation(std, report)
	return nil
}

// runSuite runs the landscape suite of o.suite.
func runSuite(std *stdio, o simulateOptions, searches []lab.Method) error {
	files, err := filepath.Glob(filepath.Join(o.suite, "*.jsonl"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no landscape (*.jsonl) in it", o.suite)
	}
	heldOut := map[string]bool{}
	for _, f := range strings.Split(o.heldOut, ",") {
		if f = strings.TrimSpace(f); f != "" {
			heldOut[f] = true
		}
	}
	// A landscape is one workload of one file; the records of every file
	// are the prior of the others (Simulate keeps those of the same op,
	// device and template version, other shapes).
	type found struct {
		file string
		recs []tunedb.Record
		keys []string // workloads, in the order met
	}
	var all []tunedb.Record
	var fs []found
	for _, f := range files {
		recs, err := fileRecordsOf(f)
		if err != nil {
			return err
		}
		x := found{file: filepath.Base(f), recs: recs}
		for _, r := range recs {
			if k := r.Workload.Key(); !slices.Contains(x.keys, k) {
				x.keys = append(x.keys, k)
			}
		}
		fs = append(fs, x)
		all = append(all, recs...)
	}
	for f := range heldOut {
		if !slices.ContainsFunc(fs, func(x found) bool { return x.file == f }) {
			return usagef("--held-out: no file %s in %s", f, o.suite)
		}
	}
	var suite []lab.SuiteLandscape
	for _, x := range fs {
		for _, k := range x.keys {
			var w tunedb.Workload
			for _, r := range x.recs {
				if r.Workload.Key() == k {
					w = r.Workload
					break
				}
			}
			tmpl, ok := kernels.TemplateFor(w.Op, kernels.CPU)
			if !ok {
				return fmt.Errorf("%s: no CPU template for op %s", x.file, w.Op)
			}
			rec, err := lab.FindRecording(x.recs, tmpl, w.Shape, w.Device)
			if err != nil {
				return fmt.Errorf("%s: %w", x.file, err)
			}
			var prior []tunedb.Record
			for _, r := range all {
				if r.Workload.Op == w.Op && r.Workload.Device == w.Device && r.Workload.Template == w.Template && r.Workload.Key() != k {
					prior = append(prior, r)
				}
			}
			suite = append(suite, lab.SuiteLandscape{
				Name:     fmt.Sprintf("%s %s (%s)", w.Op, w.ShapeString(), x.file),
				Template: tmpl, Recording: rec, Prior: prior, HeldOut: heldOut[x.file],
			})
		}
	}
	ctx, caught, stop := signalContext()
	defer stop()
	fmt.Fprintf(std.errs, "simulating %d landscapes of %s with seeds 1..%d\n", len(suite), o.suite, o.seeds)
	report, err := lab.RunSuite(ctx, lab.Suite{
		Landscapes: suite, Methods: searches, Seeds: o.seeds, BatchSize: o.batch,
		Progress: func(l string, s lab.Method, r lab.SimRun) {
			fmt.Fprintf(std.errs, "%s, %s seed %d: %d trials, within 5%% %s, within 1%% %s\n",
				l, s, r.Seed, r.Trials, trialsText(r.TrialsTo5), trialsText(r.TrialsTo1))
		},
	})
	if err != nil {
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		return err
	}
	return report.WriteMarkdown(std.out)
}

// dbRecords reads every record of the tuning database at path.
func dbRecords(path string) ([]tunedb.Record, error) {
	db, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	sums, err := db.Workloads()
	if err != nil {
		return nil, err
	}
	var recs []tunedb.Record
	for _, s := range sums {
		rs, err := db.Records(s.Workload)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	return recs, nil
}

// fileRecords reads the records of JSON Lines files (paths separated by
// commas), checked as an import checks them.
func fileRecords(paths string) ([]tunedb.Record, error) {
	var recs []tunedb.Record
	for _, p := range strings.Split(paths, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		rs, err := fileRecordsOf(p)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	return recs, nil
}

// fileRecordsOf reads the records of one JSON Lines file.
func fileRecordsOf(path string) ([]tunedb.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := tunedb.ReadRecords(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}

// trialsText says when a run got within a threshold: "at trial 14" or "never".
func trialsText(n int) string {
	if n == 0 {
		return "never"
	}
	return "at trial " + strconv.Itoa(n)
}

// simulateJSON is simulate's --json output. Medians that are +Inf (half
// the runs or more never got there) or NaN (not measured) are null.
type simulateJSON struct {
	Op           string         `json:"op"`
	Shape        []int          `json:"shape"`
	DType        string         `json:"dtype"`
	Device       string         `json:"device"`
	Template     string         `json:"template"`
	Recorded     int            `json:"landscape_size"`
	SpaceSize    int            `json:"space_size"`
	Outside      int            `json:"outside_space,omitempty"`
	BestNS       float64        `json:"best_ns"`
	Seeds        int            `json:"seeds"`
	Budget       int            `json:"budget"`
	Batch        int            `json:"batch"`
	Prior        int            `json:"prior_records"`
	PriorShapes  []string       `json:"prior_shapes,omitempty"`
	ModelTauAt64 *float64       `json:"model_tau_at_64"`
	TauSource    string         `json:"model_tau_source"`
	Strategies   []strategyJSON `json:"strategies"`
}

type strategyJSON struct {
	Name          string              `json:"name"`
	TrialsTo5     *float64            `json:"median_trials_to_5pct"`
	TrialsTo1     *float64            `json:"median_trials_to_1pct"`
	BestAt        map[string]*float64 `json:"best_at"`
	NeverRecorded int                 `json:"never_recorded"`
	Trials        float64             `json:"median_trials"`
	Final         *float64            `json:"median_final_best"` // the best found, as a ratio to the best recorded
	GainStops     int                 `json:"gain_stops"`        // runs --stop-gain ended
	Runs          []simRunJSON        `json:"runs"`
}

type simRunJSON struct {
	Seed      uint64 `json:"seed"`
	Trials    int    `json:"trials"`
	TrialsTo5 *int   `json:"trials_to_5pct"`
	TrialsTo1 *int   `json:"trials_to_1pct"`
	GainStop  bool   `json:"gain_stop,omitempty"`
}

func newSimulateJSON(r lab.SimReport) simulateJSON {
	w := r.Workload
	out := simulateJSON{
		Op: w.Op, Shape: w.Shape, DType: string(w.DType), Device: w.Device, Template: w.Template,
		Recorded: r.Recorded, SpaceSize: r.SpaceSize, Outside: r.Outside, BestNS: r.BestNS,
		Seeds: r.Seeds, Budget: r.Budget, Batch: r.BatchSize, Prior: r.Prior, PriorShapes: r.PriorShape,
		ModelTauAt64: finite(r.ModelTauAt64), TauSource: r.TauSource,
		Strategies: []strategyJSON{},
	}
	for _, s := range r.Methods {
		sj := strategyJSON{Name: s.Method.String(), TrialsTo5: finite(s.TrialsTo5), TrialsTo1: finite(s.TrialsTo1),
			BestAt: map[string]*float64{}, NeverRecorded: s.NotRecorded, Trials: s.Trials, Final: finite(s.Final), GainStops: s.GainStops}
		for i, n := range lab.BestAtTrials {
			sj.BestAt[strconv.Itoa(n)] = finite(s.BestAt[i])
		}
		for _, run := range s.Runs {
			sj.Runs = append(sj.Runs, simRunJSON{Seed: run.Seed, Trials: run.Trials,
				TrialsTo5: reached(run.TrialsTo5), TrialsTo1: reached(run.TrialsTo1), GainStop: run.GainStop})
		}
		out.Strategies = append(out.Strategies, sj)
	}
	return out
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func reached(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func printSimulation(std *stdio, r lab.SimReport) {
	w := r.Workload
	fmt.Fprintf(std.out, "workload   %s %s %s on %s, template %s\n", w.Op, w.ShapeString(), w.DType, w.Device, w.Template)
	space := "of a space too large to count"
	if r.SpaceSize > 0 {
		space = fmt.Sprintf("of %d valid", r.SpaceSize)
	}
	fmt.Fprintf(std.out, "landscape  %d configs recorded %s, best %s\n", r.Recorded, space, tunedb.FormatNS(r.BestNS))
	if r.Outside > 0 {
		fmt.Fprintf(std.out, "           %d recorded configs are not in the space and were left out\n", r.Outside)
	}
	fmt.Fprintf(std.out, "runs       %d seeds per search, budget %d trials, batch %d\n", r.Seeds, r.Budget, r.BatchSize)
	if r.Prior > 0 {
		fmt.Fprintf(std.out, "prior      %d records of %s loaded before each run\n", r.Prior, strings.Join(r.PriorShape, ", "))
	}
	fmt.Fprintln(std.out)
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "search\tto 5%\tto 1%\t")
	for _, n := range lab.BestAtTrials {
		fmt.Fprintf(tw, "best@%d\t", n)
	}
	fmt.Fprint(tw, "trials\tfinal\tnever recorded\n")
	for _, s := range r.Methods {
		fmt.Fprintf(tw, "%s\t%s\t%s\t", s.Method, medianText(s.TrialsTo5, "%.1f"), medianText(s.TrialsTo1, "%.1f"))
		for _, x := range s.BestAt {
			fmt.Fprintf(tw, "%s\t", medianText(x, "%.3f"))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\n", medianText(s.Trials, "%.1f"), medianText(s.Final, "%.3f"), s.NotRecorded)
	}
	tw.Flush()
	fmt.Fprintf(std.out, "\nmodel τ at 64 (held out, from the %s runs): %s\n", r.TauSource, medianText(r.ModelTauAt64, "%.2f"))
}

// medianText formats a median, "-" when it is +Inf or NaN, and drops a
// trailing ".0" so that whole trial counts read as counts.
func medianText(x float64, format string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strings.TrimSuffix(fmt.Sprintf(format, x), ".0")
}
