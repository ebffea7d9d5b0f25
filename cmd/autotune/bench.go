package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	measurecpu "github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/report"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var benchCommand = command{
	name:    "bench",
	summary: "compare the tuned kernel with baselines, side by side",
	help: strings.Replace(`
Usage: autotune bench --op OP --shape SHAPE [--dtype DTYPE] [--device DEV] [flags]

Runs the best tuned kernel of a workload from the tuning database next to
the op's baselines (below), an FMA peak (independent fused multiply-adds
in assembly on the widest vectors the CPU has, one goroutine per core; for
bf16 on a CPU with AVX512-BF16, VDPBF16PS's instead, two multiply-adds a
lane, which gemm's convert=dot and oneDNN's bf16 matmul run) and
a memory floor (a copy of the input to the output, with as many goroutines
as the tuned kernel uses), in one process, interleaved: each round times one sample of every
entry, in a rotating order, each after 10 ms of untimed calls of the
entry, at least one (so that, as in tuning, its goroutines are awake, its
data in the caches and the cores settled after the entry before it),
until each has --samples samples and all of them add up to --time. An
entry's samples that were disturbed (a tenth of their time lost to other
work, in CPU time against its other samples: docs/measuring.md) are made up for
with more rounds, up to as many again, and rounds with a disturbed
sample are left out when --samples others remain; the samples line says
how many. The tuned kernel and the baselines are first
checked against the float64 reference. Prints each entry's median time,
p20–p80 spread, GB/s, GFLOP/s, its time as a multiple of the tuned
kernel's and what a call allocates (ALLOC), with the tuned config, the
machine and the tuned kernel's fraction of the peak. The peak is the peak
loop's best sample (peak_gflops in --json); where a kernel's median is
faster, the loop fell short of the machine, the peak is that median
instead and the output says so (peak_note), so no kernel shows more than
100% of it.

ALLOC (alloc_bytes and allocs in --json) is what one call allocates on the
Go heap, on all its goroutines, beyond the inputs and the output, which the
harness holds: the runtime's count of bytes allocated (TotalAlloc, rounded
up to its size classes) across an untimed call after the check, the fewer
of two, with the collector off. It bounds what a call adds to the peak heap,
and is exactly that for an entry that allocates once, such as the attention
baselines with their S×S scores. Not counted: goroutine stacks (state a
kernel keeps in local variables is free here unless the compiler moves it
to the heap for its size: a variable over 128 KiB, or 64 KiB from new or
make), and memory a C library allocates (OpenBLAS's buffers).

Baselines, by op (the gemm ones for gemm_bias and gemm_bias_relu too, each
followed by a Go loop for the epilogue but onednn; the attention ones for
attention_causal too, masked):
  softmax    naive     plain Go, three loops per row with math.Exp
             onednn    oneDNN's softmax primitive
             onednn-bf16, onednn-f16
                       the same on 16-bit buffers (below)
  gemm       naive     plain Go i-k-j loops, one goroutine; left out above
                       2e10 FLOPs
             gonum     gonum's blas32.Gemm
             openblas  OpenBLAS's cblas_sgemm through gonum.org/v1/netlib,
                       on OpenBLAS's threads
             libxsmm   libxsmm's kernel for the shape (column-major, so
                       cᵀ = bᵀ·aᵀ), on one thread; left out when M, N or K
                       is over 128
             onednn    oneDNN's matmul primitive; for gemm_bias and
                       gemm_bias_relu with the bias and ReLU fused (bias
                       argument, eltwise post-op) instead of a Go loop
             onednn-bf16, onednn-f16
                       the same on 16-bit matrices (below)
  attention  naive     plain Go loops: per head, the S×S scores, a softmax
                       per row, the weights times V; one goroutine; left out
                       above 2e10 FLOPs
             gonum     per head, blas32.Gemm for Q·Kᵀ/√D into an S×S buffer,
                       a plain softmax per row, blas32.Gemm for the weights
                       times V; causal: the full product, masked
             openblas  gonum's composition on OpenBLAS's cblas_sgemm
             onednn    oneDNN's batched matmul for Q·Kᵀ/√D over all heads
                       (causal: the mask added by a post-op), its softmax in
                       place, its batched matmul for the weights times V
             onednn-bf16, onednn-f16
                       the same with every buffer 16-bit (below)
@other baselines@
  With --dtype bf16 or f16 the tuned kernel reads and writes 16 bits;
  the baselines above are float32 and run on the same values, and
  tuned-f32, the tuned f32 kernel of the same shape when the database has
  one, shows what half precision gains. The floor then copies 16-bit
  elements. onednn-bf16 and onednn-f16 (softmax, gemm and its epilogues,
  attention, layernorm) run oneDNN's own primitives on the 16-bit
  buffers, f32 accumulation inside, attention's scores in the 16-bit
  type too, layernorm's gamma and beta widened to f32 each call; each
  is left out, saying why, where oneDNN lacks the primitive on this CPU
  (asked at run time: oneDNN 2.6 has bf16 only with AVX-512, none at
  --isa avx2, and f16 only with AVX512-FP16). onednn-bf16 softmax is
  checked on constant rows only and attention not at all: they round
  intermediates to bf16 (softmax writes exp(x-max) to its output and
  scales it there), beyond the tolerance of one rounding; their lines
  say so.
  The attention baselines are left out where the S×S scores they hold
  would take more than 1 GiB (S > 16384 for a head; onednn holds those of
  all heads).
  openblas, libxsmm and onednn exist only in an autotune built with the
  build tag of the same name (cgo and the C library: Debian's
  libopenblas-dev, libxsmm-dev, libdnnl-dev; 'make bench-anchors' builds
  with all three). They run on the library's own threads, one per core
  unless OPENBLAS_NUM_THREADS or OMP_NUM_THREADS say otherwise; libxsmm on
  the caller's. OPENBLAS_CORETYPE, when set, makes OpenBLAS run the
  kernels of another core, often slower ones; bench then says so (notes
  in --json).

--isa avx2 runs every side at AVX2 on an AVX-512 machine: the harness
that runs them gets GODEBUG=cpu.avx512f=off (Go), ONEDNN_MAX_CPU_ISA=AVX2,
OPENBLAS_CORETYPE=Haswell and LIBXSMM_TARGET=hsw; a GODEBUG that hides
AVX-512 does the same. The tuned config is the best tuned at that level
('autotune tune --isa avx2'): a workload tuned only with AVX-512 is refused,
with the command to tune it at AVX2. --isa avx512 refuses a CPU without
it. Without --isa, bench runs at the level the CPU has. The table (isa),
--json (isa, isa_env) and --report say which level was measured.

With --report FILE, bench also writes the table as an HTML page with bar
charts of each entry's time, GFLOP/s (the peak drawn as a line) and GB/s
(the floor drawn as a line); see 'autotune report'.

The workload must have been tuned on this machine with this version of the
op's template ('autotune tune'); bench exits 1 otherwise. Progress goes to
stderr, the results to stdout.

--device sm_XX (a CUDA architecture) benches on the GPU, which must be of
that architecture; it needs a CUDA driver with a GPU and NVRTC, and exits 1
naming what is missing. The tuned kernel is the best config of the
database, or the template's default where nothing was tuned (a note says
so). The entries run in a worker process, each launched a few times, then
in interleaved rounds as above (one launch of each, in a rotating order,
each timed with CUDA events after a write of twice the L2 cache, so that
none finds the last one's data there), until each has --samples samples
and --time has passed:
  tuned    the tuned kernel, first checked against the float64 reference
           on every input set (a wrong one is an error, not timed)
  cublas   gemm only: cuBLAS's cublasSgemm_v2 on float32 copies of the
           inputs, checked on the first set; left out, with a note, where
           libcublas.so.13, .12 or .11 is not found ($CUDA_HOME/lib64,
           /usr/local/cuda/lib64, the loader's path) or fails
  peak     float32 FMA peak: 8 independent chains of fmaf in each of as
           many threads as the GPU's multiprocessors hold
  floor    cuMemcpyDtoD of the input to the output; GB/s counts the bytes
           read and written
Other ops have no library baseline (cuDNN is not used): the floor is
theirs. ALLOC is 0 on a GPU, and the table has no isa line.

Examples:
  autotune bench --op softmax --shape 4096x1024 --device cpu
  autotune bench --op softmax --shape 4096x1024 --samples 100 --time 5s
  autotune bench --op softmax --shape 4096x1024 --json | jq '.results[] | {name, median_ns}'
  autotune bench --op attention --shape 1x8x1024x64
  autotune bench --op attention --causal --shape 1x8x1024x64
  autotune bench --op gemm --shape 1024x1024x1024 --report bench.html
  autotune bench --op gemm --shape 64x64x64 --isa avx2
  autotune bench --op gemm --shape 4096x4096x4096 --device sm_90 --json
`, "@other baselines@\n", otherBaselines("softmax", "gemm", "attention"), 1),
	run: runBench,
}

// benchOptions are the flags of bench.
type benchOptions struct {
	workloadFlags
	db      string
	json    bool
	seed    uint64
	samples int
	minTime time.Duration
	report  string
	isa     string
}

// benchJSON is bench's --json output.
type benchJSON struct {
	Op       string            `json:"op"`
	Shape    []int             `json:"shape"`
	Device   string            `json:"device"`
	Results  []benchResultJSON `json:"results"`
	DType    string            `json:"dtype"`
	Template string            `json:"template"`
	Machine  string            `json:"machine"`
	// ISA is the level every side ran at: avx512, avx2 or scalar;
	// ISAEnv the variables that kept the harness there, when it was
	// limited (--isa, or GODEBUG hiding AVX-512).
	ISA    string   `json:"isa,omitempty"`
	ISAEnv []string `json:"isa_env,omitempty"`
	Seed   uint64   `json:"seed"`
	// PeakGFLOPs is the machine's multiply-add peak: the peak loop's best
	// sample, or a checked entry's median GFLOP/s where that is higher
	// (PeakNote then says so); absent without a peak.
	PeakGFLOPs float64 `json:"peak_gflops,omitempty"`
	PeakNote   string  `json:"peak_note,omitempty"`
	// OfPeak is the tuned kernel's GFLOP/s as a fraction of PeakGFLOPs,
	// at most 1; absent without a peak.
	OfPeak float64 `json:"of_peak,omitempty"`
	// Notes are the baselines' notes on this process's environment
	// (kernels.Baseline.Note), each "name: note"; absent without any.
	Notes []string `json:"notes,omitempty"`
}

// benchResultJSON is one entry of a bench: tuned, a baseline, or floor.
type benchResultJSON struct {
	Name     string  `json:"name"`
	MedianNS float64 `json:"median_ns"`
	P20NS    float64 `json:"p20_ns"`
	P80NS    float64 `json:"p80_ns"`
	GBps     float64 `json:"gbps"`
	GFLOPs   float64 `json:"gflops"` // GFLOP/s: the op's FLOPs (the peak loop's own) per second; 0 for the floor
	// VsTuned is the median as a multiple of the tuned kernel's: how many
	// times slower than tuned (below 1 for the floor, normally).
	VsTuned float64 `json:"vs_tuned"`
	// AllocBytes and Allocs are the bytes and objects one call allocates
	// on the Go heap beyond its inputs and output, goroutine stacks not
	// counted (measurecpu.BenchResult.AllocBytes).
	AllocBytes uint64           `json:"alloc_bytes"`
	Allocs     uint64           `json:"allocs"`
	Samples    int              `json:"samples"`
	Dropped    int              `json:"disturbed_rounds"` // rounds left out as disturbed (measurecpu.BenchResult.Dropped)
	Reps       int              `json:"calls_per_sample"`
	Checked    bool             `json:"checked"`
	Doc        string           `json:"doc"`
	Config     *schedule.Config `json:"config,omitempty"` // the tuned one's
}

func runBench(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o benchOptions
	o.workloadFlags.register(fs)
	dbFlag(fs, &o.db)
	fs.BoolVar(&o.json, "json", false, "print the results as one JSON object")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random inputs")
	fs.IntVar(&o.samples, "samples", measurecpu.DefaultBenchSamples, "least number of timed samples of each entry")
	fs.DurationVar(&o.minTime, "time", measurecpu.DefaultBenchTime, "least total time of the timed samples, all entries together")
	fs.StringVar(&o.report, "report", "", "also write the results as an HTML page with bar charts to `FILE`")
	isaFlag(fs, &o.isa)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w, err := o.resolve()
	if err != nil {
		return err
	}
	level, err := atISA(w.target, o.isa, envGODEBUG())
	if err != nil {
		return err
	}
	w.target = level.target
	switch {
	case o.samples < 1:
		return usagef("--samples must be at least 1, not %d", o.samples)
	case o.minTime <= 0:
		return usagef("--time must be positive, not %v", o.minTime)
	}
	tmpl, err := tunable(w, "benchmark")
	if err != nil {
		return err
	}
	if tmpl.Backend == kernels.CUDA {
		return benchCUDA(std, o, w, tmpl)
	}
	db, err := openDB(o.db, readDB)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no tuned config for %s: %v; run autotune tune first", describeWorkload(w), err)
	}
	if err != nil {
		return err
	}
	tc := tune.LocalToolchain(context.Background(), tmpl.Backend)
	best, ok, err := bestOfToolchain(db, w, tmpl, tc)
	var others []tunedb.Workload
	var above error
	if err == nil && !ok {
		others, err = db.Find(w.op.Name, w.shape, w.dtype, w.target.Fingerprint())
	}
	if err == nil && !ok && len(others) == 0 {
		above, err = tunedAbove(db, w, tmpl, tc, level)
	}
	// A workload of a 16-bit dtype is benched beside the tuned f32 kernel
	// of its shape, when the database has one: what half precision gains.
	var f32 tunedb.Record
	f32OK := false
	if err == nil && ok && w.dtype.Size() == 2 {
		wf := w
		wf.dtype = dtype.F32
		f32, f32OK, err = bestOfToolchain(db, wf, tmpl, tc)
	}
	db.Close() // the bench takes seconds; let tuners write meanwhile
	switch {
	case err != nil:
		return err
	case above != nil:
		return above
	case !ok && len(others) > 0:
		return fmt.Errorf("the records of %s are for template %s, not %s (this autotune's): they measured other code; run autotune tune first",
			describeWorkload(w), others[0].Template, tmpl.Version)
	case !ok:
		return fmt.Errorf("no tuned config for %s in %s; run autotune tune first", describeWorkload(w), db.Path())
	}
	warnToolchain(std, &best, tc)

	ctx, caught, stop := signalContext()
	defer stop()
	names := []string{measurecpu.BenchTuned}
	var notes []string
	switch {
	case f32OK:
		names = append(names, measurecpu.BenchTunedF32)
	case w.dtype.Size() == 2:
		fmt.Fprintf(std.errs, "leaving out %s: no tuned f32 config of the shape (autotune tune --dtype f32 adds one)\n", measurecpu.BenchTunedF32)
	}
	limitOneDNN(level.env)
	for _, b := range tmpl.Baselines {
		if !b.For(w.dtype) {
			continue
		}
		if why := b.Skipped(w.shape); why != "" {
			fmt.Fprintf(std.errs, "leaving out %s: %s\n", b.Name, why)
			continue
		}
		names = append(names, b.Name)
		if b.Note != nil {
			if n := b.Note(); n != "" {
				notes = append(notes, b.Name+": "+n)
				fmt.Fprintf(std.errs, "note: %s: %s\n", b.Name, n)
			}
		}
	}
	if tmpl.FLOPs != nil {
		names = append(names, measurecpu.BenchPeak)
	}
	names = append(names, measurecpu.BenchFloor)
	fmt.Fprintf(std.errs, "benchmarking %s: %s, interleaved, at least %d samples each and %v in all (seed %d), at %s\n",
		describeWorkload(w), strings.Join(names, ", "), o.samples, o.minTime, o.seed, level.describe())
	res, err := measurecpu.New(&measurecpu.Options{Seed: o.seed, Env: level.env}).Bench(ctx, measurecpu.BenchBatch{
		Template: tmpl, Shape: w.shape, DType: w.dtype, Target: w.target, Config: best.Config, ConfigF32: f32.Config,
		MinSamples: o.samples, MinTime: o.minTime,
	})
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}

	out := benchJSON{Op: w.op.Name, Shape: w.shape, Device: w.target.Name, DType: string(w.dtype),
		Template: tmpl.Version, Machine: machine(w.target), ISA: level.name, ISAEnv: level.env, Seed: o.seed, Notes: notes}
	return finishBench(std, o, w, out, res, best.Config)
}

// finishBench fills out's results and peak from res, the entries of a
// bench with the tuned kernel first, and writes the report, the JSON or
// the table, as o asks.
func finishBench(std *stdio, o benchOptions, w workload, out benchJSON, res []measurecpu.BenchResult, cfg schedule.Config) error {
	tuned := res[0].MedianNS
	for _, r := range res {
		j := benchResultJSON{Name: r.Name, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
			AllocBytes: r.AllocBytes, Allocs: r.Allocs, Samples: len(r.SamplesNS), Dropped: r.Dropped, Reps: r.Reps, Checked: r.Checked, Doc: r.Doc}
		if r.MedianNS > 0 {
			j.GBps = r.Bytes / r.MedianNS
			j.GFLOPs = r.FLOPs / r.MedianNS
		}
		if tuned > 0 {
			j.VsTuned = r.MedianNS / tuned
		}
		if r.Name == measurecpu.BenchTuned {
			j.Config = &cfg
		}
		out.Results = append(out.Results, j)
	}
	peak, by, loop := measurecpu.PeakGFLOPs(res)
	if peak > 0 {
		out.PeakGFLOPs = peak
		out.OfPeak = out.Results[0].GFLOPs / peak
		if by != "" {
			out.PeakNote = fmt.Sprintf("%s ran at %.1f GFLOP/s, above the peak loop's best %.1f: the loop fell short of the machine, so the peak is taken as %s's", by, peak, loop, by)
		}
	}
	if o.report != "" {
		if err := writeBenchReport(o.report, w, out, cfg); err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "wrote %s\n", o.report)
	}
	if o.json {
		return writeJSON(std, out)
	}
	printBench(std, w, out, cfg)
	return nil
}

// machine describes a CPU target for bench's output.
func machine(t device.Target) string {
	if t.CPU == nil {
		return t.Name
	}
	return fmt.Sprintf("%s, %d logical cores, %s", t.CPU.Model, t.CPU.Cores, t.CPU.ISA)
}

// printBench prints the bench as a table with a line of ratios under it.
func printBench(std *stdio, w workload, b benchJSON, cfg schedule.Config) {
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s %s %s\n", w.op.Name, kernels.FormatShape(w.shape), b.DType)
	fmt.Fprintf(tw, "machine\t%s\n", b.Machine)
	if b.ISA != "" {
		fmt.Fprintf(tw, "isa\t%s\n", b.isaLine())
	}
	fmt.Fprintf(tw, "tuned\t%s (template %s)\n", cfg, b.Template)
	r := b.Results[0]
	fmt.Fprintf(tw, "samples\t%d of each entry, interleaved (%d of %d rounds left out as disturbed); inputs of seed %d\n",
		r.Samples, r.Dropped, r.Samples+r.Dropped, b.Seed)
	tw.Flush()
	fmt.Fprintln(std.out)

	tw = tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMEDIAN\tP20–P80\tGB/s\tGFLOP/s\t× TUNED\tALLOC\tWHAT")
	for _, r := range b.Results {
		gbps, gflops := fmt.Sprintf("%.1f", r.GBps), fmt.Sprintf("%.1f", r.GFLOPs)
		if r.Name == measurecpu.BenchPeak {
			gbps = "-" // it moves no memory
		}
		if r.Name == measurecpu.BenchFloor {
			gflops = "-" // it computes nothing
		}
		fmt.Fprintf(tw, "%s\t%s\t%s – %s\t%s\t%s\t%.2f\t%s\t%s\n", r.Name, tunedb.FormatNS(r.MedianNS),
			tunedb.FormatNS(r.P20NS), tunedb.FormatNS(r.P80NS), gbps, gflops, r.VsTuned, formatBytes(r.AllocBytes), r.Doc)
	}
	tw.Flush()

	for _, line := range benchVerdict(b) {
		if strings.HasPrefix(line, "tuned ") {
			fmt.Fprintln(std.out)
		}
		fmt.Fprintln(std.out, line)
	}
}

// writeBenchReport writes the bench as an HTML page (package report),
// with the figures and lines printBench prints.
func writeBenchReport(path string, w workload, b benchJSON, cfg schedule.Config) error {
	rb := report.Bench{Workload: fmt.Sprintf("%s %s %s", w.op.Name, kernels.FormatShape(w.shape), b.DType),
		Machine: b.Machine, ISA: b.isaLine(), Tuned: fmt.Sprintf("%s (template %s)", cfg, b.Template), Samples: b.Results[0].Samples,
		PeakGFLOPs: b.PeakGFLOPs, Notes: benchVerdict(b)}
	for _, r := range b.Results {
		rb.Rows = append(rb.Rows, report.BenchRow{Name: r.Name, Doc: r.Doc, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS,
			GBps: r.GBps, GFLOPs: r.GFLOPs, VsTuned: r.VsTuned,
			NoGBps: r.Name == measurecpu.BenchPeak, NoGFLOPs: r.Name == measurecpu.BenchFloor})
		if r.Name == measurecpu.BenchFloor {
			rb.FloorGBps = r.GBps
		}
	}
	return writeFile(path, func(f io.Writer) error { return report.WriteBench(f, rb) })
}

// isaLine says at which ISA level the bench ran, and how it was kept
// there: "avx2, every side limited to it (GODEBUG=cpu.avx512f=off ...)".
func (b benchJSON) isaLine() string {
	return isaLevel{name: b.ISA, env: b.ISAEnv}.describe()
}

// benchVerdict is the lines under bench's table: the tuned kernel against
// each other entry, and the note about the peak, if any.
func benchVerdict(b benchJSON) []string {
	var parts, lines []string
	for _, r := range b.Results[1:] {
		switch {
		case r.VsTuned <= 0:
			continue
		case r.Name == measurecpu.BenchPeak:
			if b.OfPeak > 0 {
				kind := "FMA"
				if strings.HasPrefix(r.Doc, "bf16 peak") {
					kind = "bf16 (VDPBF16PS)"
				}
				parts = append(parts, fmt.Sprintf("runs at %.0f%% of the %s peak (%.1f GFLOP/s)", 100*b.OfPeak, kind, b.PeakGFLOPs))
			}
		case r.Name == measurecpu.BenchFloor:
			parts = append(parts, fmt.Sprintf("takes %.2f× the time of the memory floor", 1/r.VsTuned))
		case r.VsTuned >= 1:
			parts = append(parts, fmt.Sprintf("is %.1f× faster than %s", r.VsTuned, r.Name))
		default:
			parts = append(parts, fmt.Sprintf("is %.2f× slower than %s", 1/r.VsTuned, r.Name))
		}
	}
	if len(parts) > 0 {
		lines = append(lines, fmt.Sprintf("tuned %s.", strings.Join(parts, " and ")))
	}
	if b.PeakNote != "" {
		lines = append(lines, fmt.Sprintf("note: %s.", b.PeakNote))
	}
	for _, n := range b.Notes {
		lines = append(lines, fmt.Sprintf("note: %s.", n))
	}
	return lines
}

// formatBytes writes a byte count with three significant digits in binary
// units: "0 B", "112 B", "4.01 MiB".
func formatBytes(n uint64) string {
	const units = "KMGTPE"
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	x, u := float64(n)/(1<<10), 0
	for x >= 1<<10 && u < len(units)-1 {
		x, u = x/(1<<10), u+1
	}
	return fmt.Sprintf("%.3g %ciB", x, units[u])
}

// otherBaselines returns the lines of bench --help's list of baselines
// for the ops the help text does not describe by hand (described, by
// their base names), from the registry: each op with a CPU template and
// baselines, each baseline with its name and its doc, wrapped.
func otherBaselines(described ...string) string {
	var b strings.Builder
	for _, op := range kernels.Names() {
		base, _, _ := strings.Cut(op, "_")
		tmpl, ok := kernels.TemplateFor(op, kernels.CPU)
		if !ok || len(tmpl.Baselines) == 0 || slices.Contains(described, base) || base != op {
			continue
		}
		for i, bl := range tmpl.Baselines {
			name := ""
			if i == 0 {
				name = op
			}
			lines := wrapWords(bl.Doc, 49)
			fmt.Fprintf(&b, "  %-10s %-9s %s\n", name, bl.Name, lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "%23s%s\n", "", l)
			}
		}
	}
	return b.String()
}

// wrapWords splits s into lines of at most width bytes where it can,
// breaking at spaces.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
