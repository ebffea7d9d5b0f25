package cpu

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/emul"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
	"github.com/autotune-dev/autotune/measure/harness"
	"github.com/autotune-dev/autotune/schedule"
)

// Names of the entries of a bench that are not Template.Baselines.
const (
	BenchTuned    = "tuned"     // the kernel of BenchBatch.Config
	BenchTunedF32 = "tuned-f32" // the kernel of BenchBatch.ConfigF32
	BenchFloor    = "floor"     // the memory-copy floor
	BenchPeak     = "peak"      // the FMA-peak calibration loop
)

// ThreadsKnob is the knob whose value the floor copies with as many
// goroutines as: templates whose kernels split their work among goroutines
// name that knob "threads" and count the calling goroutine as one (as the
// softmax template does). A config without it, or whose threads is not an
// integer, gets a floor of one goroutine.
const ThreadsKnob = "threads"

// Defaults of BenchBatch. Thirty samples give p20 and p80 six samples in from
// each end; a second of interleaved rounds spans enough of the scheduler's
// and the clock frequency's drift that every entry sees the same machine.
const (
	DefaultBenchSamples = 30
	DefaultBenchTime    = time.Second
)

// benchStepTimeout limits each step of a bench by default: loading the
// inputs, checking and calibrating one entry, one round of samples. The tuned
// kernel passed the tuner and the baselines are plain code, so a step that
// takes a minute is a hang, or a workload too large to benchmark here.
const benchStepTimeout = time.Minute

// A BenchBatch is one workload's tuned config, to time side by side with the
// template's baselines and a memory floor.
type BenchBatch struct {
	Template kernels.Template
	Shape    []int
	DType    dtype.DType // "" means dtype.Default
	Target   device.Target
	Config   schedule.Config // the tuned config, a valid point of Template.Space(Shape, Target)

	// ConfigF32, for a workload of a 16-bit dtype, is the tuned float32
	// config of the same shape, benched beside it (BenchTunedF32) on the
	// same values: what half precision gains. The zero Config leaves it
	// out.
	ConfigF32 schedule.Config

	// Timing goes on, in rounds of one sample of every entry, until each
	// entry has MinSamples samples and all samples add up to MinTime.
	// Defaults DefaultBenchSamples and DefaultBenchTime; the Measurer's
	// MinSamples and MinTime are for tuning and do not apply.
	MinSamples int
	MinTime    time.Duration
}

// A BenchResult is the timing of one entry of a bench.
type BenchResult struct {
	Name    string  // BenchTuned, a baseline's Name, or BenchFloor
	Doc     string  // one line: the config, the baseline's Doc, what the floor copies
	Checked bool    // the output was compared with the reference and passed; false for the floor and the peak
	Bytes   float64 // memory one call must move: Template.Bytes, or what the floor copies; 0 for the peak
	FLOPs   float64 // work of one call: Template.FLOPs, or the peak loop's; 0 for the floor
	Reps    int     // calls per sample

	// AllocBytes and Allocs are the bytes and objects one call allocates
	// on the Go heap, on all its goroutines: runtime.MemStats TotalAlloc
	// and Mallocs across an untimed call, the one of two after the checked
	// call that allocated fewer bytes (the other may include the runtime's
	// own allocations, for a new thread say), with the collector off. The
	// inputs and the output are the harness's and do not count. It is
	// what a call asks of the heap, rounded up to the allocator's size
	// classes, and an upper bound on how much the call adds to the peak
	// heap (exactly that when it allocates once, as the baselines that
	// hold the S×S attention scores do). Goroutine stacks are not heap
	// allocations and do not count: a variable the compiler keeps on the
	// stack costs nothing here until it is too large for a stack frame
	// (over 128 KiB for a declared variable, 64 KiB for new or make) and
	// the compiler moves it to the heap, where it counts. Nor does memory
	// a C library allocates (a cgo baseline's).
	AllocBytes uint64
	Allocs     uint64

	SamplesNS []float64 // every timed sample kept, in ns per call, in round order
	MedianNS  float64   // measure.Summarize(SamplesNS)
	P20NS     float64
	P80NS     float64

	// Rounds is how many rounds were timed, and Dropped how many of them
	// were left out as disturbed (dropDisturbed): the same for every
	// entry.
	Rounds, Dropped int
}

// benchEntry is one thing a bench harness times, in result order.
type benchEntry struct {
	name, doc string
	pkg       string // its package in the bench module
	checked   bool
	skip      []int // input sets the check leaves out (kernels.Baseline.KnownWrong)
	bytes     float64
	flops     float64
	requires  []string // modules the package imports (kernels.Baseline.Requires)
	cgo       bool     // the package uses cgo (kernels.Baseline.Cgo)
	// emit adds func Kernel to the package and returns the package's Go
	// assembly, or nil; emit is nil for the harness's own kernels.
	emit func(f *jen.File) []byte
	fn   jen.Code // without emit: the harness's Kernel (the floor, the peak)
	half bool     // a kernel of the workload's 16-bit dtype (the harness's Kernel16)
}

// Bench times b's tuned kernel, every one of b.Template.Baselines that is
// not skipped for the shape (kernels.Baseline.Skip), the FMA peak (for a
// template with FLOPs) and the memory floor in one harness process,
// interleaved, and returns one result per entry in that order: the tuned
// kernel first, the floor last.
//
// The floor copies the first input into the output, as many elements as
// both hold, split evenly among as many goroutines as the tuned config's
// ThreadsKnob: for an op that reads one array and writes one of the same
// size (softmax), that is the least memory traffic any kernel of it has.
//
// The peak is the arithmetic counterpart of the floor (package
// measure/cpu/peak): on one goroutine per core of the target, each runs
// peak.Chains independent chains of fused multiply-adds in Go assembly on
// the widest vectors the target has (16 lanes with AVX-512, 8 with AVX2
// and FMA, scalar Go otherwise), or for bf16 on a CPU with AVX512-BF16
// of VDPBF16PS (peak.RunDot, dotPeak), so its best sample is the machine's
// multiply-add peak and a kernel's GFLOP/s divided by it is its fraction
// of peak (PeakGFLOPs, which never lets that exceed 1). Every template with
// FLOPs gets it: it costs a few milliseconds, and it tells a memory-bound
// op (softmax, a few per cent of peak) from a compute-bound one (GEMM) at
// a glance.
//
// The harness checks the tuned kernel and the baselines against the
// reference once, on a poisoned output, the way tuning does, and an entry
// that fails is an error: a wrong baseline makes every ratio meaningless.
// It then calls each entry twice more, untimed, to count what a call
// allocates (BenchResult.AllocBytes). Then each entry is calibrated (k calls per sample, k a power of two, so
// that a sample lasts at least Options.MinSampleTime), Options.Warmup
// untimed rounds run, and timed rounds follow, each one sample of every
// entry in an order that rotates from round to round, so that drift of the
// machine falls on all entries alike.
//
// The inputs are those tuning uses for Options.Seed. The harness runs with
// asynchronous preemption off (see harnessGODEBUG), so that plain scalar Go
// is timed at the speed it has in a normal build. Options.MinSamples and
// MinTime do not apply (see BenchBatch); Options.Timeout, when set, limits
// each step instead of a minute.
func (m *Measurer) Bench(ctx context.Context, b BenchBatch) ([]BenchResult, error) {
	if b.Target.IsCUDA() || b.Target.CPU == nil {
		return nil, fmt.Errorf("cpu: bench: target %q is not a CPU", b.Target.Name)
	}
	b.Shape = slices.Clone(b.Shape)
	if b.Template.Space != nil {
		if err := b.Template.Space(b.Shape, b.Target).Check(b.Config); err != nil {
			return nil, fmt.Errorf("cpu: bench: the tuned config %s is not valid here: %w", b.Config, err)
		}
	}
	entries, err := benchEntries(b)
	if err != nil {
		return nil, err
	}
	if b.MinSamples <= 0 {
		b.MinSamples = DefaultBenchSamples
	}
	if b.MinTime <= 0 {
		b.MinTime = DefaultBenchTime
	}
	goCmd, err := exec.LookPath(m.opts.GoCommand)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGo, err)
	}
	dir, err := m.batchDir()
	if err != nil {
		return nil, err
	}
	if m.opts.KeepDir == "" {
		defer os.RemoveAll(dir)
	}
	bin, err := buildBench(ctx, goCmd, dir, b, entries)
	if err != nil {
		return nil, err
	}
	d, err := m.cache.get(ctx, b.Template, b.Shape, b.DType, m.opts.Seed)
	if err == nil {
		err = d.write(dir)
	}
	if err != nil {
		return nil, err
	}
	res, usage, err := m.runBench(ctx, bin, dir, b, entries)
	if err != nil {
		return nil, err
	}
	dropDisturbed(res, usage, b.MinSamples)
	for i, e := range entries {
		r := &res[i]
		r.Name, r.Doc, r.Checked, r.Bytes, r.FLOPs = e.name, e.doc, e.checked, e.bytes, e.flops
		r.MedianNS, r.P20NS, r.P80NS = measure.Summarize(r.SamplesNS)
	}
	return res, nil
}

// benchEntries lists what b's bench times: the tuned kernel, the baselines
// not skipped for the shape, the peak, the floor.
func benchEntries(b BenchBatch) ([]benchEntry, error) {
	if b.Template.Go == nil || b.Template.Args == nil || b.Template.Reference == nil || b.Template.Tolerance == nil {
		return nil, fmt.Errorf("cpu: bench: template %s has no Go emitter, reference or tolerance", b.Template.Op.Name)
	}
	flops := 0.0
	if b.Template.FLOPs != nil {
		flops = b.Template.FLOPs(slices.Clone(b.Shape))
	}
	shape, dt := b.Shape, cmp.Or(b.DType, dtype.Default)
	half := dt.Size() == 2
	// tuned is the entry of a tuned config in dtype of.
	tuned := func(name, pkg, doc string, cfg schedule.Config, of dtype.DType) benchEntry {
		return benchEntry{
			name: name, doc: doc + cfg.String(), pkg: pkg, checked: true, bytes: b.Template.BytesOf(slices.Clone(shape), of), flops: flops,
			half: of.Size() == 2,
			emit: func(f *jen.File) []byte {
				return b.Template.Go.EmitGo(f, kernels.Kernel{Name: kernelName, Shape: slices.Clone(shape), DType: of, Config: cfg, Arch: kernels.ArchOf(b.Target)})
			},
		}
	}
	entries := []benchEntry{tuned(BenchTuned, "tuned", "the tuned kernel, ", b.Config, dt)}
	if half && b.ConfigF32.Len() > 0 {
		entries = append(entries, tuned(BenchTunedF32, "tunedf32", "the tuned f32 kernel of the shape, on the same values, ", b.ConfigF32, dtype.F32))
	}
	seen := map[string]bool{BenchTuned: true, BenchTunedF32: true, BenchFloor: true, BenchPeak: true}
	for i, bl := range b.Template.Baselines {
		switch {
		case bl.Name == "" || bl.EmitGo == nil:
			return nil, fmt.Errorf("cpu: bench: baseline %d of %s has no name or no emitter", i, b.Template.Op.Name)
		case seen[bl.Name]:
			return nil, fmt.Errorf("cpu: bench: baseline name %q of %s is taken", bl.Name, b.Template.Op.Name)
		}
		seen[bl.Name] = true
		// A float32 baseline (kernels.Baseline.DType) runs on a 16-bit
		// workload too, on the same values, decoded, and moves twice the
		// bytes; a 16-bit one runs on its own dtype's workloads only.
		if !bl.For(dt) || bl.Skipped(slices.Clone(shape)) != "" {
			continue
		}
		skip, doc, err := knownWrong(b.Template, bl, dt)
		if err != nil {
			return nil, err
		}
		of := cmp.Or(bl.DType, dtype.F32)
		entries = append(entries, benchEntry{
			name: bl.Name, doc: doc, pkg: fmt.Sprintf("base%d", i), checked: len(skip) < len(b.Template.InputSetsFor(dt)), skip: skip,
			bytes: b.Template.BytesOf(slices.Clone(shape), of), flops: flops, requires: bl.Requires, cgo: bl.Cgo, half: of.Size() == 2,
			emit: func(f *jen.File) []byte { bl.EmitGo(f, kernelName, slices.Clone(shape)); return nil },
		})
	}
	inLens, outLen := b.Template.Args(slices.Clone(shape))
	n, threads := min(inLens[0], outLen), floorThreads(b.Config)
	goroutines := "one goroutine"
	if threads > 1 {
		goroutines = fmt.Sprintf("%d goroutines", threads)
	}
	if b.Template.FLOPs != nil {
		lanes, cores := peakLanes(b.Target), peakGoroutines(b.Target)
		e := benchEntry{
			name: BenchPeak, flops: peak.FLOPs(lanes, cores, peakSteps),
			doc: fmt.Sprintf("FMA peak: %d chains of %d-lane multiply-adds (assembly on amd64), one goroutine per core (%d)",
				peak.Chains, lanes, cores),
			fn: jen.Id("peakKernel").Call(jen.Lit(lanes), jen.Lit(cores), jen.Lit(peakSteps)),
		}
		if dotPeak(b.Target, dt) {
			e.flops = peak.DotFLOPs(cores, peakSteps)
			e.doc = fmt.Sprintf("bf16 peak: %d chains of VDPBF16PS (two multiply-adds a lane, 16 lanes; assembly), one goroutine per core (%d)",
				peak.Chains, cores)
			e.fn = jen.Id("peakDotKernel").Call(jen.Lit(cores), jen.Lit(peakSteps))
		}
		entries = append(entries, e)
	}
	floor := "floorKernel"
	if half {
		floor = "floorKernel16"
	}
	return append(entries, benchEntry{
		name: BenchFloor, doc: fmt.Sprintf("copies the input to the output (%s) with %s", byteSize(dt.Size()*n), goroutines),
		bytes: float64(2 * dt.Size() * n),
		fn:    jen.Id(floor).Call(jen.Lit(n), jen.Lit(threads)),
		half:  half,
	}), nil
}

// floorThreads returns the tuned config's ThreadsKnob, or 1 (see
// ThreadsKnob). An enum is never an integer in the text form, so parsing the
// value's text tells an integer knob from another.
func floorThreads(cfg schedule.Config) int {
	v, ok := cfg.Lookup(ThreadsKnob)
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(v.String())
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// byteSize formats n bytes for a one-line description: "16 MiB", "68 B".
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// buildBench writes the bench module to dir, a package per entry and the
// harness, and builds it. Any failure is an error: the tuned config was
// built by the tuner, and a baseline that does not build is a bug.
func buildBench(ctx context.Context, goCmd, dir string, b BenchBatch, entries []benchEntry) (string, error) {
	var requires []string
	cgo := false
	for _, e := range entries {
		requires = append(requires, e.requires...)
		cgo = cgo || e.cgo
	}
	mod, sum, err := benchModFiles(requires)
	if err != nil {
		return "", err
	}
	files := map[string][]byte{"go.mod": []byte(mod)}
	if sum != "" {
		files["go.sum"] = []byte(sum)
	}
	inputs, _ := b.Template.Args(slices.Clone(b.Shape))
	var rows []tableRow
	for i, e := range entries {
		rows = append(rows, tableRow{id: i, name: e.name, verify: e.checked, skip: e.skip, pkg: e.pkg, inputs: len(inputs), fn: e.fn, half: e.half})
		if e.emit == nil {
			continue
		}
		var asm []byte
		src, msg := emitPackage(e.pkg, func(f *jen.File) { asm = e.emit(f) })
		if msg != "" {
			return "", fmt.Errorf("cpu: bench: %s: %s", e.name, msg)
		}
		files[filepath.Join(e.pkg, e.pkg+".go")] = src
		if asm != nil {
			files[filepath.Join(e.pkg, asmFile(e.pkg, b.Target))] = asm
		}
	}
	table, err := renderTable(rows)
	if err != nil {
		return "", err
	}
	files["table.go"] = table
	if err := writeHarness(dir); err != nil {
		return "", err
	}
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", fmt.Errorf("cpu: bench: %w", err)
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return "", fmt.Errorf("cpu: bench: %w", err)
		}
	}
	bin := filepath.Join(dir, "bench")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	bd := &builder{goCmd: goCmd, dir: dir, cgo: cgo}
	if out, err := bd.goBuild(ctx, bin); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("cpu: bench interrupted: %w", ctx.Err())
		}
		return "", fmt.Errorf("cpu: bench: go build failed: %w\n%s", err, clip(string(out)))
	}
	return bin, nil
}

// runBench runs the bench harness and returns a result per entry with its
// samples, calls per sample and allocations filled in. See Bench and
// renderBenchHarness for what the harness does; its protocol is the tuner's
// (the package documentation), with a round event per round:
//
//	{"id":-1,"event":"ready"}
//	{"id":1,"event":"start"}                          entry 1 is checked, measured and calibrated
//	{"id":1,"event":"result","status":"ok","reps":2,"alloc_bytes":4194304,"allocs":1}
//	{"id":1,"event":"result","status":"wrong_answer","error":"out[3] = ..."}
//	{"id":-1,"event":"round","samples_ns":[812.5,...]}  a sample of each entry, in entry order
//	{"id":-1,"event":"done"}
//
// After a failed check the harness times nothing and says done.
func (m *Measurer) runBench(ctx context.Context, bin, dir string, b BenchBatch, entries []benchEntry) ([]BenchResult, [][]harness.Sample, error) {
	cmd := emul.Command(bin,
		"-"+flagBench,
		"-"+flagData, dir,
		"-"+flagWarmup, strconv.Itoa(m.opts.Warmup),
		"-"+flagSamples, strconv.Itoa(b.MinSamples),
		"-"+flagMinTime, b.MinTime.String(),
		"-"+flagMinSample, m.opts.MinSampleTime.String(),
	)
	cmd.Dir = dir
	cmd.Env = m.opts.harnessEnv()
	h, err := startHarness(cmd)
	if err != nil {
		return nil, nil, err
	}
	step := benchStepTimeout
	if m.opts.Timeout > 0 {
		step = m.opts.Timeout
	}
	timer := time.NewTimer(max(startupTimeout, step))
	defer timer.Stop()

	res := make([]BenchResult, len(entries))
	var usage [][]harness.Sample // per round, what each entry's sample used; nil rounds when unknown
	var failures []string
	var seq harness.Sequence
	// phase says what the harness was doing, for errors.
	phase := func() string {
		cur, running := seq.Running()
		switch {
		case !seq.Ready():
			return "while loading the inputs"
		case running:
			return "while checking " + entries[cur].name
		}
		return "while timing"
	}
	for {
		select {
		case <-ctx.Done():
			h.stop()
			return nil, nil, fmt.Errorf("cpu: bench interrupted: %w", ctx.Err())

		case <-timer.C:
			h.stop()
			return nil, nil, fmt.Errorf("cpu: bench: the harness stalled %s for %v; stderr:\n%s", phase(), step, h.stderr.String())

		case line, ok := <-h.lines:
			if !ok {
				werr := cmd.Wait()
				switch {
				case h.scanErr != nil:
					return nil, nil, fmt.Errorf("cpu: bench: reading the harness's output: %w", h.scanErr)
				case !seq.Done() || werr != nil:
					return nil, nil, fmt.Errorf("cpu: bench: the harness died %s: %s\n%s", phase(), exitText(cmd, werr), h.stderr.String())
				case len(failures) > 0:
					return nil, nil, fmt.Errorf("cpu: bench: %s", strings.Join(failures, "; "))
				}
				return res, usage, nil
			}
			e, ok := harness.Decode(line)
			if !ok {
				continue // stray output, from a kernel that wrote to fd 1
			}
			timer.Reset(step)
			err := seq.Next(e)
			switch {
			case err != nil:
			case e.Event == harness.Start && (e.ID != seq.Started()-1 || e.ID >= len(entries)):
				err = fmt.Errorf("entry %d started out of order", e.ID)
			case e.Event == harness.Result && e.Status == harness.StatusOK:
				if e.Reps <= 0 {
					err = fmt.Errorf("an ok result without calls per sample")
					break
				}
				res[e.ID].Reps, res[e.ID].AllocBytes, res[e.ID].Allocs = e.Reps, e.AllocBytes, e.Allocs
			case e.Event == harness.Result:
				failures = append(failures, fmt.Sprintf("%s: %s: %s", entries[e.ID].name, e.Status, firstLine(e.Error)))
			case e.Event == harness.Round && (seq.Started() != len(entries) || len(failures) > 0 || len(e.SamplesNS) != len(entries)):
				err = fmt.Errorf("a round of %d samples after %d of %d entries and %d failures",
					len(e.SamplesNS), seq.Started(), len(entries), len(failures))
			case e.Event == harness.Round:
				for i, s := range e.SamplesNS {
					res[i].SamplesNS = append(res[i].SamplesNS, s)
				}
				if len(e.Usage) != len(entries) {
					e.Usage = nil
				}
				usage = append(usage, e.Usage)
			case e.Event == harness.Done && len(failures) == 0 && (seq.Started() != len(entries) || len(res[0].SamplesNS) < b.MinSamples):
				err = fmt.Errorf("done after %d of %d entries and %d rounds, want %d",
					seq.Started(), len(entries), len(res[0].SamplesNS), b.MinSamples)
			}
			if err != nil {
				h.stop()
				return nil, nil, fmt.Errorf("cpu: bench: harness protocol: %v: %s", err, line)
			}
		}
	}
}

// dropDisturbed leaves out of res the rounds in which any entry's sample
// was disturbed (harness.Judge over each entry's samples: a tenth of its
// time lost, in CPU time against its least disturbed samples), so that a
// bench's medians, like tuning's, come from samples that had the machine:
// a bench spans a second or more of interleaved rounds, and on a busy
// machine that takes in far more disturbance than tuning's short runs of
// samples, which drop theirs. Rounds go whole, so that every entry keeps
// as many samples, side by side. Every round stays when fewer than
// minSamples would be left, or when usage is unknown for any round.
func dropDisturbed(res []BenchResult, usage [][]harness.Sample, minSamples int) {
	for i := range res {
		res[i].Rounds = len(usage)
	}
	if len(usage) == 0 || slices.ContainsFunc(usage, func(u []harness.Sample) bool { return u == nil }) {
		return
	}
	bad := make([]bool, len(usage))
	for i := range res {
		entry := make([]harness.Sample, len(usage))
		for r, u := range usage {
			entry[r] = u[i]
		}
		disturbed, _ := harness.Judge(entry, 0)
		for r, d := range disturbed {
			bad[r] = bad[r] || d
		}
	}
	dropped := 0
	for _, b := range bad {
		if b {
			dropped++
		}
	}
	if len(usage)-dropped < max(minSamples, 1) {
		return
	}
	for i := range res {
		var kept []float64
		for r, ns := range res[i].SamplesNS {
			if !bad[r] {
				kept = append(kept, ns)
			}
		}
		res[i].SamplesNS, res[i].Dropped = kept, dropped
	}
}

// harnessEnv is the environment of the tuning and bench harnesses: this
// process's, then Options.Env, with asynchronous preemption off in GODEBUG
// (harnessGODEBUG).
func (o Options) harnessEnv() []string {
	env := append(os.Environ(), o.Env...)
	godebug := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			godebug = v // the last one is the one a process gets
		}
	}
	return append(env, "GODEBUG="+harnessGODEBUG(godebug))
}

// harnessGODEBUG is the GODEBUG of the tuning and bench harnesses: d,
// with asynchronous preemption off. Built with GOEXPERIMENT=simd on an AVX-512
// machine, Go 1.26 leaves the upper halves of the vector registers dirty when
// it resumes a preempted goroutine, and until something clears them every
// legacy-SSE instruction pays a transition penalty: math.Exp's assembly
// among them. Preempted every 10ms, the naive softmax at 4096×1024 ran 3.3×
// slower than the same code built without the experiment (217 against
// 66 ms), which would have credited the tuned kernel with a speed-up that
// is the runtime's doing. Without async preemption it runs as fast as in a
// normal build; the vector kernels, which use no legacy SSE, are not
// affected either way, and no candidate needs preempting: the harness's
// other goroutines only wait, and a hanging candidate is killed from
// outside.
func harnessGODEBUG(d string) string {
	if d != "" {
		return d + ",asyncpreemptoff=1"
	}
	return "asyncpreemptoff=1"
}

// firstLine returns the first line of s: a wrong answer's message, or a
// panic without its stack.
func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

// knownWrong returns the indices of the input sets of t for dt that baseline bl
// is not checked on (kernels.Baseline.KnownWrong) and its doc, which then
// says so. It fails on a name that is not a set of t, or on the first
// set, the one bench times, for a float32 baseline: only a 16-bit one may
// be wrong on every set.
func knownWrong(t kernels.Template, bl kernels.Baseline, dt dtype.DType) (skip []int, doc string, err error) {
	if len(bl.KnownWrong) == 0 {
		return nil, bl.Doc, nil
	}
	sets := t.InputSetsFor(dt)
	for _, name := range bl.KnownWrong {
		i := slices.IndexFunc(sets, func(s kernels.InputSet) bool { return s.Name == name })
		switch {
		case i < 0:
			return nil, "", fmt.Errorf("cpu: bench: baseline %s of %s: known wrong on %q, which is not an input set of %s", bl.Name, t.Op.Name, name, dt)
		case i == 0 && bl.DType.Size() != 2:
			return nil, "", fmt.Errorf("cpu: bench: baseline %s of %s: known wrong on %q, the input set bench times", bl.Name, t.Op.Name, name)
		}
		skip = append(skip, i)
	}
	return skip, fmt.Sprintf("%s; not checked on the inputs %s, where it is wrong", bl.Doc, strings.Join(bl.KnownWrong, ", ")), nil
}
