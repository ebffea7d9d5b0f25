package cuda

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/measure/harness"
	"github.com/autotune-dev/autotune/schedule"
)

// Options configure a Measurer. A nil *Options means the defaults; so does
// each zero field.
type Options struct {
	Seed    uint64        // fixes the random inputs
	Samples int           // timed launches per candidate, at least; 30
	MinTime time.Duration // and at least this long; 20ms
	Warmup  int           // untimed launches after the checked one; 5
	// Timeout bounds the silence of a worker: compiling and measuring one
	// candidate. A worker past it is killed and its candidate is a
	// timeout. 60s.
	Timeout time.Duration
	// Command starts a worker: the program and its arguments, to which
	// nothing is appended. Default: this executable with WorkerArg.
	Command []string
	// DriverPath is the driver library to load, "" for libcuda.so.1 on
	// the loader's path.
	DriverPath string
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Samples <= 0 {
		out.Samples = 30
	}
	if out.MinTime <= 0 {
		out.MinTime = 20 * time.Millisecond
	}
	if out.Warmup <= 0 {
		out.Warmup = 5
	}
	if out.Timeout <= 0 {
		out.Timeout = 60 * time.Second
	}
	return out
}

// Measurer measures batches of CUDA candidates on the local GPU, one
// worker process at a time. Batches measured at the same time would
// disturb each other's timings; Measure serialises them.
type Measurer struct {
	opts      Options
	target    device.Target
	gpu       string // "NVIDIA H100 80GB HBM3 (sm_90), driver 13.0, NVRTC 13.0"
	toolchain string // see Toolchain

	mu    sync.Mutex
	key   string
	work  harness.Workload                                 // of the last batch's workload
	sets  []harness.Set                                    // its input sets (measure.Inputs), the first timed
	start func(ctx context.Context, j job) (*child, error) // test hook
}

// New checks that this machine can measure for target, a CUDA
// architecture: the driver library loads and initialises, NVRTC loads, and
// the first GPU is of target's architecture. The errors name what is
// missing and suggest --device cpu; a GPU of another architecture gives an
// error naming both.
func New(opts *Options, target device.Target) (*Measurer, error) {
	if !target.IsCUDA() {
		return nil, fmt.Errorf("cuda: target %s is not a CUDA architecture", target)
	}
	m := &Measurer{opts: opts.withDefaults(), target: target}
	if m.opts.Command == nil {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("cuda: finding this executable to start workers: %w", err)
		}
		m.opts.Command = []string{exe, WorkerArg}
	}
	unusable := func(err error) error {
		return fmt.Errorf("cuda: cannot measure on %s: %w; use --device cpu to tune for this machine's CPU", target, err)
	}
	d, err := driver.Open(m.opts.DriverPath)
	if err != nil {
		return nil, unusable(err)
	}
	nv, err := driver.OpenNVRTC()
	if err != nil {
		return nil, unusable(err)
	}
	n, err := d.DeviceCount()
	if err == nil && n == 0 {
		err = errors.New("the driver sees no GPU")
	}
	if err != nil {
		return nil, unusable(err)
	}
	dev, err := d.Device(0)
	if err != nil {
		return nil, unusable(err)
	}
	if err := checkArch(dev, target.GPU.Arch); err != nil {
		return nil, fmt.Errorf("cuda: %w; tune with --device set to the GPU's architecture", err)
	}
	name, _ := dev.Name()
	dv, _ := d.Version()
	nvv, _ := nv.Version()
	m.gpu = fmt.Sprintf("%s (%s), driver CUDA %s, NVRTC %s", name, target.GPU.Arch, dv, nvv)
	if nvv != "" {
		m.toolchain = "nvrtc" + nvv
	}
	m.start = m.startChild
	return m, nil
}

// GPU describes the device and the libraries, for logs.
func (m *Measurer) GPU() string { return m.gpu }

// Toolchain names the compiler of the candidates as the tuning database's
// workload key does: "nvrtc" and NVRTC's version, "nvrtc13.0", or "" when
// NVRTC did not say.
func (m *Measurer) Toolchain(context.Context) (string, error) { return m.toolchain, nil }

// Measure emits, compiles and runs b's configs and returns one Result per
// config, in order (see the package doc). The error is non-nil only when
// the machinery fails; the results finished by then come with it.
func (m *Measurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	if len(b.Configs) == 0 {
		return nil, nil
	}
	if !b.Target.IsCUDA() || b.Template.CUDA == nil {
		return nil, fmt.Errorf("cuda: target %q or template %s is not CUDA", b.Target.Name, b.Template.Version)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b.Shape = slices.Clone(b.Shape)
	res := make([]measure.Result, len(b.Configs))
	finished := make([]bool, len(b.Configs))

	var space *schedule.Space
	if b.Template.Space != nil {
		space = b.Template.Space(b.Shape, b.Target)
	}
	name := kernelName(b.Template.Op, b.Shape)
	var ks []kernel
	for i, c := range b.Configs {
		res[i].Config = c
		if space != nil {
			if err := space.Check(c); err != nil {
				res[i].Status, res[i].Error, finished[i] = measure.StatusInvalid, err.Error(), true
				report(b, res[i])
				continue
			}
		}
		k, err := emit(b.Template, kernels.Kernel{Name: name, Shape: b.Shape, DType: b.DType, Config: c})
		if err != nil {
			res[i].Status, res[i].Error, finished[i] = measure.StatusBuildError, err.Error(), true
			report(b, res[i])
			continue
		}
		ks = append(ks, kernel{ID: i, Source: k.Source, Entry: k.Entry, Grid: k.Grid, Block: k.Block, SharedBytes: k.SharedBytes})
	}
	if len(ks) == 0 {
		return res, nil
	}

	dir, err := measure.TempDir("", "autotune-cuda")
	if err != nil {
		return done(res, finished), fmt.Errorf("cuda: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := m.data(ctx, b); err != nil {
		return done(res, finished), fmt.Errorf("cuda: %w", err)
	}
	if err := harness.Write(dir, m.work, m.sets); err != nil {
		return done(res, finished), fmt.Errorf("cuda: writing the inputs: %w", err)
	}
	j := job{
		DriverPath: m.opts.DriverPath, Arch: b.Target.GPU.Arch, Dir: dir,
		Samples: m.opts.Samples, MinTimeNS: int64(m.opts.MinTime), Warmup: m.opts.Warmup,
	}
	for len(ks) > 0 {
		j.Kernels = ks
		ran, err := m.runWorker(ctx, j, res)
		for _, id := range ran {
			finished[id] = true
			report(b, res[id])
		}
		if err != nil {
			return done(res, finished), err
		}
		ks = slices.DeleteFunc(ks, func(k kernel) bool { return finished[k.ID] })
	}
	return done(res, finished), nil
}

// emit calls the template's emitter, turning a panic into an error.
func emit(t kernels.Template, k kernels.Kernel) (_ kernels.CUDAKernel, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("emitting CUDA: %v", r)
		}
	}()
	return t.CUDA.EmitCUDA(k), nil
}

// report passes a final result to the batch's Finished hook, if any.
func report(b measure.Batch, r measure.Result) {
	if b.Finished != nil {
		b.Finished(r)
	}
}

// data makes m.work and m.sets those of b's workload, reusing the last. It
// gives up when ctx is done: a float64 reference can take minutes.
func (m *Measurer) data(ctx context.Context, b measure.Batch) error {
	dt := cmp.Or(b.DType, dtype.Default)
	key := fmt.Sprintf("%s\x00%s\x00%v\x00%s\x00%d", b.Template.Op.Name, b.Template.Version, b.Shape, dt, m.opts.Seed)
	if key == m.key {
		return nil
	}
	sets, err := measure.InputsContext(ctx, b.Template.Op, b.Shape, dt, m.opts.Seed)
	if err != nil {
		return err
	}
	ins, out := b.Template.Args(b.Shape)
	m.key, m.work, m.sets = key, harness.Workload{Inputs: ins, Output: out, DType: string(dt)}, nil
	for _, set := range sets {
		info := harness.SetInfo{Name: set.Name, Rel: set.Rel, Abs: set.Abs}
		m.work.Sets = append(m.work.Sets, info)
		m.sets = append(m.sets, harness.Set{SetInfo: info, Ins: set.Ins, Want: set.Want})
	}
	return nil
}

func done(res []measure.Result, finished []bool) []measure.Result {
	var out []measure.Result
	for i, r := range res {
		if finished[i] {
			out = append(out, r)
		}
	}
	return out
}

// child is a running worker: its events, and how it ended.
type child struct {
	events <-chan event    // closed after exited
	exited <-chan struct{} // closed once the process has ended and stdout is drained
	kill   func()
	status func() string // exit status and stderr's tail, once exited
}

// startChild starts a worker process and sends it j.
func (m *Measurer) startChild(ctx context.Context, j job) (*child, error) {
	in, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	cmd := exec.Command(m.opts.Command[0], m.opts.Command[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cuda: starting a worker: %w", err)
	}
	events := make(chan event)
	exited := make(chan struct{})
	var waitErr error
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 256<<20)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				e = event{Kind: "garbled", Error: fmt.Sprintf("%v: %.200q", err, sc.Text())}
			}
			events <- e
		}
		io.Copy(io.Discard, stdout)
		waitErr = cmd.Wait()
		close(exited)
		close(events)
	}()
	return &child{
		events: events, exited: exited,
		kill: func() { cmd.Process.Kill() },
		status: func() string {
			s := "exited"
			if waitErr != nil {
				s = waitErr.Error()
			}
			if t := strings.TrimSpace(stderr.String()); t != "" {
				s += "; stderr: " + t
			}
			return s
		},
	}, nil
}

// runWorker runs one worker over j.Kernels until it finishes, dies or
// hangs, filling res; it returns the IDs it finished. An error is the
// machinery's.
func (m *Measurer) runWorker(ctx context.Context, j job, res []measure.Result) (ran []int, err error) {
	c, err := m.start(ctx, j)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.kill()
		for range c.events { // drain, so the reader goroutine ends
		}
	}()
	current := -1
	var began time.Time
	timer := time.NewTimer(m.opts.Timeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ran, fmt.Errorf("cuda: batch interrupted: %w", ctx.Err())
		case <-timer.C:
			c.kill()
			for range c.events {
			}
			if current < 0 {
				return ran, fmt.Errorf("cuda: the worker said nothing for %v: %s", m.opts.Timeout, c.status())
			}
			res[current].Status = measure.StatusTimeout
			res[current].Error = fmt.Sprintf("no result after %v; the worker was killed", m.opts.Timeout)
			res[current].RunNS = int64(time.Since(began))
			return append(ran, current), nil
		case e, ok := <-c.events:
			if !ok {
				if current < 0 {
					// Done, or ended after a kernel that poisoned its
					// context: the caller starts another for the rest.
					if len(ran) > 0 {
						return ran, nil
					}
					return ran, fmt.Errorf("cuda: the worker ended before its first kernel: %s", c.status())
				}
				res[current].Status = measure.StatusCrash
				res[current].Error = "the worker died: " + c.status()
				res[current].RunNS = int64(time.Since(began))
				return append(ran, current), nil
			}
			switch e.Kind {
			case "start":
				current, began = e.ID, time.Now()
				timer.Reset(m.opts.Timeout)
			case "result":
				r := &res[e.ID]
				r.Status, r.Error = measure.Status(e.Status), e.Error
				r.BuildNS, r.RunNS = e.BuildNS, e.RunNS
				r.Registers, r.LocalBytes = e.Registers, e.LocalB
				if r.Status == measure.StatusOK {
					r.SamplesNS = e.SamplesNS
					r.MedianNS, r.P20NS, r.P80NS = measure.Summarize(e.SamplesNS)
				}
				ran = append(ran, e.ID)
				current = -1
			case "fatal":
				return ran, fmt.Errorf("cuda: worker: %s", e.Error)
			default:
				return ran, fmt.Errorf("cuda: the worker broke the protocol: %s", e.Error)
			}
		}
	}
}

// tailBuffer keeps the last 4 KiB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
