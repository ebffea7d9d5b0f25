package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// A Method is a strategy together with the cost model that guides it, the
// unit that Simulate compares. Its text form is the strategy's name, with
// "/" and the model's for a guided strategy (search.Kind.Guided):
// "random", "grid", "evolutionary/gbt", "evolutionary/none".
type Method struct {
	Strategy string // a name of search.Kinds
	Model    string // a name of costmodel.Kinds for a guided strategy, "" for the others
}

func (s Method) String() string {
	if s.Model == "" {
		return s.Strategy
	}
	return s.Strategy + "/" + s.Model
}

// ParseMethod reads the text form of a Method. A guided strategy alone
// ("evolutionary") means it with the default model, as it does for tune.
func ParseMethod(text string) (Method, error) {
	name, model, hasModel := strings.Cut(text, "/")
	kind, err := search.Lookup(name)
	if err != nil {
		return Method{}, fmt.Errorf("lab: %w", err)
	}
	if !kind.Guided {
		if hasModel {
			return Method{}, fmt.Errorf("lab: %s search takes no model; guided strategies do: %s", name, strings.Join(guided(), ", "))
		}
		return Method{Strategy: name}, nil
	}
	if !hasModel {
		model = costmodel.Names()[0]
	}
	if _, err := costmodel.Lookup(model); err != nil {
		return Method{}, fmt.Errorf("lab: %w", err)
	}
	return Method{Strategy: name, Model: model}, nil
}

// guided names the guided strategies.
func guided() []string {
	var names []string
	for _, k := range search.Kinds() {
		if k.Guided {
			names = append(names, k.Name)
		}
	}
	return names
}

// Methods returns the search methods simulate compares by default: each
// strategy, a guided one with each cost model, in the order of
// search.Kinds and costmodel.Kinds, but for the strategies and models
// marked Extra, which cost more and won nothing or propose what another
// does (they run when named), and for a strategy with an estimate
// (search.Kind.Estimates) only with the default model: without a model
// it is the plain strategy's control again.
func Methods() []Method {
	var out []Method
	for _, k := range search.Kinds() {
		switch {
		case k.Extra:
		case !k.Guided:
			out = append(out, Method{Strategy: k.Name})
		case k.Estimates != "":
			out = append(out, Method{Strategy: k.Name, Model: costmodel.Names()[0]})
		default:
			for _, m := range costmodel.Kinds() {
				if !m.Extra {
					out = append(out, Method{Strategy: k.Name, Model: m.Name})
				}
			}
		}
	}
	return out
}

// Recording is the recorded landscape of one workload: every record of it
// in a tuning database or an export, and the target it was measured on.
type Recording struct {
	Workload tunedb.Workload
	// Target is rebuilt from Workload.Device: the space replayed must be
	// the one searched when recording (its cores and ISA decide which
	// configs are valid), not the one of the machine replaying.
	Target  device.Target
	Records []tunedb.Record
}

// FindRecording picks from recs the records of tmpl's op at shape, in f32,
// for the current version of tmpl or, when it has none, for the first of
// its earlier revisions (kernels.Template.Earlier) that has some: a
// landscape recorded before a revision changed the space still replays,
// in the space it was recorded in (Simulate and SimulateTasks pick that
// revision by the recording's Workload.Template). fingerprint names the
// device, or is "" when recs hold the workload for one device only.
// Records of other template versions are an error when no such ones
// exist: their configs would not correspond to the template's.
func FindRecording(recs []tunedb.Record, tmpl kernels.Template, shape []int, fingerprint string) (Recording, error) {
	name := tmpl.Op.Name + " " + kernels.FormatShape(shape) + " " + string(tune.DType)
	var matching []tunedb.Record
	var versions []string
	for _, r := range recs {
		w := r.Workload
		if w.Op != tmpl.Op.Name || !slices.Equal(w.Shape, shape) || w.DType != tune.DType || fingerprint != "" && w.Device != fingerprint {
			continue
		}
		matching = append(matching, r)
		if !slices.Contains(versions, w.Template) {
			versions = append(versions, w.Template)
		}
	}
	revision := tmpl
	if !slices.Contains(versions, tmpl.Version) {
		for _, e := range tmpl.Earlier {
			if slices.Contains(versions, e.Version) {
				revision = e
				break
			}
		}
	}
	byDevice := map[string][]tunedb.Record{}
	var devices []string
	for _, r := range matching {
		if r.Workload.Template != revision.Version {
			continue
		}
		if _, ok := byDevice[r.Workload.Device]; !ok {
			devices = append(devices, r.Workload.Device)
		}
		byDevice[r.Workload.Device] = append(byDevice[r.Workload.Device], r)
	}
	on := ""
	if fingerprint != "" {
		on = " on " + fingerprint
	}
	switch {
	case len(devices) == 0 && len(versions) > 0:
		return Recording{}, fmt.Errorf("lab: the records of %s%s are of template version %s, not %s (this autotune's): their configs do not correspond; record again",
			name, on, strings.Join(versions, ", "), tmpl.Version)
	case len(devices) == 0:
		return Recording{}, fmt.Errorf("lab: no records of %s%s", name, on)
	case len(devices) > 1:
		return Recording{}, fmt.Errorf("lab: records of %s from %d devices (%s): choose one", name, len(devices), strings.Join(devices, "; "))
	}
	target, err := device.FromFingerprint(devices[0])
	if err != nil {
		return Recording{}, err
	}
	return Recording{Workload: tune.Workload(revision, shape, target), Target: target, Records: byDevice[devices[0]]}, nil
}

// revision returns the revision of tmpl that rec was recorded with: tmpl
// itself or one of its earlier revisions (kernels.Template.Revision). Its
// space is the one rec replays in.
func (rec Recording) revision(tmpl kernels.Template) (kernels.Template, error) {
	r, ok := tmpl.Revision(rec.Workload.Template)
	if !ok {
		return kernels.Template{}, fmt.Errorf("lab: the recording of %s is of template version %s, which %s is not and does not keep (%s)",
			rec.Workload.Key(), rec.Workload.Template, tmpl.Op.Name, tmpl.Version)
	}
	return r, nil
}

// Simulation is a comparison of searches on a recorded landscape: each
// search runs once per seed with Run, replaying the recording instead of
// measuring.
type Simulation struct {
	Template  kernels.Template // the template of the recording's op, today's (its earlier revisions are found by the recording's version)
	Recording Recording
	// Prior are records of other shapes of the op, measured on the same
	// device with the same template version, loaded into each run's
	// database before the run: the run starts with a trained model and
	// configs transferred from those shapes, as a tuner would on a machine
	// that had tuned them. Records of ops whose templates share the
	// model's features (GEMM with another epilogue) count too; records of
	// other workloads are ignored.
	Prior []tunedb.Record

	Methods []Method
	Seeds   int // each search runs with seeds 1..Seeds; must be ≥ 1
	// Budget is the trials per run; 0 means DefaultSimBudget, or as many
	// as configs were recorded when they are fewer.
	Budget    int
	BatchSize int // 0 means 16, as for Run
	// StopEarly ends a run once it is within 1% of the best recorded
	// median and has passed the last of BestAtTrials: nothing after that
	// changes a figure of the report but the run's Trials. It lets a
	// budget of the whole landscape (for a search that needs it, such as
	// random search) cost little for the searches that do not.
	StopEarly bool
	// StopGain and StopGainAfter are Task's, for every run: with them a
	// guided search may end a run before its budget, and the report's
	// Trials and Final say what that saved and cost.
	StopGain      float64
	StopGainAfter int
	// Shipped is Task's: the model the shipped strategy ranks by instead
	// of the one shipped for the template's version, to measure a model
	// on landscapes it was not trained on; nil takes the shipped one.
	Shipped costmodel.Model
	// Parallel is how many runs go side by side; 0 means GOMAXPROCS.
	// It changes how long a simulation takes, never its report.
	Parallel int
	// Progress, when set, hears about every run when it ends, in seed
	// order, one call at a time.
	Progress func(s Method, r SimRun)
}

// SimReport is the outcome of a simulation.
type SimReport struct {
	Workload tunedb.Workload
	// Recorded is the number of distinct configs of the recording that are
	// valid in the space; SpaceSize the number of valid configs of the
	// space (0 when the space is too large to count). They are equal for a
	// full landscape.
	Recorded  int
	SpaceSize int
	// Outside counts recorded configs that are not valid in the space;
	// they are not replayed.
	Outside    int
	BestNS     float64 // the best recorded median
	Budget     int
	BatchSize  int
	Seeds      int
	Prior      int      // prior records loaded into each run
	PriorShape []string // their shapes, e.g. "512x2048"
	Methods    []MethodReport
	// ModelTauAt64 is the held-out Kendall τ of the default cost model
	// (the first of costmodel.Kinds, boosted trees) trained on the first
	// 64 configs measured by a run and tested on every other recorded
	// config: the median over the seeds of the TauSource runs, those of
	// the search guided by that model if it ran, else of the first
	// search. NaN when not measured.
	ModelTauAt64 float64
	TauSource    string
}

// DefaultSimBudget bounds the trials of a simulated run when
// Simulation.Budget is 0. Searches worth comparing get close to the best
// within a few hundred trials; replaying every config of a landscape of
// thousands would spend most of the time after the answer is known.
const DefaultSimBudget = 1000

// BestAtTrials are the trial counts at which MethodReport.BestAt is taken.
var BestAtTrials = []int{16, 32, 64, 128}

// Thresholds of MethodReport.TrialsTo5 and TrialsTo1: within 5% and 1% of
// the best recorded median.
const (
	within5 = 1.05
	within1 = 1.01
)

// MethodReport sums up the runs of one search, as medians over the seeds.
// A run that never gets within a threshold counts as +Inf trials, so a
// median of +Inf means half the runs or more did not get there.
type MethodReport struct {
	Method    Method
	Runs      []SimRun // one per seed, in seed order
	TrialsTo5 float64  // trials to within 5% of the best recorded median
	TrialsTo1 float64  // trials to within 1%
	// BestAt is the best median found in the first BestAtTrials[i] trials
	// as a ratio to the best recorded (1 is the best; +Inf when nothing
	// passed yet). A run that stopped sooner counts with what it found.
	BestAt []float64
	// NotRecorded counts proposals outside the recording, over all runs.
	NotRecorded int
	// Trials is the median of the runs' trials, and Final of the best each
	// found as a ratio to the best recorded: what a run stopped before its
	// budget (Simulation.StopGain) saved, and what it gave up.
	Trials float64
	Final  float64
	// GainStops counts the runs that Simulation.StopGain ended.
	GainStops int
}

// SimRun is one run of one search with one seed.
type SimRun struct {
	Seed        uint64
	Trials      int
	TrialsTo5   int       // 0 when never within 5%
	TrialsTo1   int       // 0 when never within 1%
	BestAt      []float64 // as MethodReport.BestAt
	NotRecorded int
	Final       float64 // the best found, as a ratio to the best recorded; +Inf when nothing passed
	GainStop    bool    // Simulation.StopGain ended the run
	TauAt64     float64 // see SimReport.ModelTauAt64; NaN with fewer than 65 recorded configs, and in runs not of TauSource
}

// Simulate runs every search of s once per seed against the recording and
// reports how fast each got close to the best recorded config. Runs are
// deterministic: the same simulation gives the same report.
func Simulate(ctx context.Context, s Simulation) (SimReport, error) {
	if s.Seeds < 1 {
		return SimReport{}, errors.New("lab: simulate needs at least one seed")
	}
	if len(s.Methods) == 0 {
		return SimReport{}, errors.New("lab: simulate needs at least one search")
	}
	rec := s.Recording
	tmpl, err := rec.revision(s.Template)
	if err != nil {
		return SimReport{}, err
	}
	shape := rec.Workload.Shape
	// The space a tuner of the workload searches: a float32 landscape
	// of a template with the convert knob holds one value of it.
	space := tmpl.SearchSpace(shape, rec.Workload.DType, rec.Target)
	results, outside := replayable(space, rec.Records)
	replay := sim.New(results)
	best, ok := replay.Best()
	if !ok {
		return SimReport{}, fmt.Errorf("lab: no record of %s passed the check: nothing to get close to", rec.Workload.Key())
	}
	prior, shapes := usablePrior(tmpl, rec, s.Prior)
	if len(s.Prior) > 0 && len(prior) == 0 {
		return SimReport{}, fmt.Errorf("lab: none of the %d prior records is of another shape of %s on %s with template %s, or of an op whose template shares its features",
			len(s.Prior), rec.Workload.Op, rec.Workload.Device, rec.Workload.Template)
	}
	report := SimReport{
		Workload: rec.Workload, Recorded: replay.Len(), SpaceSize: validConfigs(space), Outside: outside,
		BestNS: best.MedianNS, Budget: cmp.Or(s.Budget, min(DefaultSimBudget, replay.Len())), BatchSize: cmp.Or(s.BatchSize, 16),
		Seeds: s.Seeds, Prior: len(prior), PriorShape: shapes, ModelTauAt64: math.NaN(),
	}
	if report.Budget < 1 {
		return SimReport{}, errors.New("lab: the trial budget must be at least 1")
	}
	feats := tmpl.ModelFeatures(space, shape, rec.Target)
	env := replayEnv{template: tmpl, shape: shape, target: rec.Target, space: space, replay: replay,
		prior: prior, budget: report.Budget, batch: report.BatchSize, stopGain: s.StopGain, stopGainAfter: s.StopGainAfter,
		shipped: s.Shipped}
	if s.StopEarly {
		env.stopAt = best.MedianNS * within1
	}
	// τ belongs to the default model, so it is taken from that model's own
	// search when it runs (what it trains on there is what it would see
	// when tuning), else from the first search; the other runs skip it.
	src := 0
	for i, search := range s.Methods {
		if search.Model == costmodel.Names()[0] {
			src = i
			break
		}
	}
	for i, search := range s.Methods {
		sr := MethodReport{Method: search}
		runs, err := s.runSeeds(ctx, env, search, func(seed uint64, trace []measure.Result, sum tune.Summary) SimRun {
			run := summarizeRun(seed, trace, best.MedianNS)
			run.GainStop = sum.GainStop
			if i == src {
				run.TauAt64 = tauAfter(64, trace, replay, feats, rec.Workload.Key())
			}
			return run
		})
		if err != nil {
			return SimReport{}, err
		}
		sr.Runs = runs
		for _, run := range runs {
			sr.NotRecorded += run.NotRecorded
			if run.GainStop {
				sr.GainStops++
			}
		}
		sr.Trials = median(sr.Runs, func(r SimRun) float64 { return float64(r.Trials) })
		sr.Final = median(sr.Runs, func(r SimRun) float64 { return r.Final })
		sr.TrialsTo5 = medianTrials(sr.Runs, func(r SimRun) int { return r.TrialsTo5 })
		sr.TrialsTo1 = medianTrials(sr.Runs, func(r SimRun) int { return r.TrialsTo1 })
		for i := range BestAtTrials {
			sr.BestAt = append(sr.BestAt, median(sr.Runs, func(r SimRun) float64 { return r.BestAt[i] }))
		}
		report.Methods = append(report.Methods, sr)
	}
	report.TauSource = report.Methods[src].Method.String()
	report.ModelTauAt64 = median(report.Methods[src].Runs, func(r SimRun) float64 { return r.TauAt64 })
	return report, nil
}

// runSeeds runs search with seeds 1..s.Seeds, up to s.Parallel at a time,
// and returns their summaries in seed order. Runs share nothing that
// changes (each has its own database, model and generator), so running
// them side by side changes no figure; Progress still hears of them in
// seed order.
func (s Simulation) runSeeds(parent context.Context, env replayEnv, search Method, summarize func(uint64, []measure.Result, tune.Summary) SimRun) ([]SimRun, error) {
	// A failed run stops the others: they end at their next batch.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	runs := make([]SimRun, s.Seeds)
	errs := make([]error, s.Seeds)
	done := make([]chan struct{}, s.Seeds)
	seeds := make(chan int, s.Seeds)
	for i := range s.Seeds {
		done[i] = make(chan struct{})
		seeds <- i
	}
	close(seeds)
	var wg sync.WaitGroup
	defer wg.Wait()
	for range min(cmp.Or(s.Parallel, runtime.GOMAXPROCS(0)), s.Seeds) {
		wg.Go(func() {
			for i := range seeds {
				seed := uint64(i + 1)
				trace, sum, err := env.run(ctx, search, seed)
				if err != nil {
					errs[i] = err
					cancel()
				} else {
					runs[i] = summarize(seed, trace, sum)
				}
				close(done[i])
			}
		})
	}
	failed := false
	for i := range s.Seeds {
		<-done[i]
		failed = failed || errs[i] != nil
		if !failed && s.Progress != nil {
			s.Progress(search, runs[i])
		}
	}
	// The first error that is not the cancellation it caused in the others.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range append([]error{parent.Err()}, errs...) {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// replayable turns the records into results for sim, keeping the configs
// that are valid in space (in canonical form), and counts the others.
func replayable(space *schedule.Space, recs []tunedb.Record) (results []measure.Result, outside int) {
	invalid := map[string]bool{}
	for _, r := range recs {
		c, err := space.Canonical(r.Config)
		if err != nil || space.Check(c) != nil {
			invalid[r.Config.String()] = true
			continue
		}
		results = append(results, measure.Result{
			Config: c, Status: measure.Status(r.Status), Error: r.Error,
			SamplesNS: r.SamplesNS, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
			BuildNS: r.BuildNS, RunNS: r.RunNS,
		})
	}
	return results, len(invalid)
}

// usablePrior keeps the prior records that a run of tmpl, the revision the
// recording was made with, can learn from: other
// shapes of the recording's op on its device with its template, and
// workloads of ops whose templates give the model the same features
// (tune.KinTemplate). Records of the workload itself are dropped, as they would
// make the run resume rather than search.
func usablePrior(tmpl kernels.Template, rec Recording, prior []tunedb.Record) (keep []tunedb.Record, shapes []string) {
	w := rec.Workload
	kin := map[string]bool{}
	for _, r := range prior {
		o := r.Workload
		if o.DType != w.DType || o.Device != w.Device || o.Key() == w.Key() {
			continue
		}
		if o.Op != w.Op || o.Template != w.Template {
			k, seen := kin[o.Key()]
			if !seen {
				_, k = tune.KinTemplate(tmpl, w.Shape, rec.Target, o)
				kin[o.Key()] = k
			}
			if !k {
				continue
			}
		}
		keep = append(keep, r)
		s := o.ShapeString()
		if o.Op != w.Op {
			s = o.Op + " " + s
		}
		if !slices.Contains(shapes, s) {
			shapes = append(shapes, s)
		}
	}
	return keep, shapes
}

// validConfigs counts the valid configs of space, or returns 0 when the
// space is too large to walk.
func validConfigs(space *schedule.Space) int {
	if space.Size() > 1<<20 {
		return 0
	}
	n := 0
	for i := range space.Size() {
		if space.Valid(space.At(i)) {
			n++
		}
	}
	return n
}

// replayEnv is what every run of a simulation shares.
type replayEnv struct {
	template kernels.Template
	shape    []int
	target   device.Target
	space    *schedule.Space
	replay   *sim.Measurer
	prior    []tunedb.Record
	budget   int
	batch    int
	// stopAt, when not 0, ends a run once it has found a median at most
	// this and has measured the last of BestAtTrials (Simulation.StopEarly).
	stopAt float64
	// stopGain and stopGainAfter are Simulation's.
	stopGain      float64
	stopGainAfter int
	shipped       costmodel.Model
}

// run runs one search with one seed in a fresh database, in memory, and
// returns the results in the order they were measured, with Run's summary.
func (e replayEnv) run(ctx context.Context, search Method, seed uint64) ([]measure.Result, tune.Summary, error) {
	db := tunedb.NewMemory()
	if len(e.prior) > 0 {
		if err := db.Commit(e.prior); err != nil {
			return nil, tune.Summary{}, err
		}
	}
	// The tracer ends the run by cancelling its context between batches:
	// Run then stops as if interrupted, with every batch committed.
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	tr := &tracer{m: e.replay}
	if e.stopAt > 0 {
		tr.enough = func() bool {
			return len(tr.results) >= BestAtTrials[len(BestAtTrials)-1] && tr.best <= e.stopAt
		}
		tr.stop = stop
	}
	sum, err := tune.Run(rctx, tune.Task{
		Template: e.template, Shape: e.shape, Target: e.target, Space: e.space,
		Measurer: tr, Store: db, Strategy: search.Strategy, Model: search.Model,
		Seed: seed, Trials: e.budget, BatchSize: e.batch, Tool: "simulate",
		StopGain: e.stopGain, StopGainAfter: e.stopGainAfter, Shipped: e.shipped,
	})
	if err == nil {
		err = ctx.Err() // an interrupted run is no data point
	}
	if err != nil {
		return nil, tune.Summary{}, err
	}
	return tr.results, sum, nil
}

// tracer keeps what a run measured, in order, and ends the run (stop)
// after a batch when enough says so.
type tracer struct {
	m       tune.Measurer
	results []measure.Result
	best    float64 // the best ok median so far; 0 before one
	enough  func() bool
	stop    func()
}

func (t *tracer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	rs, err := t.m.Measure(ctx, b)
	t.results = append(t.results, rs...)
	for _, r := range rs {
		if r.Status == measure.StatusOK && (t.best == 0 || r.MedianNS < t.best) {
			t.best = r.MedianNS
		}
	}
	if t.enough != nil && t.enough() {
		t.stop()
	}
	return rs, err
}

// summarizeRun reads a run's progress off its trace.
func summarizeRun(seed uint64, trace []measure.Result, bestNS float64) SimRun {
	run := SimRun{Seed: seed, Trials: len(trace), BestAt: make([]float64, len(BestAtTrials)), TauAt64: math.NaN()}
	found := math.Inf(1)
	for i, r := range trace {
		if r.Error == sim.NotRecorded {
			run.NotRecorded++
		}
		if r.Status == measure.StatusOK && r.MedianNS < found {
			found = r.MedianNS
		}
		if run.TrialsTo5 == 0 && found <= bestNS*within5 {
			run.TrialsTo5 = i + 1
		}
		if run.TrialsTo1 == 0 && found <= bestNS*within1 {
			run.TrialsTo1 = i + 1
		}
		for k, n := range BestAtTrials {
			if i < n {
				run.BestAt[k] = found / bestNS
			}
		}
	}
	if len(trace) == 0 {
		for k := range run.BestAt {
			run.BestAt[k] = math.Inf(1)
		}
	}
	run.Final = found / bestNS
	return run
}

// tauAfter is the held-out Kendall τ of a fresh default cost model trained
// on the first n recorded configs of trace and tested on every other
// recorded config, failures included as the slowest. It is NaN when fewer
// than two configs are left to test.
func tauAfter(n int, trace []measure.Result, replay *sim.Measurer, feats func(schedule.Config) []float64, group string) float64 {
	var train []costmodel.Sample
	trained := map[string]bool{}
	for _, r := range trace {
		if len(train) == n {
			break
		}
		if r.Error == sim.NotRecorded {
			continue // not a measurement
		}
		trained[r.Config.String()] = true
		train = append(train, costmodel.Sample{Features: feats(r.Config), Group: group, Cost: cost(r.Status == measure.StatusOK, r.MedianNS)})
	}
	if len(train) < n {
		return math.NaN()
	}
	var test [][]float64
	var speed []float64
	for _, c := range replay.Configs() {
		if trained[c.String()] {
			continue
		}
		r, _ := replay.Lookup(c)
		test = append(test, feats(c))
		speed = append(speed, 1/cost(r.Status == measure.StatusOK, r.MedianNS))
	}
	if len(test) < 2 {
		return math.NaN()
	}
	m := costmodel.Kinds()[0].New(0)
	if err := m.Fit(train); err != nil {
		return math.NaN() // e.g. every training config failed: nothing to rank by
	}
	return costmodel.KendallTau(m.Predict(test), speed)
}

// cost is what a model learns from, as the tuner's model does: the median,
// or +Inf for a failure, whatever kind.
func cost(ok bool, medianNS float64) float64 {
	if !ok {
		return math.Inf(1)
	}
	return medianNS
}

// medianTrials is the median of a trial count over runs, with 0 (never
// reached) as +Inf.
func medianTrials(runs []SimRun, f func(SimRun) int) float64 {
	return median(runs, func(r SimRun) float64 {
		if n := f(r); n > 0 {
			return float64(n)
		}
		return math.Inf(1)
	})
}

// median of f over runs, the mean of the middle two for an even count;
// NaN values are left out, and NaN is the median of none.
func median[R any](runs []R, f func(R) float64) float64 {
	var xs []float64
	for _, r := range runs {
		if x := f(r); !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}
