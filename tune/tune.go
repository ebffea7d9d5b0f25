package tune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Measurer builds and measures a batch of configs of one workload. It
// returns one result per config it finished, in order; on cancellation it
// returns the finished ones with the context's error.
type Measurer interface {
	Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error)
}

var _ Measurer = (*cpu.Measurer)(nil)

// Store is the tuning database as the loop uses it: the records it resumes
// from, learns from and commits to, and the saved cost model. tunedb.DB is
// the file; tunedb.Memory serves simulations, which need no file.
type Store interface {
	// Commit stores a batch of records in one transaction.
	Commit(recs []tunedb.Record) error
	// Records returns every record of a workload.
	Records(w tunedb.Workload) ([]tunedb.Record, error)
	// TopK returns up to k configs of a workload, fastest first.
	TopK(w tunedb.Workload, k int) ([]tunedb.Record, error)
	// Measured returns the configs of a workload that a new run skips:
	// measured, unless their only failures are transient (retryFailed
	// retries every such one).
	Measured(w tunedb.Workload, retryFailed bool) (map[string]bool, error)
	// Workloads lists every workload with records.
	Workloads() ([]tunedb.Summary, error)
	// LoadModel and SaveModel keep the cost model between runs.
	LoadModel(k tunedb.ModelKey) ([]byte, bool, error)
	SaveModel(k tunedb.ModelKey, model []byte) error
}

var (
	_ Store = (*tunedb.DB)(nil)
	_ Store = (*tunedb.Memory)(nil)
)

// A Claimer is a database that several tuners share: each claims the
// configs it is about to measure, and leaves those another holds to it, so
// that none is measured twice (tunedb.DB.Claim).
type Claimer interface {
	Claim(w tunedb.Workload, cfgs []schedule.Config, o tunedb.Owner, since time.Time, lease time.Duration) (taken []bool, err error)
	Release(w tunedb.Workload, cfgs []schedule.Config, o tunedb.Owner) error
}

var _ Claimer = (*tunedb.DB)(nil)

// claimLease is how long a claim holds without its tuner: the longest a
// batch may take. A tuner on the same host that dies frees its claims at
// once (the database checks its process); the lease bounds the wait for
// one on another host, or whose process id was reused.
const claimLease = time.Hour

// Observer hears about every committed batch, for progress bars and logs.
type Observer interface {
	Batch(p Progress)
}

// Task is one workload to tune on one target, with its budget.
type Task struct {
	Template kernels.Template
	Shape    []int
	DType    dtype.DType // element type; "" means dtype.Default
	Target   device.Target
	// Toolchain names what builds the candidates (cpu.Measurer.Toolchain:
	// "go1.26.0"); it is part of the workload's key, so that records of
	// another toolchain are kept apart. "" is unknown.
	Toolchain string
	Space     *schedule.Space
	Measurer  Measurer
	Store     Store
	Observer  Observer // may be nil

	Strategy  string // a name of search.Kinds; "" means the first
	Model     string // a name of costmodel.Kinds, for a guided strategy; "" means the first
	EarlyStop int    // stop after this many trials without a new best; 0 means never
	// StopGain, when above 0, ends the run once the cost model of a guided
	// strategy expects no unmeasured config to be faster than the best
	// measured by more than this fraction (0.02: 2%), as checked after each
	// batch from StopGainAfter trials on (0 means DefaultStopGainAfter).
	// It never ends a run whose model cannot say (see Summary.GainStop).
	StopGain      float64
	StopGainAfter int
	Remeasure     int           // leaders re-measured, interleaved, before the winner is declared; 0 or 1 means none
	Seed          uint64        // fixes the strategy's proposals
	Trials        int           // new measurements in this run; must be ≥ 1
	Time          time.Duration // wall-clock budget; 0 means none
	BatchSize     int           // configs built and run together; 0 means 16
	Tool          string        // version stamped into records

	// RetryFailed measures again every config whose only records are
	// transient failures (timeout, crash); without it each is retried once,
	// in the run after it failed (see tunedb.DB.Measured).
	RetryFailed bool

	// Shipped, when set, is the model the shipped strategy ranks by
	// instead of the one shipped for the template's version: a model
	// under evaluation on landscapes outside its training set (tune/lab).
	// It must take the features of the task's space.
	Shipped costmodel.Model
}

// DType is the element type of a workload that names none.
const DType = dtype.Default

// Workload is the tuning database's key for a template, shape and target,
// of dtype.Default and an unknown toolchain: the key of Task.Workload for
// a task that leaves DType and Toolchain unset.
func Workload(tmpl kernels.Template, shape []int, target device.Target) tunedb.Workload {
	return tunedb.Workload{Op: tmpl.Op.Name, Shape: shape, DType: DType, Device: target.Fingerprint(), Template: tmpl.Version}
}

// Workload is the tuning database's key for t: its template, shape,
// dtype, target and toolchain.
func (t Task) Workload() tunedb.Workload {
	w := Workload(t.Template, t.Shape, t.Target)
	w.DType, w.Toolchain = cmp.Or(t.DType, dtype.Default), t.Toolchain
	return w
}

// Progress is the state of a run after a batch.
type Progress struct {
	Trials    int                   // measured in this run so far
	Budget    int                   // Task.Trials
	Failures  map[tunedb.Status]int // this run's failures by status
	Best      *tunedb.Record        // best of the workload, earlier runs included; nil if none
	BuildTime time.Duration         // spent building, this run
	RunTime   time.Duration         // spent running, this run
	Elapsed   time.Duration
	// Shared counts the configs this run proposed but left to another
	// tuner of the same database, which measures or measured them.
	Shared int
}

// Summary is the outcome of a run.
type Summary struct {
	Progress
	Resumed   int  // configs measured by earlier runs, skipped
	Exhausted bool // every valid config has been measured
	EarlyStop bool // EarlyStop trials passed without a new best
	// GainStop says the run ended on Task.StopGain: the model expected
	// less than that gain from the rest of the space; PredictedGain is
	// its last estimate (+Inf when it could not say, NaN when not asked).
	GainStop      bool
	PredictedGain float64
	Interrupted   bool // the context was cancelled; what finished is committed

	// Leaders are the re-measured leaders (Task.Remeasure), fastest first;
	// Tied says the two fastest are within each other's p20–p80 spread,
	// so the winner is a toss-up between them on this machine.
	Leaders []tunedb.Record
	Tied    bool

	// Evidenced is how many ok records of this run carry evidence of
	// contention, and Contended how many of them were mostly disturbed
	// (measure.Disturbance.Contended). Remeasures is how often the
	// leaders were measured again, and Unsettled says that the winner's
	// last measurement was still contended after maxRemeasures of them:
	// the machine never quieted, and the winner is the best guess of a
	// busy machine, provisional. Awaiting are then the leaders whose last
	// measurement was contended: a later run on a quieter machine, which
	// measures its leaders again side by side, settles them.
	Evidenced, Contended int
	Remeasures           int
	Unsettled            bool
	Awaiting             []schedule.Config
}

// PerMinute is the tuning throughput: configs measured per minute of wall time.
func (p Progress) PerMinute() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Trials) / p.Elapsed.Minutes()
}

// Run tunes t until its budget is spent, the space is exhausted or ctx is
// cancelled. Failed candidates are records, not errors; an error means the
// database, the toolchain or the target could not be used.
func Run(ctx context.Context, t Task) (_ Summary, runErr error) {
	if t.Trials < 1 {
		return Summary{}, errors.New("tune: the trial budget must be at least 1")
	}
	r, err := open(t, time.Now(), nil)
	if err != nil {
		return Summary{}, err
	}
	defer func() {
		if err := r.close(); err != nil && runErr == nil {
			runErr = err
		}
	}()
	for r.s.Trials < t.Trials && !r.over(ctx) {
		if stop, err := r.step(ctx, t.Trials-r.s.Trials); err != nil || stop {
			if err != nil {
				return r.s, err
			}
			break
		}
	}
	return r.finish(ctx)
}

// run is one task's tuning in progress: its strategy and model, what it
// has measured, and its summary. Run drives one to the end of its budget;
// RunTasks drives several, a batch at a time, in the order its scheduler
// chooses.
type run struct {
	t         Task
	w         tunedb.Workload
	learn     *learner
	s         Summary
	start     time.Time // of the run; Task.Time counts from it
	read      time.Time // when it read what earlier runs measured
	owner     tunedb.Owner
	sinceBest int        // trials since the best improved
	gainRand  *rand.Rand // samples the candidates of Task.StopGain's estimate
}

// open prepares t's run: what was measured before, the best so far, the
// strategy with its model trained on the database, or the model of models
// that serves t's op (see newLearner).
func open(t Task, start time.Time, models sharedModels) (*run, error) {
	if t.Store == nil {
		return nil, errNoStore
	}
	if err := t.Template.CheckDType(cmp.Or(t.DType, dtype.Default)); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	w := t.Workload()
	read := time.Now()
	measured, err := t.Store.Measured(w, t.RetryFailed)
	if err != nil {
		return nil, err
	}
	learn, err := newLearner(t, w, measured, models)
	if err != nil {
		return nil, err
	}
	r := &run{t: t, w: w, learn: learn, start: start, read: read, owner: tunedb.NewOwner(), gainRand: rand.New(rand.NewPCG(t.Seed, 0x7374_6f70)), // "stop"
		s: Summary{Resumed: len(measured), PredictedGain: math.NaN(), Progress: Progress{Budget: t.Trials, Failures: map[tunedb.Status]int{}}}}
	if r.s.Best, err = best(t.Store, w); err != nil {
		return nil, err
	}
	return r, nil
}

// close saves the model. A model is derived data: one the busy database
// cannot take now is trained again next run.
func (r *run) close() error {
	if err := r.learn.save(r.t.Store); err != nil && !errors.Is(err, tunedb.ErrInUse) {
		return err
	}
	return nil
}

// over reports whether the run must stop before its next batch: its time
// is up or ctx is cancelled.
func (r *run) over(ctx context.Context) bool {
	if r.t.Time > 0 && time.Since(r.start) >= r.t.Time {
		return true
	}
	if ctx.Err() != nil {
		r.s.Interrupted = true
		return true
	}
	return false
}

// step measures one batch of at most n configs, commits it and tells the
// strategy. It reports stop when the run must end: the space is exhausted,
// the time ran out or ctx was cancelled inside the batch, or EarlyStop
// trials passed without a new best.
func (r *run) step(ctx context.Context, n int) (stop bool, _ error) {
	t, s := r.t, &r.s
	cfgs, err := r.learn.strategy.Next(min(cmp.Or(t.BatchSize, 16), n))
	if err != nil {
		return true, err
	}
	if len(cfgs) == 0 {
		s.Exhausted = true
		return true, nil
	}
	if cfgs, err = r.claim(cfgs); err != nil || len(cfgs) == 0 {
		return err != nil, err
	}
	defer r.release(cfgs)
	batch := measure.Batch{Template: t.Template, Shape: t.Shape, DType: t.DType, Target: t.Target, Configs: cfgs}
	if s.Best != nil {
		batch.Best = time.Duration(s.Best.MedianNS)
	}
	// Results are committed as they finish, and what finished is
	// committed whatever happened to the rest.
	st := newStreamer(t.Store, r.w, t.Tool)
	batch.Finished = st.finished
	results, merr := measureWithin(ctx, t, r.start, batch)
	streamed, err := st.close()
	if err != nil {
		return true, err
	}
	bestBefore := s.Best
	recs, err := s.record(t, r.w, unstreamed(results, streamed))
	if err != nil {
		return true, err
	}
	recs = append(s.account(streamed), recs...)
	if err := r.learn.tell(recs); err != nil {
		return true, err
	}
	if s.Best != bestBefore {
		r.sinceBest = 0
	} else {
		r.sinceBest += len(recs)
	}
	s.Elapsed = time.Since(r.start)
	if t.Observer != nil {
		t.Observer.Batch(s.Progress)
	}
	switch {
	case merr == nil:
	case ctx.Err() != nil:
		s.Interrupted = true
	case errors.Is(merr, context.DeadlineExceeded):
		// The --time budget ran out inside the batch.
	default:
		return true, merr
	}
	if merr != nil {
		return true, nil
	}
	if t.EarlyStop > 0 && r.sinceBest >= t.EarlyStop {
		s.EarlyStop = true
		return true, nil
	}
	if t.StopGain > 0 && s.Trials >= cmp.Or(t.StopGainAfter, DefaultStopGainAfter) {
		s.PredictedGain = r.learn.predictedGain(t.Space, r.gainRand)
		if s.PredictedGain < t.StopGain {
			s.GainStop = true
			return true, nil
		}
	}
	return false, nil
}

// claim returns the configs of cfgs that no other tuner of a shared
// database measures, claimed for this run (Claimer), and counts the others
// in Progress.Shared; the strategy never proposes them again. A database
// too busy to take the claims within its timeout does not hold up the run:
// the batch is measured unclaimed.
func (r *run) claim(cfgs []schedule.Config) ([]schedule.Config, error) {
	mine, _, err := claimConfigs(r.t.Store, r.w, cfgs, r.owner, r.read)
	if err != nil {
		return nil, err
	}
	r.s.Shared += len(cfgs) - len(mine)
	if len(mine) < len(cfgs) && r.t.Observer != nil {
		r.s.Elapsed = time.Since(r.start)
		r.t.Observer.Batch(r.s.Progress)
	}
	return mine, nil
}

// release ends this run's claims on cfgs once their records are
// committed. A claim the busy database cannot release now expires.
func (r *run) release(cfgs []schedule.Config) {
	if c, ok := r.t.Store.(Claimer); ok {
		c.Release(r.w, cfgs, r.owner)
	}
}

// finish re-measures the leaders (Task.Remeasure) unless the run was
// interrupted, and returns the summary.
func (r *run) finish(ctx context.Context) (Summary, error) {
	if !r.s.Interrupted && r.t.Remeasure > 1 {
		if err := r.s.remeasure(ctx, r.t, r.w); err != nil {
			return r.s, err
		}
	}
	r.s.Elapsed = time.Since(r.start)
	return r.s, nil
}

// commit stores a batch. Measurements are expensive and another process
// may hold the database for a while, so a batch the database keeps aside
// for want of its lock (tunedb.ErrPending) is not an error: it is stored
// with a later batch, or by the next run.
func commit(db Store, recs []tunedb.Record) error {
	err := db.Commit(recs)
	if errors.Is(err, tunedb.ErrPending) && errors.Is(err, tunedb.ErrInUse) {
		return nil
	}
	return err
}

// measureWithin measures a batch, stopping it when the run's time budget
// runs out: the budget bounds the run, not just the start of its batches.
func measureWithin(ctx context.Context, t Task, start time.Time, b measure.Batch) ([]measure.Result, error) {
	if t.Time > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(t.Time))
		defer cancel()
	}
	return t.Measurer.Measure(ctx, b)
}

// RemeasureRounds is how often each leader is measured again: rounds of
// one measurement of every leader, so that all see the same machine.
const RemeasureRounds = 3

// remeasure times the run's leaders again before a winner is declared: in
// one batch, in rounds (A B C A B C A B C), with the same harness and method
// as every other measurement, so the new figures are comparable with the
// rest of the database. The leaders are the Task.Remeasure fastest and,
// when the template has a threads knob, the fastest of every thread count
// (leaders), so that thread counts are compared at the same moment, not
// against records of another load. Each leader gets one record pooling its
// samples of every round; being the newest, it is the one the database
// ranks by. On a measurer of several machines (CrossMeasurer) the leaders
// are measured again on another machine than the one that found them, and
// a disagreement is settled by a third (see check).
func (s *Summary) remeasure(ctx context.Context, t Task, w tunedb.Workload) error {
	// Re-measured leaders may come out slower than their first figures and
	// let a config below them, never re-measured, rank first; and a
	// leader whose new samples were mostly disturbed cannot win on them.
	// Re-measure again until the first is a re-measured one measured on a
	// quiet enough machine (or give up after a few rounds: the machine is
	// too noisy to say more, and the summary says so; a fleet gets more,
	// for the figures of a worker found wrong drop out a batch at a time).
	cross, crossing := t.Measurer.(CrossMeasurer)
	rounds := maxRemeasures
	if crossing {
		rounds = maxCrossRemeasures
	}
	again := map[string]bool{}
	for range rounds {
		top, err := leaders(t, w)
		if err != nil || len(top) == 0 || len(top) < 2 && !crossing {
			return err
		}
		s.Unsettled = top[0].Disturbance.Contended()
		if again[top[0].Config.String()] && !s.Unsettled {
			break
		}
		var done bool
		if crossing {
			done, err = s.check(ctx, t, w, cross, top)
		} else {
			done, err = s.remeasureOnce(ctx, t, w, top)
		}
		if err != nil || !done {
			return err
		}
		s.Remeasures++
		for _, r := range top {
			again[r.Config.String()] = true
		}
	}
	b, err := best(t.Store, w)
	if err != nil {
		return err
	}
	s.Best = b
	s.Unsettled = b != nil && b.Disturbance.Contended()
	if s.Unsettled {
		s.Awaiting, err = awaiting(t, w)
	}
	return err
}

// best returns the best record of w, nil when there is none.
func best(st Store, w tunedb.Workload) (*tunedb.Record, error) {
	top, err := st.TopK(w, 1)
	if err != nil || len(top) == 0 {
		return nil, err
	}
	return &top[0], nil
}

// remeasureOnce measures top again in rounds and commits one pooled record
// per leader; it reports false when cancelled, which keeps what was there.
func (s *Summary) remeasureOnce(ctx context.Context, t Task, w tunedb.Workload, top []tunedb.Record) (bool, error) {
	pooled, err := measureLeaders(ctx, t, top, t.Measurer.Measure)
	if err != nil {
		return false, err
	}
	if pooled == nil {
		s.Interrupted = true
		return false, nil
	}
	recs := newRecords(t, w, pooled)
	if err := s.commitLeaders(t, recs, nil); err != nil {
		return false, err
	}
	s.setLeaders(recs)
	return true, nil
}

// measureLeaders measures top in RemeasureRounds interleaved rounds with
// run and returns one result per leader pooling its rounds; nil without
// an error when cancelled.
func measureLeaders(ctx context.Context, t Task, top []tunedb.Record, run func(context.Context, measure.Batch) ([]measure.Result, error)) ([]measure.Result, error) {
	results, err := run(ctx, leaderBatch(t, top))
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, nil // the leaders keep their first measurements
	}
	if err != nil {
		return nil, err
	}
	return pool(top, results), nil
}

// leaderBatch is the batch that measures top in RemeasureRounds rounds.
func leaderBatch(t Task, top []tunedb.Record) measure.Batch {
	batch := measure.Batch{Template: t.Template, Shape: t.Shape, DType: t.DType, Target: t.Target, Best: time.Duration(top[0].MedianNS)}
	for range RemeasureRounds {
		for _, r := range top {
			batch.Configs = append(batch.Configs, r.Config)
		}
	}
	return batch
}

// pool folds the results of a leaderBatch into one result per leader: its
// samples of every round, or its first failure.
func pool(top []tunedb.Record, results []measure.Result) []measure.Result {
	pooled := make([]measure.Result, len(top))
	evidence := make([][]*measure.Disturbance, len(top))
	for i, r := range results {
		p := &pooled[i%len(top)]
		evidence[i%len(top)] = append(evidence[i%len(top)], r.Disturbance)
		p.BuildNS += r.BuildNS
		p.RunNS += r.RunNS
		if p.Measurer == nil {
			p.Measurer = r.Measurer
		}
		switch {
		case p.Status != "" && p.Status != measure.StatusOK:
			// keep the first failure
		case r.Status != measure.StatusOK:
			p.Status, p.Error, p.SamplesNS = r.Status, r.Error, nil
		default:
			p.Status = measure.StatusOK
			p.SamplesNS = append(p.SamplesNS, r.SamplesNS...)
		}
	}
	for i := range pooled {
		pooled[i].Config = top[i].Config
		pooled[i].Disturbance = poolEvidence(evidence[i])
		if pooled[i].Status == measure.StatusOK {
			pooled[i].MedianNS, pooled[i].P20NS, pooled[i].P80NS = measure.Summarize(pooled[i].SamplesNS)
		}
	}
	return pooled
}

// commitLeaders commits, in one transaction, the records of re-measured
// leaders, which are not new trials, and stored records marked suspect.
func (s *Summary) commitLeaders(t Task, recs, marked []tunedb.Record) error {
	trials, failures, evidenced, contended := s.Trials, maps.Clone(s.Failures), s.Evidenced, s.Contended
	defer func() { s.Trials, s.Failures, s.Evidenced, s.Contended = trials, failures, evidenced, contended }()
	if err := commit(t.Store, append(slices.Clip(marked), recs...)); err != nil {
		return err
	}
	s.account(recs)
	return nil
}

// setLeaders makes the trusted ok records of recs the summary's leaders.
func (s *Summary) setLeaders(recs []tunedb.Record) {
	s.Leaders = s.Leaders[:0]
	for _, r := range recs {
		if r.Status == tunedb.StatusOK && r.Suspect == "" {
			s.Leaders = append(s.Leaders, r)
		}
	}
	slices.SortStableFunc(s.Leaders, func(a, b tunedb.Record) int { return cmp.Compare(a.MedianNS, b.MedianNS) })
	s.Tied = len(s.Leaders) >= 2 && s.Leaders[1].P20NS <= s.Leaders[0].P80NS
}

// newRecords returns the records of a batch's results, measured now.
func newRecords(t Task, w tunedb.Workload, results []measure.Result) []tunedb.Record {
	now := time.Now().UTC()
	recs := make([]tunedb.Record, len(results))
	for i, r := range results {
		// Records of one batch get distinct times: a record's identity is
		// (workload, config, time), and the clock may not tick.
		recs[i] = newRecord(w, r, now.Add(time.Duration(i)), t.Tool)
	}
	return recs
}

// record commits a batch's results and folds them into the summary.
func (s *Summary) record(t Task, w tunedb.Workload, results []measure.Result) ([]tunedb.Record, error) {
	recs := newRecords(t, w, results)
	if len(recs) > 0 {
		if err := commit(t.Store, recs); err != nil {
			return nil, err
		}
	}
	return s.account(recs), nil
}

// unstreamed returns the results of a batch whose records the streamer did
// not make: the measurer's Finished hook was not called for them.
func unstreamed(results []measure.Result, streamed []tunedb.Record) []measure.Result {
	left := map[string]int{}
	for _, r := range streamed {
		left[r.Config.String()]++
	}
	var out []measure.Result
	for _, r := range results {
		if c := r.Config.String(); left[c] > 0 {
			left[c]--
			continue
		}
		out = append(out, r)
	}
	return out
}

// account adds committed records to the run's progress and returns them.
func (s *Summary) account(recs []tunedb.Record) []tunedb.Record {
	for i, r := range recs {
		s.Trials++
		s.BuildTime += time.Duration(r.BuildNS)
		s.RunTime += time.Duration(r.RunNS)
		if r.Status != tunedb.StatusOK {
			s.Failures[r.Status]++
			continue
		}
		if r.Disturbance != nil {
			s.Evidenced++
		}
		if r.Disturbance.Contended() {
			s.Contended++
		}
		if s.Best == nil || r.MedianNS < s.Best.MedianNS {
			s.Best = &recs[i]
		}
	}
	return recs
}
