package emu

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
	"github.com/autotune-dev/autotune/schedule"
)

// Checker runs configs of a CUDA template through the PTX check and the
// emulation. The zero value finds its compilers and workers itself; a
// Checker is not safe for concurrent use.
type Checker struct {
	// CXX and Clang are the compilers; "" finds them (FindCXX, FindClang).
	// NoPTX or NoEmu skip a check.
	CXX, Clang   string
	NoPTX, NoEmu bool
	// Command starts a worker; nothing is appended. Default: this
	// executable with WorkerArg.
	Command []string
	// Timeout bounds one emulated kernel, every order of it. Default 60s.
	Timeout time.Duration
	// Seed fixes the inputs (measure.NewData) and the shuffled orders.
	Seed uint64
	// DType is the element type of the inputs and output; "" means
	// dtype.Default.
	DType dtype.DType
	// Orders to run; default Orders.
	Orders []Order
}

// Outcome is the result of one check of one config: OK, or why not.
type Outcome struct {
	OK      bool   `json:"ok"`
	Skipped string `json:"skipped,omitempty"` // why the check did not run
	Error   string `json:"error,omitempty"`   // what went wrong
}

func (o Outcome) String() string {
	switch {
	case o.Skipped != "":
		return "skipped: " + o.Skipped
	case o.OK:
		return "ok"
	}
	return o.Error
}

// Report is what the checks found for one config.
type Report struct {
	Config schedule.Config `json:"config"`
	PTX    Outcome         `json:"ptx"`
	Emu    Outcome         `json:"emulation"`
}

// Passed reports whether every check that ran passed and at least one ran.
func (r Report) Passed() bool {
	ran := r.PTX.Skipped == "" || r.Emu.Skipped == ""
	return ran && (r.PTX.OK || r.PTX.Skipped != "") && (r.Emu.OK || r.Emu.Skipped != "")
}

func (c *Checker) setup() error {
	if c.CXX == "" && !c.NoEmu {
		cxx, err := FindCXX()
		if err != nil {
			return err
		}
		c.CXX = cxx
	}
	if c.Clang == "" && !c.NoPTX {
		clang, err := FindClang()
		if err != nil {
			return err
		}
		c.Clang = clang
	}
	if c.Command == nil {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("emu: finding this executable to start workers: %w", err)
		}
		c.Command = []string{exe, WorkerArg}
	}
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	if c.Orders == nil {
		c.Orders = Orders
	}
	return nil
}

// Check emits the kernel of each config of tmpl for shape on target (a
// CUDA architecture), compiles it to PTX and runs it under emulation, and
// returns a Report per config, in order; each is called with progress,
// when set, as it is done. The error is the machinery's: a compiler that
// is missing (wrapping ErrNoCompiler), a worker that cannot start, ctx
// done.
func (c *Checker) Check(ctx context.Context, tmpl kernels.Template, shape []int, target device.Target,
	cfgs []schedule.Config, progress func(i int, r Report)) ([]Report, error) {
	return c.check(ctx, tmpl, shape, target, cfgs, progress, false)
}

// CheckGeneric is Check of the shape-generic kernel of each config (a
// valid point of the space of some shape, not necessarily of shape's), run
// with shape's extents as its arguments and the launch its
// kernels.CUDALaunch computes for them; a shape the kernel does not serve
// is its error.
func (c *Checker) CheckGeneric(ctx context.Context, tmpl kernels.Template, shape []int, target device.Target,
	cfgs []schedule.Config, progress func(i int, r Report)) ([]Report, error) {
	return c.check(ctx, tmpl, shape, target, cfgs, progress, true)
}

func (c *Checker) check(ctx context.Context, tmpl kernels.Template, shape []int, target device.Target,
	cfgs []schedule.Config, progress func(i int, r Report), generic bool) ([]Report, error) {
	if tmpl.CUDA == nil || !target.IsCUDA() {
		return nil, fmt.Errorf("emu: %s is not a CUDA template or %s not a CUDA target", tmpl.Op.Name, target.Name)
	}
	if err := c.setup(); err != nil {
		return nil, err
	}
	dt := cmp.Or(c.DType, dtype.Default)
	ins, want, err := measure.NewData(ctx, tmpl.Op, shape, dt, c.Seed)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	rel, abs := tmpl.Tolerance(shape, dt)
	space := tmpl.Space(shape, target)
	name := tmpl.Op.Name + "_" + strings.ReplaceAll(kernels.FormatShape(shape), "x", "by")

	var reports []Report
	for i, cfg := range cfgs {
		if err := ctx.Err(); err != nil {
			return reports, fmt.Errorf("emu: %w", err)
		}
		r := Report{Config: cfg}
		kn := kernels.Kernel{Name: name, Shape: shape, DType: dt, Config: cfg}
		if generic {
			kn.Shape = nil
		}
		if err := space.Check(cfg); err != nil && !generic {
			r.PTX = Outcome{Error: "invalid config: " + err.Error()}
			r.Emu = r.PTX
		} else if k, err := emit(tmpl, kn); err != nil {
			r.PTX = Outcome{Error: err.Error()}
			r.Emu = r.PTX
		} else {
			if r.PTX, err = c.PTX(ctx, k, target.GPU.Arch); err != nil {
				return reports, err
			}
			set := measure.InputSet{Ins: ins, Want: want, Rel: rel, Abs: abs}
			if r.Emu, err = c.EmulateAt(ctx, k, shape, target.GPU.Arch, []measure.InputSet{set}); err != nil {
				return reports, err
			}
		}
		reports = append(reports, r)
		if progress != nil {
			progress(i, r)
		}
	}
	return reports, nil
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

// PTX compiles k to PTX for arch with clang.
func (c *Checker) PTX(ctx context.Context, k kernels.CUDAKernel, arch string) (Outcome, error) {
	if err := c.setup(); err != nil {
		return Outcome{}, err
	}
	if c.NoPTX {
		return Outcome{Skipped: "not asked for"}, nil
	}
	dir, err := os.MkdirTemp("", "autotune-ptx-")
	if err != nil {
		return Outcome{}, fmt.Errorf("emu: %w", err)
	}
	defer os.RemoveAll(dir)
	_, err = PTX(ctx, c.Clang, k, arch, dir)
	var pe *PTXError
	switch {
	case errors.As(err, &pe):
		return Outcome{Error: strings.TrimSpace(pe.Log)}, nil
	case err != nil:
		return Outcome{}, err
	}
	return Outcome{OK: true}, nil
}

// Emulate builds k (with __CUDA_ARCH__ of arch) and runs it in a worker
// on ins, the kernel's inputs in order, in every order of c.Orders; the
// outputs must agree bitwise and be within rel and abs of want. The
// kernel's buffers hold elements of c.DType: for bf16 and f16 the inputs
// (which must be representable) are stored as their bits and the output,
// poisoned with 0xffff (NaN in both), is decoded for the check. The error
// is the machinery's.
func (c *Checker) Emulate(ctx context.Context, k kernels.CUDAKernel, arch string, ins [][]float32, want []float64, rel, abs float64) (Outcome, error) {
	return c.EmulateSets(ctx, k, arch, []measure.InputSet{{Ins: ins, Want: want, Rel: rel, Abs: abs}})
}

// EmulateSets is Emulate on each of sets in turn, with one build: the
// first that fails is the outcome, its error prefixed by the set's name.
func (c *Checker) EmulateSets(ctx context.Context, k kernels.CUDAKernel, arch string, sets []measure.InputSet) (Outcome, error) {
	return c.EmulateAt(ctx, k, nil, arch, sets)
}

// EmulateAt is EmulateSets of a kernel that may be shape-generic: one is
// launched with the extents of shape as its arguments, and the grid and
// shared memory its Generic computes for them.
func (c *Checker) EmulateAt(ctx context.Context, k kernels.CUDAKernel, shape []int, arch string, sets []measure.InputSet) (Outcome, error) {
	if err := c.setup(); err != nil {
		return Outcome{}, err
	}
	if c.NoEmu {
		return Outcome{Skipped: "not asked for"}, nil
	}
	l, err := launchAt(k, shape)
	if err != nil {
		return Outcome{Error: err.Error()}, nil
	}
	dir, err := os.MkdirTemp("", "autotune-emu-")
	if err != nil {
		return Outcome{}, fmt.Errorf("emu: %w", err)
	}
	defer os.RemoveAll(dir)
	lib, err := Build(ctx, c.CXX, k, arch, dir)
	var be *BuildError
	switch {
	case errors.As(err, &be):
		return Outcome{Error: "does not compile as C++: " + strings.TrimSpace(strings.ReplaceAll(be.Log, dir+string(filepath.Separator), ""))}, nil
	case err != nil:
		return Outcome{}, err
	}
	for _, set := range sets {
		o, err := c.emulateSet(ctx, l, lib, dir, set)
		if err != nil || !o.OK {
			if set.Name != "" {
				o.Error = "input set " + set.Name + ": " + o.Error
			}
			return o, err
		}
	}
	return Outcome{OK: true}, nil
}

// launch is how a job launches its kernel.
type launch struct {
	grid, block [3]int
	shared      int
	extents     []int32 // a shape-generic kernel's last arguments
}

// launchAt returns k's launch: its own, or for a shape-generic kernel the
// one for shape.
func launchAt(k kernels.CUDAKernel, shape []int) (launch, error) {
	if k.Generic == nil {
		return launch{grid: k.Grid, block: k.Block, shared: k.SharedBytes}, nil
	}
	if shape == nil {
		return launch{}, errors.New("a shape-generic kernel needs a shape to run")
	}
	grid, shared, err := k.Generic.At(shape)
	if err != nil {
		return launch{}, fmt.Errorf("launch: %w", err)
	}
	l := launch{grid: grid, block: k.Generic.Block, shared: shared}
	for _, d := range shape {
		l.extents = append(l.extents, int32(d))
	}
	return l, nil
}

// emulateSet runs lib, built in dir, on set with the launch l.
func (c *Checker) emulateSet(ctx context.Context, l launch, lib, dir string, set measure.InputSet) (Outcome, error) {
	ins, want, rel, abs := set.Ins, set.Want, set.Rel, set.Abs
	var inLens []int
	dt := cmp.Or(c.DType, dtype.Default)
	for i, in := range ins {
		if err := os.WriteFile(filepath.Join(dir, inputFile(i)), dt.AppendBytes(nil, in), 0o644); err != nil {
			return Outcome{}, fmt.Errorf("emu: %w", err)
		}
		inLens = append(inLens, len(in))
	}
	j := job{Lib: lib, Grid: l.grid, Block: l.block, SharedBytes: l.shared, Extents: l.extents, Dir: dir,
		InLens: inLens, OutLen: len(want), ElemSize: dt.Size(), Orders: c.Orders, Seed: c.Seed}
	r, failure, err := c.runWorker(ctx, j)
	switch {
	case err != nil:
		return Outcome{}, err
	case failure != "":
		return Outcome{Error: failure}, nil
	case r.Error != "":
		return Outcome{Error: fmt.Sprintf("%s (%s)", r.Error, c.Orders[r.Order])}, nil
	case r.Wrote != "":
		return Outcome{Error: fmt.Sprintf("wrote past the end of %s (%s)", r.Wrote, c.Orders[r.Order])}, nil
	}
	outs := make([][]float32, len(c.Orders))
	for i := range c.Orders {
		outs[i] = make([]float32, len(want))
		b, err := os.ReadFile(filepath.Join(dir, outputFile(i)))
		if err == nil {
			err = dt.DecodeBytes(outs[i], b)
		}
		if err != nil {
			return Outcome{}, fmt.Errorf("emu: the worker's output: %w", err)
		}
	}
	for i := 1; i < len(outs); i++ {
		if r.FloatAtomics {
			// Atomic float additions sum in the order blocks run: each
			// order need only be right.
			if msg := harness.Check(outs[i], want, rel, abs); msg != "" {
				return Outcome{Error: fmt.Sprintf("wrong with %s: %s", c.Orders[i], msg)}, nil
			}
			continue
		}
		if d := firstDiff(outs[0], outs[i]); d >= 0 {
			return Outcome{Error: fmt.Sprintf("the result depends on the order (a race?): out[%d] = %v with %s, %v with %s",
				d, outs[0][d], c.Orders[0], outs[i][d], c.Orders[i])}, nil
		}
	}
	if msg := harness.Check(outs[0], want, rel, abs); msg != "" {
		return Outcome{Error: "wrong: " + msg}, nil
	}
	return Outcome{OK: true}, nil
}

// firstDiff returns the first index where a and b differ bitwise, or -1.
func firstDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// runWorker runs j in a worker process. failure describes a worker that
// crashed (an out-of-bounds access, reported by emu.h on stderr) or ran
// past the timeout; err is the machinery's.
func (c *Checker) runWorker(ctx context.Context, j job) (r reply, failure string, err error) {
	in, err := json.Marshal(j)
	if err != nil {
		return r, "", fmt.Errorf("emu: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, c.Command[0], c.Command[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return r, "", fmt.Errorf("emu: %w", ctx.Err())
	}
	if tctx.Err() != nil {
		return r, fmt.Sprintf("timeout: the emulated kernel ran longer than %v (an endless loop?)", c.Timeout), nil
	}
	tail := strings.TrimSpace(stderr.String())
	if len(tail) > 2000 {
		tail = tail[:2000] + "..."
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return r, "", fmt.Errorf("emu: starting a worker: %w", runErr)
		}
		if strings.HasPrefix(tail, "emu: ") {
			return r, "crash: " + strings.TrimPrefix(tail, "emu: "), nil
		}
		if strings.HasPrefix(tail, "emu worker: ") {
			return r, "", errors.New(tail)
		}
		return r, fmt.Sprintf("crash: the worker died (%v): %s", runErr, tail), nil
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return r, "", fmt.Errorf("emu: the worker's reply %.200q: %w", stdout.String(), err)
	}
	return r, "", nil
}
