package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/ranges"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var tuneCommand = command{
	name:    "tune",
	summary: "tune a workload (or a tasks file's) and record every measurement",
	help: `
Usage: autotune tune --op OP --shape SHAPE [--dtype DTYPE] [--device DEV] [flags]
       autotune tune --tasks FILE [--scheduler gradient|round-robin|ansor] [flags]
       autotune --op OP --shape SHAPE [--device DEV] [flags]

Explores the knobs of the op's template for one workload: generates a kernel
for each proposed config, builds a batch at a time, checks each kernel
against a float64 reference, times the correct ones, and stores every
measurement (failures too) in the tuning database. Rerunning the same
command resumes: configs already measured are not measured again, except
that a config that timed out or crashed (which the machine, not the config,
may cause) is measured once more by the next run; --retry-failed measures
again every config that only ever timed out or crashed. Ctrl-C, SIGTERM or
SIGHUP commits what was measured, prints the summary and exits 130, 143 or
129 (128 plus the signal's number), so that scripts stop too. When another
process holds the database, the tuner says it is waiting; after 30 s it
keeps the batch in DB.pending.jsonl beside the database and goes on, and a
later batch (or the next command that writes to the database) stores it.
Two tuners of the same workload on one database divide it between them:
each claims the configs of a batch before measuring them and leaves the
other's to it, so none is measured twice; the progress line says how many
were left to the other.

--shape may give any extent as a range lo..hi, ends included (1..4096x768x768):
the range is tuned within the one budget. Its first buckets, the ends and
the geometric middle of each ranged extent, are tuned as ordinary
workloads (--trials shared among them and two more); then held-out
shapes of the range, on a geometric ladder of 9 points an extent, get a
short tune of their own (half a bucket's trials, 4 to 12; 4 in a tasks
file) and every bucket's winner is timed there: the regret is how much
slower the winner of the nearest bucket is than the best measured there. The held-out shape of the largest regret (above 2%)
becomes a bucket while the budget lasts. The summary (and --json:
buckets, held_out, regret_median, regret_max) shows each bucket's winner
and the regret per held-out shape; the range is saved in the database,
and 'autotune gen' dispatches the shapes of the range to their nearest
bucket's winner. --time bounds the whole range. Other commands take one
shape, not a range.

--dtype is the element type of the workload in memory: f32 (the default),
bf16 or f16, accumulated in float32 (an op or backend without kernels of a
dtype refuses it, naming those it has). Records name the
toolchain that built the candidates ('go env GOVERSION' of the go command,
or NVRTC's version for CUDA): a run with another toolchain measures anew,
seeded with the old toolchain's winners, since a compiler changes a
kernel's speed.

The default search, analytic, is evolutionary, guided by a cost model (gradient-boosted
trees) trained on every record of the op on the device, all shapes together,
and on those of ops with the same knobs (GEMM with another epilogue), and
saved in the database; a new shape starts from the best configs of the
nearest tuned shapes, then of those ops. --model ucb ranks by an upper
confidence bound instead (it did not win: docs/benchmarks.md). --strategy
random or grid and --model none are the controls.

Before the model has data, analytic ranks configs by the template's own
estimate of their time (FLOPs, bytes, register and cache footprints,
tails, goroutines against cores): the first batch takes the configs it
ranks best, best first, spread over the knobs it cannot tell apart (those
within 5% of each other count as equally good), and later batches mix it
with the model, its
weight falling as measurements arrive (it counts as 32 of them, and a
model warmed by other shapes outweighs it at once). --strategy shipped
does the same with a cost model trained on other machines' landscapes and
shipped with autotune, where one is shipped for the template's version
(today's: softmax, float32; elsewhere the template's estimate, as analytic);
--strategy evolutionary uses neither (its first batch is a space-filling
design).

The run stops at whichever budget comes first: --trials new measurements,
--time of wall time, --early-stop trials without a new best, or, with
--stop-gain F, once the cost model expects no unmeasured config to be faster
than the best by more than the fraction F (checked after each batch from
--stop-gain-after trials on, 64 by default; docs/benchmarks.md measures what
it saves and costs on the landscape suite). Without
either flag it is 200 trials or a minute; --trials alone has no time limit. Then the
--remeasure fastest configs, and the fastest of each thread count of a
template with a threads knob, are measured again, in interleaved rounds,
and the winner is the fastest of those; the summary says when the two
fastest are within each other's p20–p80 spread. Every measurement carries
the evidence of contention (CPU time against wall time, preemptions,
steal, a calibration probe: docs/measuring.md); samples that lost a tenth
of their time to other work are taken again, a leader whose samples were mostly disturbed is measured
again (up to three times) before it can win, and the summary says how
many measurements were disturbed, what was measured again, and whether
the winner stayed disturbed. autotune doctor says how busy the machine
is before a long run. Progress goes to stderr (a bar on a terminal, a
line per batch otherwise); the summary goes to stdout.

--tasks tunes every workload of a tasks file (a JSON list of {op, shape,
weight, causal}, or an object {"tasks": [...]} holding the list; see
docs/tasks.md and examples/tasks) in one run: --trials
and --time are the budget of the whole run, and the scheduler gives each
batch, after one per task, to the task with the largest expected reduction
of the weighted total latency (gradient: from the task's recent
improvements; ansor: by the rule of Ansor's task scheduler) or to each in
turn (round-robin). Progress names the task of each batch and the weighted
total; the summary gives per workload its best, trials, share of the
weighted total, and speedup against the op's plain-Go baseline: at the end
each best config and that baseline are timed side by side in one process,
as autotune bench does but with fewer samples (--baseline=false skips it;
workloads above 1e9 FLOPs a call, on a GPU or measured by remote workers
are left out with a note); then the contention line, for the tasks
together, as above. A task whose shape is a range stands for the range's
first buckets; once the scheduler is done, each range goes on as above
(regret on held-out shapes, buckets added) with the part of the budget it
kept aside and its share of what the scheduler left, and the summary (and
--json's "ranges") shows it as tune --shape does. Reruns resume every
task.

--nats URL sends each batch to the 'autotune worker' processes of the
target's device fingerprint through a NATS server ('autotune broker' or a
cluster) instead of measuring here; this process still writes the database
(docs/remote.md). --nats-key and --nats-ca pass the tuner's credential and
the certificate of a broker started with --auth. Each record names the
worker that measured it, and the leaders are measured again on another
worker than the one that found each: figures that disagree beyond their
spreads are settled by a third worker, and those it does not side with are
marked suspect and never make the winner ('autotune workers --db').

--isa avx2 tunes at AVX2 on an AVX-512 machine: AVX-512 configs leave the
space and the harness runs with GODEBUG=cpu.avx512f=off; the records are
those of the AVX2 device fingerprint, which 'autotune bench --isa avx2'
reads. Setting GODEBUG=cpu.avx512f=off does the same (and works with
--tasks and --nats, which --isa does not yet). --isa avx512 refuses a CPU
without it.

'autotune list' shows the ops and their knobs. A CUDA device (--device
sm_XX, or auto on a machine with a GPU) is tuned on the local GPU through
its driver and NVRTC.

Examples:
  autotune --op softmax --shape 4096x1024 --device cpu
  autotune tune --op softmax --shape 4096x1024 --trials 64 --strategy grid
  autotune tune --op softmax --shape 8192x512 --early-stop 48
  autotune tune --op gemm --shape 256x256x256 --trials 500 --stop-gain 0.02
  autotune tune --op gemm --shape 1024x1024x1024 --trials 100
  autotune tune --op gemm --shape 1..4096x768x768 --trials 400
  autotune tune --op softmax --shape 1..64x1024 --trials 120 --json | jq '.regret_median, .regret_max'
  autotune tune --op attention --causal --shape 1x8x1024x64 --trials 100 --time 10m
  autotune tune --op softmax --shape 1x100000 --time 5m --seed 7 --json
  autotune tune --op gemm --shape 64x64x64 --isa avx2
  autotune tune --tasks examples/tasks/bert-base-128.json --trials 400
  autotune tune --op gemm --shape 1024x1024x1024 --device cpu --nats nats://10.0.0.5:4222
  autotune tune --op gemm --shape 1024x1024x1024 --nats tls://10.0.0.5:4222 --nats-key tuner.key --nats-ca broker.pem
`,
	run: runTune,
}

// tuneOptions are the flags of tune.
type tuneOptions struct {
	workloadFlags
	db       string
	json     bool
	seed     uint64
	trials   int
	budget   time.Duration
	strategy string
	model    string
	early    int
	gain     float64
	gainMin  int
	leaders  int
	batch    int
	retry    bool
	isa      string

	tasks     string
	scheduler string
	baseline  bool
	nats      natsFlags
}

func (o *tuneOptions) register(fs *flag.FlagSet) {
	o.workloadFlags.register(fs)
	dbFlag(fs, &o.db)
	fs.BoolVar(&o.json, "json", false, "print the summary as one JSON object")
	isaFlag(fs, &o.isa)
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the search's proposals and of the test inputs; the same seed proposes the same configs")
	fs.IntVar(&o.trials, "trials", 200, "stop after N new measurements")
	fs.DurationVar(&o.budget, "time", time.Minute, "stop after this much wall time (0: no limit; none when only --trials is given)")
	fs.StringVar(&o.strategy, "strategy", search.Names()[0], "search strategy: "+strategyChoices())
	fs.StringVar(&o.model, "model", costmodel.Names()[0], "cost model guiding the search, when it is guided: "+modelChoices())
	fs.IntVar(&o.early, "early-stop", 0, "stop after N trials without a new best (0: never)")
	fs.Float64Var(&o.gain, "stop-gain", 0, "stop once the cost model expects no unmeasured config to beat the best by more than this fraction, e.g. 0.02 for 2% (0: never)")
	fs.IntVar(&o.gainMin, "stop-gain-after", tune.DefaultStopGainAfter, "with --stop-gain, measure at least N configs before the model may stop the run")
	fs.IntVar(&o.leaders, "remeasure", 3, "re-measure the N fastest configs, interleaved, before declaring the winner (0 or 1: don't)")
	fs.IntVar(&o.batch, "batch", 16, "configs built and measured together")
	fs.StringVar(&o.tasks, "tasks", "", "tune every workload of this tasks file (docs/tasks.md) in one run, instead of --op and --shape")
	fs.StringVar(&o.scheduler, "scheduler", tasks.Names()[0], "with --tasks, which task gets the next batch: "+schedulerChoices())
	fs.BoolVar(&o.baseline, "baseline", true, fmt.Sprintf("with --tasks, time each tuned kernel against its op's plain-Go baseline at the end, for the summary's speedup (workloads up to %.0e FLOPs a call)", plainGoMaxFLOPs))
	o.nats.register(fs, "measure on the 'autotune worker's of the target's fingerprint through this NATS server (e.g. "+defaultNATS+") instead of here (docs/remote.md)")
	fs.BoolVar(&o.retry, "retry-failed", false, "measure again every config whose only records are timeouts, crashes or runtime errors")
}

// strategyChoices lists the search strategies of the registry with what
// they do: "evolutionary (evolves ...), random (...), grid (...)".
func strategyChoices() string {
	var parts []string
	for _, k := range search.Kinds() {
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Name, k.Doc))
	}
	return strings.Join(parts, ", ")
}

// schedulerChoices lists the task schedulers likewise.
func schedulerChoices() string {
	var parts []string
	for _, k := range tasks.Kinds() {
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Name, k.Doc))
	}
	return strings.Join(parts, ", ")
}

// modelChoices lists the cost models of the registry likewise.
func modelChoices() string {
	var parts []string
	for _, k := range costmodel.Kinds() {
		parts = append(parts, fmt.Sprintf("%s (%s)", k.Name, k.Doc))
	}
	return strings.Join(parts, ", ")
}

// timeBudget returns the --time budget: as given, or none when --trials is
// given without --time ("tune 100 configs" means all of them), or the
// default minute.
func timeBudget(fs *flag.FlagSet, budget time.Duration) time.Duration {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["trials"] && !set["time"] {
		return 0
	}
	return budget
}

// checkTuneFlags rejects the budget and search flags that make no sense.
func checkTuneFlags(o tuneOptions) error {
	switch {
	case o.trials < 1:
		return usagef("--trials must be at least 1, not %d", o.trials)
	case o.budget < 0:
		return usagef("--time must not be negative")
	case o.batch < 1:
		return usagef("--batch must be at least 1, not %d", o.batch)
	case o.early < 0:
		return usagef("--early-stop must not be negative")
	case o.leaders < 0:
		return usagef("--remeasure must not be negative")
	case !(o.gain >= 0 && o.gain < 1):
		return usagef("--stop-gain is a fraction from 0 to 1 (0.02: 2%%), not %v", o.gain)
	case o.gainMin < 1:
		return usagef("--stop-gain-after must be at least 1, not %d", o.gainMin)
	}
	if _, err := search.Lookup(o.strategy); err != nil {
		return usagef("--strategy: %s", strings.TrimPrefix(err.Error(), "search: "))
	}
	if _, err := costmodel.Lookup(o.model); err != nil {
		return usagef("--model: %s", strings.TrimPrefix(err.Error(), "costmodel: "))
	}
	if k, _ := search.Lookup(o.strategy); o.gain > 0 && (!k.Guided || o.model == "none") {
		return usagef("--stop-gain asks the cost model: it needs a guided strategy with a learned model, not %s search with model %s", o.strategy, o.model)
	}
	return nil
}

func runTune(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o tuneOptions
	o.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o.budget = timeBudget(fs, o.budget)
	if o.isa != "" && (o.tasks != "" || o.nats.url != "") {
		return usagef("--isa applies to one workload measured here, not yet to --tasks or --nats (set GODEBUG=%s for AVX2 there)", hideAVX512)
	}
	if o.tasks != "" {
		if o.op != "" || o.shape != "" {
			return usagef("--tasks takes the workloads from its file: give no --op or --shape")
		}
		if err := checkTuneFlags(o); err != nil {
			return err
		}
		if o.gain > 0 {
			return usagef("--stop-gain applies to one workload, not yet to --tasks")
		}
		return runTuneTasks(std, o)
	}
	w, rng, err := o.resolveRange()
	if err != nil {
		return err
	}
	if err := checkTuneFlags(o); err != nil {
		return err
	}
	level, err := atISA(w.target, o.isa, envGODEBUG())
	if err != nil {
		return err
	}
	w.target = level.target
	tmpl, err := tunable(w, "tune")
	if err != nil {
		return err
	}
	if top := w; !rng.Single() { // a range: its largest shape must fit too
		top.shape = rng.Hi
		if _, err := tunable(top, "tune"); err != nil {
			return err
		}
	}
	// The measurer first: without a driver or a GPU of the target's
	// architecture there is nothing to open a database for.
	measurer, release, err := newTuneMeasurer(o, tmpl.Backend, tune.MeasurerOptions{Seed: o.seed, Target: w.target, Env: level.env})
	if err != nil {
		return err
	}
	defer release()
	db, err := openForTuning(o.db, std.errs)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()

	// Ctrl-C, SIGTERM or SIGHUP cancels the context: the measurer stops,
	// what finished is committed, the summary is printed, and the exit
	// status says which signal it was. A second Ctrl-C kills.
	ctx, caught, stop := signalContext()
	defer stop()
	toolchain, err := tune.ToolchainOf(ctx, measurer)
	if err != nil {
		return err
	}
	if !rng.Single() {
		rt := &rangeTuner{o: o, w: w, tmpl: tmpl, toolchain: toolchain, measurer: measurer, db: db, errs: std.errs}
		res, err := rt.run(ctx, rng, ranges.Options{Trials: o.trials})
		if err == nil {
			err = rt.report(std, rng, res)
		}
		return finishTune(db, &closed, caught, res.Spent, err)
	}
	progress := newProgress(std.errs, o.trials, tmpl.BytesOf(w.shape, w.dtype))
	fmt.Fprintf(std.errs, "tuning %s, built by %s, with %s search (seed %d) into %s\n", describeWorkload(w), toolchainName(toolchain), o.strategy, o.seed, db.Path())
	task := newTuneTask(o, w, tmpl, toolchain, measurer, db)
	task.Observer = progress
	s, err := tune.Run(ctx, task)
	progress.finish()
	if err != nil {
		return err
	}
	if o.json {
		err = writeJSON(std, tuneJSON(w, tmpl, toolchain, o, s))
	} else {
		printSummary(std, w, tmpl, s)
	}
	return finishTune(db, &closed, caught, s.Trials, err)
}

// newTuneTask is the task of tuning w as o says, measured by measurer
// into store.
func newTuneTask(o tuneOptions, w workload, tmpl kernels.Template, toolchain string, measurer tune.Measurer, store tune.Store) tune.Task {
	return tune.Task{
		Template: tmpl, Shape: w.shape, DType: w.dtype, Target: w.target, Toolchain: toolchain,
		Space:    tmpl.SearchSpace(w.shape, w.dtype, w.target),
		Measurer: measurer,
		Store:    store,
		Strategy: o.strategy, Model: o.model, EarlyStop: o.early, Remeasure: o.leaders,
		StopGain: o.gain, StopGainAfter: o.gainMin,
		Seed: o.seed, Trials: o.trials, Time: o.budget, BatchSize: o.batch,
		Tool: version, RetryFailed: o.retry,
	}
}

// finishTune closes the database of a tune that made n new records and
// ended with err, and returns the command's error: err, the database's,
// or the signal that stopped it.
func finishTune(db *tunedb.DB, closed *bool, caught func() os.Signal, n int, err error) error {
	// Records the database could not take yet are stored now, or stay in
	// its side file for the next run: say so rather than exit 0.
	*closed = true
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return stoppedBy(caught(), fmt.Sprintf("%d new records", n))
}

// tunable returns the template of w's op, or the failure that says why w
// cannot be tuned or benchmarked yet.
func tunable(w workload, what string) (kernels.Template, error) {
	backend := kernels.BackendOf(w.target)
	tmpl, ok := w.template()
	switch {
	case !ok && !tune.HasBackend(backend):
		return kernels.Template{}, fmt.Errorf("no %s backend yet: cannot %s %s on %s; use --device cpu",
			strings.ToUpper(string(backend)), what, w.op.Name, w.target)
	case !ok:
		return kernels.Template{}, fmt.Errorf("no %s template for op %s yet: cannot %s %s %s on %s",
			backend, w.op.Name, what, w.op.Name, kernels.FormatShape(w.shape), w.target)
	}
	// A template may have fewer dtypes than its op.
	if err := tmpl.CheckDType(w.dtype); err != nil {
		return kernels.Template{}, usagef("%s template: %v", backend, err)
	}
	ins, out := tmpl.Args(w.shape)
	total := out
	for _, n := range ins {
		total += n
	}
	if total > maxHarnessElements {
		return kernels.Template{}, usagef("%s %s is too large to %s here: its tensors hold %d float32 values, and the harness (with a float64 reference) takes at most %d",
			w.op.Name, kernels.FormatShape(w.shape), what, total, maxHarnessElements)
	}
	return tmpl, nil
}

// maxHarnessElements bounds the float32 values of a workload's tensors: the
// tuner and its harness each hold the inputs, the output and a float64
// reference, 12 bytes a value or more, and 2^29 of them is 6 GiB.
const maxHarnessElements = 1 << 29

// summaryJSON is tune's --json output.
type summaryJSON struct {
	Op          string                `json:"op"`
	Shape       []int                 `json:"shape"`
	DType       string                `json:"dtype"`
	Device      string                `json:"device"`
	Template    string                `json:"template"`
	Toolchain   string                `json:"toolchain,omitempty"` // what built the candidates; omitted when unknown
	Strategy    string                `json:"strategy"`
	Seed        uint64                `json:"seed"`
	Trials      int                   `json:"trials"`
	Resumed     int                   `json:"resumed"`
	Shared      int                   `json:"shared,omitempty"` // configs left to another tuner of the database
	Exhausted   bool                  `json:"exhausted"`
	EarlyStop   bool                  `json:"early_stop"`
	GainStop    bool                  `json:"gain_stop"` // --stop-gain ended the run
	Interrupted bool                  `json:"interrupted"`
	Failures    map[tunedb.Status]int `json:"failures"`
	BuildS      float64               `json:"build_s"`
	RunS        float64               `json:"run_s"`
	ElapsedS    float64               `json:"elapsed_s"`
	PerMinute   float64               `json:"candidates_per_minute"`
	Best        *bestConfig           `json:"best"`
	Leaders     []bestConfig          `json:"leaders,omitempty"` // re-measured, fastest first
	Tied        bool                  `json:"tied"`              // the two leaders' p20–p80 ranges overlap
	Contention  contentionJSON        `json:"contention"`
}

// contentionJSON says how disturbed a run's measurements were and what
// was measured again because of it (tune.Summary).
type contentionJSON struct {
	Evidenced  int  `json:"evidenced"`  // ok records of this run with evidence of contention
	Contended  int  `json:"contended"`  // those whose samples were mostly disturbed
	Remeasures int  `json:"remeasures"` // times the leaders were measured again
	Unsettled  bool `json:"unsettled"`  // the winner was still contended after the last
	// Awaiting are the leaders still contended when the winner is
	// unsettled: a later run on a quieter machine measures them again.
	Awaiting []string `json:"awaiting,omitempty"`
}

func tuneJSON(w workload, tmpl kernels.Template, toolchain string, o tuneOptions, s tune.Summary) summaryJSON {
	out := summaryJSON{
		Op: w.op.Name, Shape: w.shape, DType: string(w.dtype), Device: w.target.Name, Template: tmpl.Version, Toolchain: toolchain,
		Strategy: o.strategy, Seed: o.seed, Trials: s.Trials, Resumed: s.Resumed, Shared: s.Shared,
		Exhausted: s.Exhausted, EarlyStop: s.EarlyStop, GainStop: s.GainStop, Interrupted: s.Interrupted, Failures: s.Failures,
		BuildS: s.BuildTime.Seconds(), RunS: s.RunTime.Seconds(), ElapsedS: s.Elapsed.Seconds(), PerMinute: s.PerMinute(),
	}
	if s.Best != nil {
		b := newBestConfig(*s.Best, tmpl, w.shape, w.dtype)
		out.Best = &b
	}
	for _, r := range s.Leaders {
		out.Leaders = append(out.Leaders, newBestConfig(r, tmpl, w.shape, w.dtype))
	}
	out.Tied = s.Tied
	out.Contention = newContentionJSON(s)
	return out
}

func newContentionJSON(s tune.Summary) contentionJSON {
	c := contentionJSON{Evidenced: s.Evidenced, Contended: s.Contended, Remeasures: s.Remeasures, Unsettled: s.Unsettled}
	for _, cfg := range s.Awaiting {
		c.Awaiting = append(c.Awaiting, cfg.String())
	}
	return c
}

func printSummary(std *stdio, w workload, tmpl kernels.Template, s tune.Summary) {
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", describeWorkload(w))
	if s.Best != nil {
		b := *s.Best
		fmt.Fprintf(tw, "best\t%s\n", b.Config)
		fmt.Fprintf(tw, "median\t%s (p20 %s, p80 %s)  %s\n", tunedb.FormatNS(b.MedianNS), tunedb.FormatNS(b.P20NS), tunedb.FormatNS(b.P80NS),
			throughput(tmpl, w.shape, w.dtype, b.MedianNS))
	} else {
		fmt.Fprintf(tw, "best\tnone: no candidate passed the check\n")
	}
	if len(s.Leaders) > 1 {
		fmt.Fprintf(tw, "leaders\tre-measured %d× each, interleaved:\n", tune.RemeasureRounds)
		for _, r := range s.Leaders {
			fmt.Fprintf(tw, "\t  %s  (p20 %s, p80 %s)  %s\n", tunedb.FormatNS(r.MedianNS), tunedb.FormatNS(r.P20NS), tunedb.FormatNS(r.P80NS), r.Config)
		}
		if s.Tied {
			fmt.Fprintf(tw, "\t  the two fastest overlap within their p20–p80 spread: on this machine they are tied\n")
		}
	}
	state := ""
	switch {
	case s.Interrupted:
		state = ", interrupted"
	case s.Exhausted:
		state = ", every valid config measured"
	case s.EarlyStop:
		state = ", stopped early: no new best for a while"
	case s.GainStop:
		state = fmt.Sprintf(", stopped: the model expects at most %.1f%% from the unmeasured configs", 100*max(s.PredictedGain, 0))
	}
	if s.Shared > 0 {
		state = fmt.Sprintf(", %d left to another tuner%s", s.Shared, state)
	}
	fmt.Fprintf(tw, "trials\t%d this run, %d from earlier runs%s\n", s.Trials, s.Resumed, state)
	fmt.Fprintf(tw, "failures\t%s\n", formatFailures(s.Failures))
	fmt.Fprintf(tw, "contention\t%s\n", formatContention(s))
	fmt.Fprintf(tw, "time\tbuild %.1fs, run %.1fs, elapsed %.1fs (%.0f candidates/min)\n",
		s.BuildTime.Seconds(), s.RunTime.Seconds(), s.Elapsed.Seconds(), s.PerMinute())
	tw.Flush()
}

// formatContention says how disturbed the run's measurements were, what
// was measured again, and what that means for the winner.
func formatContention(s tune.Summary) string {
	var b strings.Builder
	if s.Evidenced == 0 {
		b.WriteString("unknown: the measurer gathers no evidence")
	} else {
		fmt.Fprintf(&b, "%d of %d measurements mostly disturbed", s.Contended, s.Evidenced)
		if 2*s.Contended > s.Evidenced {
			b.WriteString(" (a busy machine: see autotune doctor)")
		}
	}
	if s.Remeasures > 0 {
		fmt.Fprintf(&b, "; leaders measured again %d×", s.Remeasures)
	}
	if s.Unsettled {
		b.WriteString("; the winner's samples were still mostly disturbed, so it is provisional: bench it when the machine is quieter")
		if len(s.Awaiting) > 0 {
			fmt.Fprintf(&b, ", and run the same tune again then (same --db) to measure again %d leaders measured under contention", len(s.Awaiting))
		}
	}
	return b.String()
}

// formatFailures lists failures by status in the database's order: "none" or
// "wrong_answer 2, timeout 1".
func formatFailures(f map[tunedb.Status]int) string {
	var parts []string
	for _, st := range tunedb.Statuses() {
		if f[st] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, f[st]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// throughput is "82.6 GB/s, 10.3 GFLOP/s" for a kernel of the given median.
func throughput(tmpl kernels.Template, shape []int, dt dtype.DType, medianNS float64) string {
	if medianNS <= 0 {
		return ""
	}
	gbps, gflops := tmpl.Rates(shape, dt, medianNS)
	return fmt.Sprintf("%.3g GB/s, %.3g GFLOP/s", gbps, gflops)
}
