package cuda

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/measure/harness"
)

// Exit codes of a worker.
const (
	exitOK     = 0
	exitFatal  = 1 // reported a fatal event, or could not even do that
	exitSticky = 3 // a kernel poisoned the context; the rest needs a fresh worker
)

// maxSamples bounds the timed launches of one candidate.
const maxSamples = 10000

// ServeWorker runs the job the parent writes on stdin and reports on
// stdout, then returns the process's exit code. The autotune command calls
// it for its hidden argument WorkerArg; so does this package's TestMain.
func ServeWorker(stdin io.Reader, stdout io.Writer) int {
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	emit := func(e event) {
		enc.Encode(e)
		out.Flush()
	}
	var j job
	if err := json.NewDecoder(stdin).Decode(&j); err != nil {
		emit(event{Kind: "fatal", Error: "reading the job: " + err.Error()})
		return exitFatal
	}
	// A context is current per OS thread; everything runs on this one.
	runtime.LockOSThread()
	nv, err := driver.OpenNVRTC()
	if err != nil {
		emit(event{Kind: "fatal", Error: err.Error()})
		return exitFatal
	}
	// Compiling starts before the input sets are loaded, which for a large
	// workload takes seconds too.
	ahead := compileAhead(nv, j.Kernels, j.Arch, compilers())
	w, err := newWorker(j, nv)
	if err != nil {
		emit(event{Kind: "fatal", Error: err.Error()})
		return exitFatal
	}
	w.ahead = ahead
	if j.Bench != nil {
		emit(w.bench(j.Kernels[0]))
		return exitOK
	}
	for _, k := range j.Kernels {
		emit(event{Kind: "start", ID: k.ID})
		e, sticky := w.run(k)
		e.Kind, e.ID = "result", k.ID
		emit(e)
		if sticky {
			return exitSticky
		}
	}
	return exitOK
}

type worker struct {
	j     job
	dev   driver.Device
	ctx   *driver.Context
	nvrtc *driver.NVRTC
	ahead map[int]<-chan compiled // by kernel ID: compileAhead's results
	work  harness.Workload
	sets  []harness.Set  // their inputs and references; the first is timed
	ins   [][]driver.Ptr // each set's inputs on the device
	out   driver.Ptr
	flush driver.Ptr  // written before each timed launch to evict L2
	words int         // 32-bit words of flush
	dt    dtype.DType // of every buffer: inputs encoded, the output decoded
	got   []float32   // the output decoded
}

func newWorker(j job, nv *driver.NVRTC) (*worker, error) {
	d, err := driver.Open(j.DriverPath)
	if err != nil {
		return nil, err
	}
	dev, err := d.Device(0)
	if err != nil {
		return nil, err
	}
	if err := checkArch(dev, j.Arch); err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	if err := ctx.SetCurrent(); err != nil {
		return nil, err
	}
	work, sets, err := harness.Read(j.Dir)
	if err != nil {
		return nil, err
	}
	dt, err := dtype.Parse(work.DType)
	if err != nil {
		return nil, err
	}
	w := &worker{j: j, dev: dev, ctx: ctx, nvrtc: nv, work: work, sets: sets, dt: dt,
		got: make([]float32, work.Output)}
	// Inputs are encoded on all cores and copied from this thread, whose
	// context is current.
	encoded := make([][][]byte, len(sets))
	kernels.ForRows(len(sets), func(lo, hi int) {
		for s := lo; s < hi; s++ {
			for _, in := range sets[s].Ins {
				encoded[s] = append(encoded[s], dt.AppendBytes(nil, in))
			}
		}
	})
	for s := range sets {
		var ptrs []driver.Ptr
		for i, n := range work.Inputs {
			p, err := ctx.Alloc(wordBytes(dt, n))
			if err != nil {
				return nil, err
			}
			if err := ctx.CopyInBytes(p, encoded[s][i]); err != nil {
				return nil, err
			}
			encoded[s][i] = nil
			ptrs = append(ptrs, p)
		}
		w.ins = append(w.ins, ptrs)
	}
	if w.out, err = ctx.Alloc(wordBytes(dt, work.Output)); err != nil {
		return nil, err
	}
	l2, err := dev.Attribute(driver.AttrL2CacheSize)
	if err != nil {
		return nil, err
	}
	w.words = max(2*l2, 8<<20) / 4
	if w.flush, err = ctx.Alloc(4 * w.words); err != nil {
		return nil, err
	}
	return w, nil
}

// wordBytes is the size of a buffer of n elements of dt (at least one),
// rounded up to whole 32-bit words, which poison fills.
func wordBytes(dt dtype.DType, n int) int { return (dt.Size()*max(n, 1) + 3) / 4 * 4 }

// poisonWord fills the output before each checked run: NaN as float32,
// and as each half of it as bf16 or f16.
const poisonWord = 0xffffffff

// checkArch fails unless dev is of architecture arch ("sm_90").
func checkArch(dev driver.Device, arch string) error {
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return err
	}
	if have := fmt.Sprintf("sm_%d%d", major, minor); have != arch {
		name, _ := dev.Name()
		return fmt.Errorf("%w: the GPU is %s (%s), not %s", ErrWrongArch, name, have, arch)
	}
	return nil
}

// ErrWrongArch is wrapped when the GPU is not of the target's architecture.
var ErrWrongArch = errors.New("the GPU's architecture is not the target's")

// run measures one kernel. sticky reports an error after which the context
// is unusable.
func (w *worker) run(k kernel) (e event, sticky bool) {
	mod, launchSet, status, err := w.load(k, &e)
	if err != nil {
		e.Status, e.Error = string(status), err.Error()
		return e, driver.IsSticky(err)
	}
	defer mod.Unload()
	start := time.Now()
	defer func() { e.RunNS = int64(time.Since(start)) }()
	fail := func(err error) (event, bool) {
		e.Status, e.Error = string(measure.StatusRuntimeError), err.Error()
		return e, driver.IsSticky(err)
	}
	wrong, err := w.check(launchSet)
	if err != nil {
		return fail(err)
	}
	if wrong != "" {
		e.Status, e.Error = string(measure.StatusWrongAnswer), wrong
		return e, false
	}
	launch := launchSet(0)
	for range w.j.Warmup {
		if err := launch(); err != nil {
			return fail(err)
		}
	}
	samples, err := w.time(launch)
	if err != nil {
		return fail(err)
	}
	e.Status, e.SamplesNS = string(measure.StatusOK), samples
	return e, false
}

// compiled is a kernel's NVRTC output, or its error, and how long the
// compile took.
type compiled struct {
	prog    *driver.Program
	err     error
	buildNS int64
}

func compile(nv *driver.NVRTC, k kernel, arch string) compiled {
	start := time.Now()
	prog, err := nv.Compile(k.Source, k.Entry+".cu", arch)
	return compiled{prog, err, int64(time.Since(start))}
}

// compileAhead compiles ks with NVRTC on n goroutines, in order, while
// the worker loads its input sets and measures the kernels before each:
// NVRTC takes seconds for a large tensor-core kernel, one core at a time,
// where a GPU host has many cores. The result of the kernel of ID i
// arrives on the channel at key i. NVRTC may be called from several
// threads at once on different programs.
func compileAhead(nv *driver.NVRTC, ks []kernel, arch string, n int) map[int]<-chan compiled {
	out := make(map[int]<-chan compiled, len(ks))
	todo := make(chan int, len(ks))
	results := make([]chan compiled, len(ks))
	for i, k := range ks {
		results[i] = make(chan compiled, 1)
		out[k.ID] = results[i]
		todo <- i
	}
	close(todo)
	for range min(n, len(ks)) {
		go func() {
			for i := range todo {
				results[i] <- compile(nv, ks[i], arch)
			}
		}()
	}
	return out
}

// compilers is how many kernels a worker compiles at once: all cores but
// the one that launches and checks, at most 8 (a tune's batch).
func compilers() int { return min(8, max(1, runtime.NumCPU()-1)) }

// load compiles k (or takes compileAhead's result) and loads it, setting
// e's BuildNS, Registers and LocalB. launchSet(s) launches it on input set
// s, writing w.out. An error comes with the status it makes: build_error
// or runtime_error.
func (w *worker) load(k kernel, e *event) (mod *driver.Module, launchSet func(set int) func() error, _ measure.Status, err error) {
	var c compiled
	if ch, ok := w.ahead[k.ID]; ok {
		c = <-ch
		delete(w.ahead, k.ID) // a second load compiles again
	} else {
		c = compile(w.nvrtc, k, w.j.Arch)
	}
	prog := c.prog
	e.BuildNS = c.buildNS
	if c.err != nil {
		return nil, nil, measure.StatusBuildError, c.err
	}
	if mod, err = w.ctx.LoadModule(prog.Image()); err != nil {
		return nil, nil, measure.StatusRuntimeError, err
	}
	f, err := mod.Function(k.Entry)
	if err == nil && k.SharedBytes > 48<<10 {
		err = f.SetAttribute(driver.FuncMaxDynamicSharedSizeByte, k.SharedBytes)
	}
	if err != nil {
		mod.Unload()
		return nil, nil, measure.StatusRuntimeError, err
	}
	e.Registers, _ = f.Attribute(driver.FuncNumRegs)
	e.LocalB, _ = f.Attribute(driver.FuncLocalSizeBytes)
	grid := driver.Dim3{X: k.Grid[0], Y: k.Grid[1], Z: k.Grid[2]}
	block := driver.Dim3{X: k.Block[0], Y: k.Block[1], Z: k.Block[2]}
	return mod, func(set int) func() error {
		args := []any{w.out}
		for _, p := range w.ins[set] {
			args = append(args, p)
		}
		return func() error { return f.Launch(grid, block, k.SharedBytes, args...) }
	}, "", nil
}

// check runs a launch on every input set, each on a poisoned output, and
// compares the output with the set's reference: wrong names the set and
// the first element out of tolerance, "" when all pass.
func (w *worker) check(launchSet func(set int) func() error) (wrong string, err error) {
	for s, set := range w.sets {
		if err := w.ctx.Fill(w.out, poisonWord, wordBytes(w.dt, w.work.Output)/4); err != nil {
			return "", err
		}
		if err := launchSet(s)(); err != nil {
			return "", err
		}
		if msg, err := w.compare(w.out, w.dt, set); msg != "" || err != nil {
			return msg, err
		}
	}
	return "", nil
}

// compare waits for the queued work, copies the output at p, of dtype dt,
// to the host and checks it against set's reference: the message names
// the set and the first element out of tolerance, "" when all pass.
func (w *worker) compare(p driver.Ptr, dt dtype.DType, set harness.Set) (string, error) {
	if err := w.ctx.Synchronize(); err != nil {
		return "", err
	}
	raw := make([]byte, dt.Size()*w.work.Output)
	if err := w.ctx.CopyOutBytes(raw, p); err != nil {
		return "", err
	}
	// Decoded and checked in chunks on all cores (a set of softmax
	// 16384×16384 has a quarter of a billion outputs); the whole output is
	// checked again, for the message, only when a chunk fails.
	var bad atomic.Bool
	size := dt.Size()
	kernels.ForRows(len(w.got), func(lo, hi int) {
		if dt.DecodeBytes(w.got[lo:hi], raw[size*lo:size*hi]) != nil || harness.Check(w.got[lo:hi], set.Want[lo:hi], set.Rel, set.Abs) != "" {
			bad.Store(true)
		}
	})
	if !bad.Load() {
		return "", nil
	}
	if err := dt.DecodeBytes(w.got, raw); err != nil {
		return "", err
	}
	return "input set " + set.Name + ": " + harness.Check(w.got, set.Want, set.Rel, set.Abs), nil
}

// time times single launches between events, flushing L2 before each.
func (w *worker) time(launch func() error) ([]float64, error) {
	t, err := w.newTimer()
	if err != nil {
		return nil, err
	}
	defer t.destroy()
	var samples []float64
	begin := time.Now()
	for len(samples) < maxSamples && (len(samples) < w.j.Samples || time.Since(begin) < time.Duration(w.j.MinTimeNS)) {
		ns, err := t.sample(launch)
		if err != nil {
			return nil, err
		}
		samples = append(samples, ns)
	}
	return samples, nil
}

// timer times launches with a pair of CUDA events.
type timer struct {
	w             *worker
	before, after *driver.Event
	n             uint32 // samples so far, the value of the next flush
}

func (w *worker) newTimer() (*timer, error) {
	before, err := w.ctx.NewEvent()
	if err != nil {
		return nil, err
	}
	after, err := w.ctx.NewEvent()
	if err != nil {
		before.Destroy()
		return nil, err
	}
	return &timer{w: w, before: before, after: after}, nil
}

func (t *timer) destroy() {
	t.before.Destroy()
	t.after.Destroy()
}

// sample writes the flush buffer, so that no launch finds the last one's
// data in L2, then times one launch in nanoseconds.
func (t *timer) sample(launch func() error) (float64, error) {
	t.n++
	if err := t.w.ctx.Fill(t.w.flush, t.n, t.w.words); err != nil {
		return 0, err
	}
	if err := t.before.Record(); err != nil {
		return 0, err
	}
	if err := launch(); err != nil {
		return 0, err
	}
	if err := t.after.Record(); err != nil {
		return 0, err
	}
	if err := t.after.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := t.after.Since(t.before)
	return float64(ms) * 1e6, err
}
