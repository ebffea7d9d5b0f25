package tune

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/autotune-dev/autotune/device"
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

// Observer hears about every committed batch, for progress bars and logs.
type Observer interface {
	Batch(p Progress)
}

// Task is one workload to tune on one target, with its budget.
type Task struct {
	Template kernels.Template
	Shape    []int
	Target   device.Target
	Space    *schedule.Space
	Measurer Measurer
	Store    *tunedb.DB
	Observer Observer // may be nil

	Strategy  string        // one of Strategies; "" means the first
	Model     string        // one of Models, for the evolutionary search; "" means the first
	EarlyStop int           // stop after this many trials without a new best; 0 means never
	Seed      uint64        // fixes the strategy's proposals
	Trials    int           // new measurements in this run; must be ≥ 1
	Time      time.Duration // wall-clock budget; 0 means none
	BatchSize int           // configs built and run together; 0 means 16
	Tool      string        // version stamped into records
}

// DType is the element type of every workload until templates take others.
const DType = "f32"

// Workload is the tuning database's key for a template, shape and target.
func Workload(tmpl kernels.Template, shape []int, target device.Target) tunedb.Workload {
	return tunedb.Workload{Op: tmpl.Op.Name, Shape: shape, DType: DType, Device: target.Fingerprint(), Template: tmpl.Version}
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
}

// Summary is the outcome of a run.
type Summary struct {
	Progress
	Resumed     int  // configs measured by earlier runs, skipped
	Exhausted   bool // every valid config has been measured
	EarlyStop   bool // EarlyStop trials passed without a new best
	Interrupted bool // the context was cancelled; what finished is committed
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
	if t.Store == nil {
		return Summary{}, errNoStore
	}
	batchSize := cmp.Or(t.BatchSize, 16)
	w := Workload(t.Template, t.Shape, t.Target)
	measured, err := t.Store.Measured(w)
	if err != nil {
		return Summary{}, err
	}
	learn, err := newLearner(t, w, measured)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Resumed: len(measured), Progress: Progress{Budget: t.Trials, Failures: map[tunedb.Status]int{}}}
	if best, ok, err := t.Store.Best(w); err != nil {
		return s, err
	} else if ok {
		s.Best = &best
	}
	defer func() {
		if err := learn.save(t.Store); err != nil && runErr == nil {
			runErr = err
		}
	}()
	start := time.Now()
	sinceBest := 0 // trials since the best improved
	for s.Trials < t.Trials {
		if t.Time > 0 && time.Since(start) >= t.Time {
			break
		}
		if ctx.Err() != nil {
			s.Interrupted = true
			break
		}
		cfgs, err := learn.strategy.Next(min(batchSize, t.Trials-s.Trials))
		if err != nil {
			return s, err
		}
		if len(cfgs) == 0 {
			s.Exhausted = true
			break
		}
		batch := measure.Batch{Template: t.Template, Shape: t.Shape, Target: t.Target, Configs: cfgs}
		if s.Best != nil {
			batch.Best = time.Duration(s.Best.MedianNS)
		}
		results, merr := t.Measurer.Measure(ctx, batch)
		if merr != nil && !errors.Is(merr, context.Canceled) && !errors.Is(merr, context.DeadlineExceeded) {
			return s, merr
		}
		bestBefore := s.Best
		recs, err := s.record(t, w, results)
		if err != nil {
			return s, err
		}
		if err := learn.tell(recs); err != nil {
			return s, err
		}
		if s.Best != bestBefore {
			sinceBest = 0
		} else {
			sinceBest += len(recs)
		}
		s.Elapsed = time.Since(start)
		if t.Observer != nil {
			t.Observer.Batch(s.Progress)
		}
		if merr != nil {
			s.Interrupted = true
			break
		}
		if t.EarlyStop > 0 && sinceBest >= t.EarlyStop {
			s.EarlyStop = true
			break
		}
	}
	s.Elapsed = time.Since(start)
	return s, nil
}

// record commits a batch's results and folds them into the summary.
func (s *Summary) record(t Task, w tunedb.Workload, results []measure.Result) ([]tunedb.Record, error) {
	now := time.Now().UTC()
	recs := make([]tunedb.Record, len(results))
	for i, r := range results {
		recs[i] = tunedb.Record{
			Workload: w, Config: r.Config, Status: tunedb.Status(r.Status), Error: r.Error,
			SamplesNS: r.SamplesNS, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
			BuildNS: r.BuildNS, RunNS: r.RunNS,
			// Records of one batch get distinct times: a record's identity
			// is (workload, config, time), and the clock may not tick.
			Time: now.Add(time.Duration(i)), Tool: t.Tool,
		}
	}
	if len(recs) > 0 {
		if err := t.Store.Commit(recs); err != nil {
			return nil, err
		}
	}
	for i, r := range recs {
		s.Trials++
		s.BuildTime += time.Duration(r.BuildNS)
		s.RunTime += time.Duration(r.RunNS)
		if r.Status != tunedb.StatusOK {
			s.Failures[r.Status]++
			continue
		}
		if s.Best == nil || r.MedianNS < s.Best.MedianNS {
			s.Best = &recs[i]
		}
	}
	return recs, nil
}
