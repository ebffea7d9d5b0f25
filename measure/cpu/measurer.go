package cpu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// Measurer builds and runs batches of Go candidates on this machine. It is
// safe for concurrent use, but batches measured at the same time disturb
// each other's timings.
type Measurer struct {
	opts  Options
	cache dataCache
	probe probeBest

	onStart func(id int) // test hook, see runner.onStart
}

// New returns a Measurer with the given options; nil means the defaults.
func New(opts *Options) *Measurer {
	return &Measurer{opts: opts.withDefaults()}
}

// Measure builds b's configs and runs them, and returns one Result per
// config, in order; see the package documentation for what each status
// means. A config that b.Template's space rejects is invalid and is not
// built.
//
// The error is non-nil only when the machinery fails: no go command
// (ErrNoGo), no temporary directory, a harness that breaks its protocol, a
// target that is not a CPU, or ctx done. The results finished by then are
// returned with it.
func (m *Measurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	if len(b.Configs) == 0 {
		return nil, nil
	}
	if b.Target.IsCUDA() || b.Target.CPU == nil {
		return nil, fmt.Errorf("cpu: target %q is not a CPU", b.Target.Name)
	}
	goCmd, err := exec.LookPath(m.opts.GoCommand)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGo, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cpu: batch interrupted: %w", err)
	}
	b.Shape = slices.Clone(b.Shape) // the templates' functions get a copy they may keep

	res := make([]measure.Result, len(b.Configs))
	finished := make([]bool, len(b.Configs))
	todo := rejectInvalid(b, res, finished)
	for i := range res {
		if finished[i] {
			report(b, res[i])
		}
	}
	if len(todo) == 0 {
		return res, nil
	}
	dir, err := m.batchDir()
	if err != nil {
		return done(res, finished), err
	}
	if m.opts.KeepDir == "" {
		defer os.RemoveAll(dir)
	}

	start := time.Now()
	bd := &builder{goCmd: goCmd, dir: dir, batch: b}
	bin, built, err := bd.build(ctx, todo, res)
	for _, id := range todo {
		finished[id] = res[id].Status == measure.StatusBuildError
	}
	spread(res, todo, time.Since(start), func(r *measure.Result, d int64) { r.BuildNS = d })
	for _, id := range todo {
		if finished[id] {
			report(b, res[id])
		}
	}
	if err != nil || len(built) == 0 {
		return done(res, finished), err
	}

	start = time.Now()
	r := &runner{
		bin: bin, dir: dir, opts: m.opts, timeout: m.opts.timeout(b.Best), best: b.Best, probe: &m.probe,
		res: res, finished: finished, own: make([]time.Duration, len(res)),
		onStart: m.onStart, onFinish: func(r measure.Result) { report(b, r) },
	}
	d, err := m.cache.get(ctx, b.Template, b.Shape, b.DType, m.opts.Seed)
	if err == nil {
		err = d.write(dir)
	}
	if err == nil {
		err = r.run(ctx, built)
	}
	attributeRun(res, built, finished, r.own, time.Since(start))
	return done(res, finished), err
}

// report passes a final result to the batch's Finished hook, if any.
func report(b measure.Batch, r measure.Result) {
	if b.Finished != nil {
		b.Finished(r)
	}
}

// rejectInvalid sets the result of every config that b's space rejects, and
// returns the others.
func rejectInvalid(b measure.Batch, res []measure.Result, finished []bool) (todo []int) {
	var space *schedule.Space
	if b.Template.Space != nil {
		space = b.Template.Space(b.Shape, b.Target)
	}
	for i, c := range b.Configs {
		res[i].Config = c
		if space != nil {
			if err := space.Check(c); err != nil {
				res[i].Status, res[i].Error = measure.StatusInvalid, err.Error()
				finished[i] = true
				continue
			}
		}
		todo = append(todo, i)
	}
	return todo
}

// batchDir makes the directory of a batch's module.
func (m *Measurer) batchDir() (string, error) {
	parent := m.opts.KeepDir
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", fmt.Errorf("cpu: %w", err)
		}
	}
	dir, err := measure.TempDir(parent, "autotune-batch")
	if err != nil {
		return "", fmt.Errorf("cpu: making the batch directory: %w", err)
	}
	return dir, nil
}

// spread gives each of ids an equal share of total (the first ones one
// nanosecond more, so that the shares add up to total exactly).
func spread(res []measure.Result, ids []int, total time.Duration, set func(*measure.Result, int64)) {
	if len(ids) == 0 {
		return
	}
	share, extra := int64(total)/int64(len(ids)), int64(total)%int64(len(ids))
	for i, id := range ids {
		d := share
		if int64(i) < extra {
			d++
		}
		set(&res[id], d)
	}
}

// attributeRun sets RunNS of the candidates that ran: each gets its own time
// (start event to result, death or kill) plus an equal share of what the
// runner spent outside any candidate (writing inputs, starting harnesses,
// loading inputs, restarting after a crash).
func attributeRun(res []measure.Result, built []int, finished []bool, own []time.Duration, total time.Duration) {
	var ran []int
	overhead := total
	for _, id := range built {
		if finished[id] {
			ran = append(ran, id)
			overhead -= own[id]
		}
	}
	spread(res, ran, max(overhead, 0), func(r *measure.Result, d int64) { r.RunNS = d })
	for _, id := range ran {
		res[id].RunNS += int64(own[id])
	}
}

// done returns the finished results, in batch order.
func done(res []measure.Result, finished []bool) []measure.Result {
	var out []measure.Result
	for i, r := range res {
		if finished[i] {
			out = append(out, r)
		}
	}
	return out
}
