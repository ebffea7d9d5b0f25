package cpu

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autotune-dev/autotune/emul"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
)

// maxLine bounds one line of the protocol. A result carries every sample, so
// a long MinTime on a fast kernel makes long lines; this is far beyond them.
const maxLine = 256 << 20

// The harness's command-line flags (see the package harness's doc).
const (
	flagData        = "data"
	flagIDs         = "ids"
	flagBench       = "bench"
	flagWarmup      = "warmup"
	flagSamples     = "samples"
	flagMinTime     = "mintime"
	flagMinSample   = "minsample"
	flagBest        = "best"
	flagSlowFactor  = "slowfactor"
	flagSlowSamples = "slowsamples"
	flagBudget      = "budget"
	flagEvidence    = "evidence"
	flagProbe       = "probe"
)

// runner runs the candidates of one built batch in harness processes.
type runner struct {
	bin, dir string
	opts     Options
	timeout  time.Duration // per candidate, until it has passed its check (Options.checkedTimeout after)
	best     time.Duration // the batch's hint; 0: none
	probe    *probeBest    // the calibration probe's fastest time, kept across batches

	res      []measure.Result
	finished []bool
	own      []time.Duration // each candidate's time from its start to its end, as the runner saw it

	onStart  func(id int)         // test hook, called when a candidate starts
	onFinish func(measure.Result) // hears each result as it becomes final (measure.Batch.Finished)
}

// run measures the candidates ids, in order. A harness that dies or is
// killed takes the candidate it was running with it; a new harness runs the
// rest. Errors are the runner's own failures, or ctx's.
func (r *runner) run(ctx context.Context, ids []int) error {
	for len(ids) > 0 {
		rest, err := r.runChild(ctx, ids)
		if err != nil {
			return err
		}
		ids = rest // runChild finishes at least one candidate or fails
	}
	return nil
}

// runChild starts one harness on ids and follows its events until it has
// run them all, dies, or a candidate times out. It returns the candidates
// still to run.
func (r *runner) runChild(ctx context.Context, ids []int) (rest []int, err error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cpu: batch interrupted: %w", err)
	}
	cmd := emul.Command(r.bin,
		"-"+flagData, r.dir,
		"-"+flagIDs, joinInts(ids),
		"-"+flagWarmup, strconv.Itoa(r.opts.Warmup),
		"-"+flagSamples, strconv.Itoa(r.opts.MinSamples),
		"-"+flagMinTime, r.opts.MinTime.String(),
		"-"+flagMinSample, r.opts.MinSampleTime.String(),
		"-"+flagBest, strconv.FormatInt(int64(r.best), 10),
		"-"+flagSlowFactor, strconv.FormatFloat(r.opts.SlowFactor, 'g', -1, 64),
		"-"+flagSlowSamples, strconv.Itoa(r.opts.SlowSamples),
		"-"+flagBudget, r.opts.TimingBudget.String(),
		"-"+flagEvidence+"="+strconv.FormatBool(!r.opts.NoEvidence),
		"-"+flagProbe, r.probe.get().String(),
	)
	cmd.Dir = r.dir
	cmd.Env = r.opts.harnessEnv()
	h, err := startHarness(cmd)
	if err != nil {
		return nil, err
	}
	stderr, lines, stop := h.stderr, h.lines, h.stop

	timer := time.NewTimer(max(startupTimeout, r.timeout))
	defer timer.Stop()
	var seq harness.Sequence
	next := 0 // the index in ids of the next candidate to start
	var curStart time.Time
	var estimate time.Duration // of the running candidate's timing, once it has passed its check
	var checked time.Time      // when it passed it
	for {
		select {
		case <-ctx.Done():
			stop()
			return nil, fmt.Errorf("cpu: batch interrupted: %w", ctx.Err())

		case <-timer.C:
			stop()
			cur, running := seq.Running()
			if !running {
				return nil, fmt.Errorf("cpu: the harness stalled outside any candidate; stderr:\n%s", stderr.String())
			}
			msg := fmt.Sprintf("no result after %v; the harness was killed", r.timeout)
			if estimate > 0 {
				msg = fmt.Sprintf("no result %v after its check, which said timing would take %v; the harness was killed",
					time.Since(checked).Round(time.Millisecond), estimate.Round(time.Millisecond))
			}
			r.finish(cur, measure.Result{Status: measure.StatusTimeout, Error: msg}, time.Since(curStart))
			return ids[next:], nil

		case line, ok := <-lines:
			if !ok {
				werr := cmd.Wait()
				cur, running := seq.Running()
				switch {
				case h.scanErr != nil:
					return nil, fmt.Errorf("cpu: reading the harness's output: %w", h.scanErr)
				case running:
					r.finish(cur, measure.Result{
						Status: measure.StatusCrash,
						Error:  clip(fmt.Sprintf("the harness died running this candidate: %s\n%s", exitText(cmd, werr), stderr.String())),
					}, time.Since(curStart))
					return ids[next:], nil
				case seq.Done() && werr == nil:
					return nil, nil
				case next == 0:
					return nil, fmt.Errorf("cpu: the harness failed before running a candidate: %s\n%s", exitText(cmd, werr), stderr.String())
				}
				// It died between candidates, so none is to blame: run the
				// rest again.
				return ids[next:], nil
			}
			e, ok := harness.Decode(line)
			if !ok {
				continue // stray output, from a kernel that wrote to fd 1
			}
			err := seq.Next(e)
			wait := r.timeout
			switch {
			case err != nil:
			case e.Event == harness.Start && (next >= len(ids) || e.ID != ids[next]):
				err = fmt.Errorf("start of %d, not of the next candidate", e.ID)
			case e.Event == harness.Start:
				curStart, estimate = time.Now(), 0
				next++
				if r.onStart != nil {
					r.onStart(e.ID)
				}
			case e.Event == harness.Checked:
				l, ok := r.opts.checkedTimeout(e.CallNS, e.Calls)
				if !ok {
					continue // a fixed Timeout counts from the start
				}
				wait, checked = l, time.Now()
				estimate = timingEstimate(e.CallNS, e.Calls)
			case e.Event == harness.Result:
				res, ok := result(e)
				r.probe.lower(time.Duration(e.ProbeNS))
				if !ok {
					err = fmt.Errorf("bad result")
					break
				}
				r.finish(e.ID, res, time.Since(curStart))
			case e.Event == harness.Done && next != len(ids):
				err = fmt.Errorf("done after %d of %d candidates", next, len(ids))
			case e.Event == harness.Round:
				err = fmt.Errorf("a round while tuning")
			}
			if err != nil {
				stop()
				return nil, fmt.Errorf("cpu: harness protocol: %v: %s", err, line)
			}
			// Each event restarts the clock: the harness is alive, and the
			// next candidate gets its own time, from its check on the time
			// its estimate calls for. After done, it guards the harness's
			// exit.
			timer.Reset(wait)
		}
	}
}

// child is a started harness process whose stdout is read line by line.
type child struct {
	cmd    *exec.Cmd
	stderr *stderrBuffer
	lines  chan []byte // the lines of stdout; closed at its end
	// scanErr is why reading stdout stopped early; read it only once lines
	// is closed.
	scanErr error
}

// startHarness starts cmd, a harness with its arguments and directory set
// (and its environment, when it is not this process's), in a process group
// of its own, with stdin held open and the ends of stderr kept for error
// messages. Both runners, the tuner's and the bench's, start harnesses this
// way.
func startHarness(cmd *exec.Cmd) (*child, error) {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	// A user's GOTRACEBACK=crash would dump core for every crashing
	// candidate, and =all would bury the crashing goroutine.
	cmd.Env = append(cmd.Env, "GOTRACEBACK=single")
	h := &child{cmd: cmd, stderr: &stderrBuffer{}, lines: make(chan []byte)}
	cmd.Stderr = h.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("cpu: starting the harness: %w", err)
	}
	// The harness exits when its stdin closes, which happens when this
	// process dies however it dies; Wait closes it otherwise.
	if _, err := cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("cpu: starting the harness: %w", err)
	}
	newGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cpu: starting the harness: %w", err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), maxLine)
		for sc.Scan() {
			h.lines <- bytes.Clone(sc.Bytes())
		}
		if h.scanErr = sc.Err(); h.scanErr != nil {
			io.Copy(io.Discard, stdout) // keep the harness from blocking on a full pipe
		}
	}()
	return h, nil
}

// stop kills the harness and waits for it. Draining lines lets the reader
// finish before Wait closes the pipe.
func (h *child) stop() error {
	killGroup(h.cmd)
	for range h.lines {
	}
	return h.cmd.Wait()
}

// result converts a result event, reporting whether it is well-formed.
func result(e harness.Event) (measure.Result, bool) {
	switch s := measure.Status(e.Status); s {
	case measure.StatusOK:
		if len(e.SamplesNS) == 0 {
			return measure.Result{}, false
		}
		median, p20, p80 := measure.Summarize(e.SamplesNS)
		return measure.Result{Status: s, SamplesNS: e.SamplesNS, MedianNS: median, P20NS: p20, P80NS: p80,
			Disturbance: disturbance(e.Evidence)}, true
	case measure.StatusCrash, measure.StatusWrongAnswer:
		return measure.Result{Status: s, Error: clip(e.Error)}, true
	}
	return measure.Result{}, false
}

// disturbance converts a result's evidence, checking that it counts what
// it can count; nil when there is none or it is not well-formed.
func disturbance(e *harness.Evidence) *measure.Disturbance {
	if e == nil || e.Samples < 0 || e.Disturbed < 0 || e.Disturbed > e.Samples {
		return nil
	}
	return &measure.Disturbance{
		Samples: e.Samples, Disturbed: e.Disturbed, CPUShare: e.CPUShare,
		StealNS: max(e.StealNS, 0), InvoluntarySwitches: max(e.InvoluntarySwitches, 0), Probe: e.Probe,
	}
}

// probeBest is the fastest time of the calibration probe any harness of a
// Measurer has reported: each new harness judges its probe against it, so
// that a batch that starts on a busy machine does not take its own slow
// probe for the machine's best. A nil *probeBest keeps nothing.
type probeBest struct {
	mu   sync.Mutex
	best time.Duration
}

func (p *probeBest) get() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.best
}

func (p *probeBest) lower(d time.Duration) {
	if p == nil || d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.best == 0 || d < p.best {
		p.best = d
	}
}

// finish records the result of candidate id, keeping the Config and build
// fields already set.
func (r *runner) finish(id int, res measure.Result, took time.Duration) {
	res.Config, res.BuildNS = r.res[id].Config, r.res[id].BuildNS
	r.res[id] = res
	r.finished[id] = true
	r.own[id] = took
	if r.onFinish != nil {
		res.RunNS = took.Nanoseconds() // its own time; the batch's overhead is shared out at its end
		r.onFinish(res)
	}
}

// exitText says how the harness ended.
func exitText(cmd *exec.Cmd, werr error) string {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.String() // "exit status 3", "signal: segmentation fault"
	}
	return werr.Error()
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// stderrBuffer keeps the start and the end of what a harness writes to
// stderr. When a harness dies, the start has Go's fatal error or signal and
// the crashing goroutine (the runtime prints it first), the end has whatever
// came last (an exit message, the last of a long dump).
type stderrBuffer struct {
	mu    sync.Mutex
	head  []byte // the first stderrHeadBytes
	tail  []byte // the last bytes after head: at most 2*stderrTailBytes, trimmed as it grows
	total int
}

func (b *stderrBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += len(p)
	q := p
	if n := min(stderrHeadBytes-len(b.head), len(q)); n > 0 {
		b.head = append(b.head, q[:n]...)
		q = q[n:]
	}
	b.tail = append(b.tail, q...)
	if len(b.tail) > 2*stderrTailBytes {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-stderrTailBytes:]...)
	}
	return len(p), nil
}

// String returns the start and the end of stderr, with a mark where bytes
// were left out, or "(stderr was empty)".
func (b *stderrBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	if len(tail) > stderrTailBytes {
		tail = tail[len(tail)-stderrTailBytes:]
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:] // from a line start
		}
	}
	skipped := b.total - len(b.head) - len(tail)
	var s string
	switch {
	case b.total == 0:
		return "(stderr was empty)"
	case skipped == 0:
		s = string(b.head) + string(tail)
	default:
		s = fmt.Sprintf("%s\n[... %d bytes ...]\n%s", b.head, skipped, tail)
	}
	// A Go fatal error dumps every goroutine; the first is the one that
	// crashed, the others are the runtime's own.
	if first := strings.Index(s, "\ngoroutine "); first >= 0 {
		if i := strings.Index(s[first+1:], "\n\ngoroutine "); i >= 0 {
			s = s[:first+1+i] + "\n\n[other goroutines left out]"
		}
	}
	return strings.TrimSpace(s)
}
