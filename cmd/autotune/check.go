package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/schedule"
)

var checkCommand = command{
	name:    "check",
	summary: "check generated kernels against the reference, without timing (no GPU needed)",
	help: `
Usage: autotune check --op OP --shape SHAPE --device DEV [--dtype DTYPE] [--configs N] [--seed S] [--json]

Checks the code the op's template generates for one workload, config by
config: the first valid config and N more: the template's default, then
configs drawn at random with the seed.
Inputs are seeded random values (never zeros) rounded to --dtype, the
output is poisoned with NaN, and the result is compared with the op's
float64 reference, computed from the rounded inputs, within its tolerance
for the dtype; the first wrong element is printed with what it should be.

On a CUDA device (sm_XX) no GPU is used. Each kernel is
  - compiled to PTX for that architecture with clang (Debian: apt-get
    install clang-19), which catches code only a GPU compiler rejects, and
  - compiled with g++ against autotune's emulator of the CUDA execution
    model and run on the CPU: a fiber per thread, __syncthreads as a
    barrier that reports threads that never reach it, exact warp
    shuffles, shared memory filled with NaN, buffers between guard pages,
    and blocks and threads run forward, reversed and shuffled, which must
    all give the same bits (a race does not).
On --device cpu each kernel is built and checked as 'tune' would, without
timing.

A workload too large for the harness is refused, as tune refuses it. The
float64 reference and the emulator are slow (attention 1x1x100000x64 takes
hours), so a check expected to take over 10 s says how long before it
starts; SIGINT, SIGTERM and SIGHUP stop it at once (exit 128+signal).

Exit status: 0 when every config passes, 1 when one fails (or a compiler
is missing), 2 on a usage error.

Examples:
  autotune check --op softmax --shape 33x1023 --device sm_86
  autotune check --op softmax --shape 1x1 --device sm_90 --configs 20 --seed 7
  autotune check --op softmax --shape 7x4099 --device sm_80 --json
  autotune check --op gemm --shape 67x129x33 --device cpu --configs 3
`,
	run: runCheck,
}

type checkOptions struct {
	workloadFlags
	configs      int
	seed         uint64
	json         bool
	noPTX, noEmu bool
	timeout      time.Duration
}

func runCheck(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o checkOptions
	o.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.device == "auto" && !isSet(fs, "device") {
		return usagef("--device is required: cpu or a CUDA architecture such as sm_86")
	}
	w, err := o.resolve()
	if err != nil {
		return err
	}
	switch {
	case o.configs < 0:
		return usagef("--configs must not be negative, not %d", o.configs)
	case o.noPTX && o.noEmu:
		return usagef("--no-ptx and --no-emu leave nothing to check")
	case o.timeout <= 0:
		return usagef("--timeout must be positive")
	}
	tmpl, err := tunable(w, "check")
	if err != nil {
		return err
	}
	// The configs a search of the dtype explores: not those whose kernel
	// in it is another config's, or cannot run on the target.
	space := tmpl.SearchSpace(w.shape, w.dtype, w.target)
	def, _ := tmpl.DefaultConfig(w.shape, w.target)
	cfgs, err := pickConfigs(space, def, o.seed, o.configs)
	if err != nil {
		return fmt.Errorf("%s %s on %s: %v", w.op.Name, kernels.FormatShape(w.shape), w.target, err)
	}
	ctx, caught, stop := signalContext()
	defer stop()
	fmt.Fprintf(std.errs, "checking %d configs of %s (seed %d)\n", len(cfgs), describeWorkload(w), o.seed)
	if est := estimateCheck(tmpl, w, o, len(cfgs)); est.total() >= longCheck {
		fmt.Fprintf(std.errs, "%s\n", est)
	}

	out := checkJSON{Op: w.op.Name, Shape: w.shape, Device: w.target.Name, Template: tmpl.Version, Seed: o.seed}
	show := func(i int, r checkResult) {
		out.Configs = append(out.Configs, r)
		if r.passed() {
			out.Passed++
		} else {
			out.Failed++
		}
		if !o.json {
			printCheck(std, i, len(cfgs), w.target.Name, r)
		}
	}
	if w.target.IsCUDA() {
		ch := &emu.Checker{Seed: o.seed, DType: w.dtype, NoPTX: o.noPTX, NoEmu: o.noEmu, Timeout: o.timeout}
		_, err = ch.Check(ctx, tmpl, w.shape, w.target, cfgs, func(i int, r emu.Report) {
			ptx, em := r.PTX, r.Emu
			show(i, checkResult{Config: r.Config, PTX: &ptx, Emu: &em})
		})
	} else {
		err = checkCPU(ctx, tmpl, w, o, cfgs, show)
	}
	if sig := caught(); sig != nil {
		// The configs checked before the signal were printed as they
		// finished; nothing else is kept.
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	if o.json {
		if err := writeJSON(std, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(std.out, "%d configs: %d passed, %d failed\n", len(cfgs), out.Passed, out.Failed)
	}
	if out.Failed > 0 {
		return fmt.Errorf("%d of %d configs of %s failed", out.Failed, len(cfgs), describeWorkload(w))
	}
	return nil
}

// longCheck is how long a check runs before it is worth warning about.
const longCheck = 10 * time.Second

// Rough rates of check's work on one core of a 2020s x86 server, measured
// on attention, gemm and softmax: the float64 reference (every input set,
// with the inputs drawn), and one config's emulated CUDA runs (all their
// orders). They give the order of magnitude a user needs to decide whether
// to wait, not a promise.
const (
	refFLOPs    = 1.5e9 // per second
	refPerValue = 40 * time.Nanosecond
	emuFLOPs    = 2e8 // per second
	emuPerValue = 100 * time.Nanosecond
)

// checkEstimate is how long check expects to take: the reference once, and
// the emulated runs of each config (0 on the CPU, where a kernel runs at
// full speed and its build dominates).
type checkEstimate struct {
	reference, emulation time.Duration
	configs              int
}

func estimateCheck(tmpl kernels.Template, w workload, o checkOptions, configs int) checkEstimate {
	ins, out := tmpl.Args(w.shape)
	values := float64(out)
	for _, n := range ins {
		values += float64(n)
	}
	flops := tmpl.FLOPs(w.shape)
	e := checkEstimate{configs: configs}
	e.reference = seconds(flops/refFLOPs) + time.Duration(values)*refPerValue
	if w.target.IsCUDA() && !o.noEmu {
		e.emulation = time.Duration(configs) * (seconds(flops/emuFLOPs) + time.Duration(values)*emuPerValue)
	}
	return e
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (e checkEstimate) total() time.Duration { return e.reference + e.emulation }

func (e checkEstimate) String() string {
	msg := fmt.Sprintf("this will take about %s: the float64 reference about %s", roughly(e.total()), roughly(e.reference))
	if e.emulation > 0 {
		msg += fmt.Sprintf(", the emulated runs of %d configs about %s", e.configs, roughly(e.emulation))
	}
	return msg + " (Ctrl-C stops it)"
}

// roughly rounds d to the precision of an estimate: seconds under a
// minute, minutes above.
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

func (o *checkOptions) register(fs *flag.FlagSet) {
	o.workloadFlags.register(fs)
	fs.IntVar(&o.configs, "configs", 5, "check the first valid config and N more: the default, then drawn at random")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the configs drawn, the inputs and the shuffled orders")
	fs.BoolVar(&o.json, "json", false, "print the results as one JSON object")
	fs.BoolVar(&o.noPTX, "no-ptx", false, "CUDA: skip the PTX check (no clang needed)")
	fs.BoolVar(&o.noEmu, "no-emu", false, "CUDA: skip the emulated run (no g++ needed)")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "the longest one kernel may run, all its orders together")
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// pickConfigs returns the space's first valid config and then up to n
// distinct others: the template's default def (what runs untuned) where
// it is another valid config, then configs drawn with seed.
func pickConfigs(space *schedule.Space, def schedule.Config, seed uint64, n int) ([]schedule.Config, error) {
	var out []schedule.Config
	seen := map[string]bool{}
	for i := range space.Size() {
		if c := space.At(i); space.Valid(c) {
			out, seen[c.String()] = append(out, c), true
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no valid config")
	}
	if n > 0 && def.Len() > 0 && space.Valid(def) && !seen[def.String()] {
		out, seen[def.String()] = append(out, def), true
	}
	r := rand.New(rand.NewPCG(seed, 0x636865636b)) // "check"
	for tries := 0; len(out) < n+1 && tries < 50*(n+1); tries++ {
		c, err := space.Sample(r)
		if err != nil {
			return nil, err
		}
		if !seen[c.String()] {
			out, seen[c.String()] = append(out, c), true
		}
	}
	return out, nil
}

// checkCPU builds and checks cfgs with the CPU measurer, timing each as
// little as it allows.
func checkCPU(ctx context.Context, tmpl kernels.Template, w workload, o checkOptions, cfgs []schedule.Config, show func(int, checkResult)) error {
	m := cpu.New(&cpu.Options{Seed: o.seed, Warmup: 1, MinSamples: 1, MinTime: time.Nanosecond,
		MinSampleTime: time.Nanosecond, SlowSamples: 1, Timeout: o.timeout})
	res, err := m.Measure(ctx, measure.Batch{Template: tmpl, Shape: w.shape, DType: w.dtype, Target: w.target, Configs: cfgs})
	for i, r := range res {
		oc := emu.Outcome{OK: r.Status == measure.StatusOK}
		if !oc.OK {
			oc.Error = fmt.Sprintf("%s: %s", r.Status, r.Error)
		}
		show(i, checkResult{Config: r.Config, CPU: &oc})
	}
	return err
}

type checkResult struct {
	Config schedule.Config `json:"config"`
	PTX    *emu.Outcome    `json:"ptx,omitempty"`
	Emu    *emu.Outcome    `json:"emulation,omitempty"`
	CPU    *emu.Outcome    `json:"cpu,omitempty"`
}

func (r checkResult) passed() bool {
	for _, o := range []*emu.Outcome{r.PTX, r.Emu, r.CPU} {
		if o != nil && !o.OK && o.Skipped == "" {
			return false
		}
	}
	return true
}

type checkJSON struct {
	Op       string        `json:"op"`
	Shape    []int         `json:"shape"`
	Device   string        `json:"device"`
	Template string        `json:"template"`
	Seed     uint64        `json:"seed"`
	Configs  []checkResult `json:"configs"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
}

func printCheck(std *stdio, i, n int, arch string, r checkResult) {
	label := ""
	if i == 0 {
		label = " (first valid)"
	}
	fmt.Fprintf(std.out, "[%d/%d] %s%s\n", i+1, n, r.Config, label)
	line := func(name string, o *emu.Outcome) {
		if o != nil {
			fmt.Fprintf(std.out, "  %-10s %s\n", name, indent(o.String(), "             "))
		}
	}
	line("ptx "+arch, r.PTX)
	line("emulated", r.Emu)
	line("cpu", r.CPU)
}

// indent indents every line of s but the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+prefix)
}
