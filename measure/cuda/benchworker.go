package cuda

import (
	"fmt"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
)

// benchEntry is one entry of a bench in the worker: how to launch it once
// on the default stream, and what the parent reports of it.
type benchEntry struct {
	BenchResult
	launch func() error
}

// bench runs the bench of j.Bench on the worker's GPU (see Measurer.Bench):
// the tuned kernel, checked first, cuBLAS for a GEMM, the peak loop and
// the copy floor, interleaved.
func (w *worker) bench(k kernel) (e event) {
	e.Kind = "bench"
	fail := func(err error) event {
		e.Error = err.Error()
		return e
	}
	b := w.j.Bench
	mod, launchSet, _, err := w.load(k, &e)
	if err != nil {
		return fail(fmt.Errorf("the tuned kernel: %w", err))
	}
	defer mod.Unload()
	wrong, err := w.check(launchSet)
	if err == nil && wrong != "" {
		err = fmt.Errorf("a wrong answer, not timed: %s", wrong)
	}
	if err != nil {
		return fail(fmt.Errorf("the tuned kernel: %w", err))
	}
	entries := []benchEntry{{
		BenchResult: BenchResult{Name: BenchTuned, Doc: b.TunedDoc, Checked: true, Bytes: b.Bytes, FLOPs: b.FLOPs},
		launch:      launchSet(0),
	}}
	if len(b.GEMM) == 3 {
		ent, note, err := w.cublasEntry(b)
		if err != nil {
			return fail(err)
		}
		if note != "" {
			e.Notes = append(e.Notes, BenchCUBLAS+": "+note)
		} else {
			entries = append(entries, ent)
		}
	}
	peak, err := w.peakEntry()
	if err != nil {
		return fail(fmt.Errorf("the peak loop: %w", err))
	}
	n := w.dt.Size() * min(w.work.Inputs[0], w.work.Output)
	in := w.ins[0][0]
	entries = append(entries, peak, benchEntry{
		BenchResult: BenchResult{Name: BenchFloor, Bytes: float64(2 * n),
			Doc: fmt.Sprintf("copies the input to the output (%s) with cuMemcpyDtoD", byteSize(n))},
		launch: func() error { return w.ctx.CopyDevice(w.out, in, n) },
	})

	for _, ent := range entries {
		for range w.j.Warmup {
			if err := ent.launch(); err != nil {
				return fail(fmt.Errorf("%s: %w", ent.Name, err))
			}
		}
	}
	t, err := w.newTimer()
	if err != nil {
		return fail(err)
	}
	defer t.destroy()
	samples, err := interleave(len(entries), w.j.Samples, time.Duration(w.j.MinTimeNS), func(i int) (float64, error) {
		ns, err := t.sample(entries[i].launch)
		if err != nil {
			err = fmt.Errorf("%s: %w", entries[i].Name, err)
		}
		return ns, err
	})
	if err != nil {
		return fail(err)
	}
	for i, ent := range entries {
		ent.SamplesNS = samples[i]
		e.Bench = append(e.Bench, ent.BenchResult)
	}
	return e
}

// interleave takes samples of n entries in rounds, each round one sample
// of every entry in an order rotated by one from the last round's, until
// each has minSamples and minTime has passed (at most maxSamples each).
func interleave(n, minSamples int, minTime time.Duration, sample func(entry int) (float64, error)) ([][]float64, error) {
	samples := make([][]float64, n)
	begin := time.Now()
	for round := 0; n > 0 && round < maxSamples && (round < minSamples || time.Since(begin) < minTime); round++ {
		for j := range n {
			i := (round + j) % n
			ns, err := sample(i)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], ns)
		}
	}
	return samples, nil
}

// cublasEntry is cuBLAS's float32 GEMM on float32 copies of the first
// input set, checked against its reference. A missing or failing cuBLAS is
// a note saying why the entry is left out; err is for a failure of the
// context.
func (w *worker) cublasEntry(b *benchJob) (_ benchEntry, note string, err error) {
	lib, err := driver.OpenCUBLAS()
	if err != nil {
		return benchEntry{}, "left out: " + err.Error(), nil
	}
	h, err := lib.Create()
	if err != nil {
		return benchEntry{}, "left out: " + err.Error(), nil
	}
	set := w.sets[0]
	var ptrs []driver.Ptr
	for _, n := range []int{len(set.Ins[0]), len(set.Ins[1]), w.work.Output} {
		p, err := w.ctx.Alloc(4 * max(n, 1))
		if err != nil {
			return benchEntry{}, "", err
		}
		ptrs = append(ptrs, p)
	}
	for i := range 2 {
		if err := w.ctx.CopyIn(ptrs[i], set.Ins[i]); err != nil {
			return benchEntry{}, "", err
		}
	}
	m, n, k := b.GEMM[0], b.GEMM[1], b.GEMM[2]
	launch := func() error { return h.GemmRowMajor(m, n, k, ptrs[0], ptrs[1], ptrs[2]) }
	if err := w.ctx.FillFloat(ptrs[2], 0, w.work.Output); err != nil {
		return benchEntry{}, "", err
	}
	if err := launch(); err != nil {
		if driver.IsSticky(err) {
			return benchEntry{}, "", err
		}
		return benchEntry{}, "left out: " + err.Error(), nil
	}
	wrong, err := w.compare(ptrs[2], dtype.F32, set)
	if err != nil {
		return benchEntry{}, "", err
	}
	if wrong != "" {
		return benchEntry{}, "left out, a wrong answer: " + wrong, nil
	}
	return benchEntry{
		BenchResult: BenchResult{Name: BenchCUBLAS, Checked: true, Bytes: b.BytesF32, FLOPs: b.FLOPs,
			Doc: fmt.Sprintf("cuBLAS's cublasSgemm_v2, float32, from %s", lib.Path())},
		launch: launch,
	}, "", nil
}

// The peak loop: every thread runs peakChains independent chains of
// fused multiply-adds, peakSteps each, enough that the GPU's FP32 units,
// not their latency, bound it (the loop unrolled, so that its own
// instructions take few issue slots); the sum goes to memory so that nothing is
// dead code. x and y are arguments, so the compiler cannot fold the chains.
const (
	peakChains = 8
	peakSteps  = 4096
	peakBlock  = 256
	peakSource = `extern "C" __global__ void autotune_peak(float *out, int steps, float x, float y) {
	float a[8];
	#pragma unroll
	for (int c = 0; c < 8; c++) a[c] = threadIdx.x + c;
	#pragma unroll 16
	for (int i = 0; i < steps; i++) {
		#pragma unroll
		for (int c = 0; c < 8; c++) a[c] = fmaf(a[c], x, y);
	}
	float s = 0;
	#pragma unroll
	for (int c = 0; c < 8; c++) s += a[c];
	out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
`
)

// peakEntry compiles the peak loop and sizes its grid to fill every
// multiprocessor with as many threads as it holds.
func (w *worker) peakEntry() (benchEntry, error) {
	prog, err := w.nvrtc.Compile(peakSource, "autotune_peak.cu", w.j.Arch)
	if err != nil {
		return benchEntry{}, err
	}
	mod, err := w.ctx.LoadModule(prog.Image())
	if err != nil {
		return benchEntry{}, err
	}
	f, err := mod.Function("autotune_peak")
	if err != nil {
		return benchEntry{}, err
	}
	sms, err := w.dev.Attribute(driver.AttrMultiprocessorCount)
	if err != nil {
		return benchEntry{}, err
	}
	perSM, err := w.dev.Attribute(driver.AttrMaxThreadsPerMultiproc)
	if err != nil {
		return benchEntry{}, err
	}
	blocks := sms * max(perSM/peakBlock, 1)
	out, err := w.ctx.Alloc(4 * blocks * peakBlock)
	if err != nil {
		return benchEntry{}, err
	}
	flops := 2 * float64(peakChains) * peakSteps * float64(blocks*peakBlock)
	return benchEntry{
		BenchResult: BenchResult{Name: BenchPeak, FLOPs: flops,
			Doc: fmt.Sprintf("FMA peak: %d chains of float32 multiply-adds in each of %d threads (%d SMs)", peakChains, blocks*peakBlock, sms)},
		launch: func() error {
			return f.Launch(driver.Dim3{X: blocks, Y: 1, Z: 1}, driver.Dim3{X: peakBlock, Y: 1, Z: 1}, 0,
				out, int32(peakSteps), float32(0.999), float32(1e-3))
		},
	}, nil
}

// byteSize writes n bytes in binary units: "16 MiB", "1.5 KiB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
