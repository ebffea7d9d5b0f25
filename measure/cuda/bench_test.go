package cuda

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
)

// TestInterleave checks the rounds of a bench with a fake timer: every
// entry sampled once a round, in an order rotated by one each round, until
// each has the least number of samples.
func TestInterleave(t *testing.T) {
	var order []int
	samples, err := interleave(3, 4, 0, func(i int) (float64, error) {
		order = append(order, i)
		return float64(10*i + len(order)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}; !slices.Equal(order, want) {
		t.Errorf("sampled %v, want %v", order, want)
	}
	for i, s := range samples {
		if len(s) != 4 {
			t.Errorf("entry %d has %d samples, want 4", i, len(s))
		}
	}
	// Each entry's samples are its own, in round order.
	want := make([][]float64, 3)
	for n, i := range order {
		want[i] = append(want[i], float64(10*i+n+1))
	}
	for i := range want {
		if !slices.Equal(samples[i], want[i]) {
			t.Errorf("entry %d: samples %v, want %v", i, samples[i], want[i])
		}
	}
}

func gemmBench(t *testing.T, shape []int, dt dtype.DType) BenchBatch {
	t.Helper()
	tmpl, ok := kernels.TemplateFor(gemm.Op.Name, kernels.CUDA)
	if !ok {
		t.Fatal("no CUDA template of gemm")
	}
	tg := target(t, "sm_90")
	cfg, err := tmpl.DefaultConfig(shape, tg)
	if err != nil {
		t.Fatal(err)
	}
	return BenchBatch{Template: tmpl, Shape: shape, DType: dt, Target: tg, Config: cfg, MinSamples: 7, MinTime: time.Millisecond}
}

// TestBenchJob checks what a bench asks of its worker and what it makes
// of the answer, with a scripted worker.
func TestBenchJob(t *testing.T) {
	m := fakeMeasurer(t, "bench")
	b := gemmBench(t, []int{8, 16, 4}, "")
	res, notes, err := m.Bench(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.Name)
	}
	if want := []string{BenchTuned, BenchCUBLAS, BenchFloor}; !slices.Equal(names, want) {
		t.Fatalf("entries %v, want %v", names, want)
	}
	tuned := res[0]
	if tuned.MedianNS != 2 || tuned.P20NS == 0 || res[2].MedianNS != 5 {
		t.Errorf("medians %v and %v, want 2 and 5: summarised from the samples", tuned.MedianNS, res[2].MedianNS)
	}
	if tuned.FLOPs != 2*8*16*4 || tuned.Bytes != 4*(8*4+4*16+8*16) || !strings.Contains(tuned.Doc, b.Config.String()) {
		t.Errorf("tuned %+v: want the op's FLOPs and bytes and the config in its doc", tuned)
	}
	if want := "samples 7, warmup 5, min time 1000000"; !slices.Equal(notes, []string{want}) {
		t.Errorf("the worker was asked %v, want %q", notes, want)
	}
}

// TestBenchHalfCUBLASBytes: cuBLAS runs on float32 copies, so for a bf16
// GEMM it moves twice the tuned kernel's bytes.
func TestBenchHalfCUBLASBytes(t *testing.T) {
	tmpl := gemmBench(t, []int{8, 16, 4}, "").Template
	b := gemmBench(t, []int{8, 16, 4}, "")
	if !slices.Contains(tmpl.Op.DTypes, dtype.BF16) {
		t.Skip("gemm has no bf16")
	}
	b.DType = dtype.BF16
	res, _, err := fakeMeasurer(t, "bench").Bench(context.Background(), b)
	if err != nil {
		t.Skipf("no bf16 CUDA gemm kernel to emit yet: %v", err)
	}
	if res[1].Bytes != 2*res[0].Bytes {
		t.Errorf("cuBLAS moves %v bytes, the bf16 kernel %v; want twice", res[1].Bytes, res[0].Bytes)
	}
}

func TestBenchWrongKernelIsAnError(t *testing.T) {
	m := fakeMeasurer(t, "wrong")
	_, _, err := m.Bench(context.Background(), gemmBench(t, []int{8, 16, 4}, ""))
	if err == nil || !strings.Contains(err.Error(), "wrong answer, not timed") {
		t.Errorf("a wrong tuned kernel gave %v, want an error saying so", err)
	}
	m = fakeMeasurer(t, "fatal")
	softmax := batch(t, 1)
	_, _, err = m.Bench(context.Background(), BenchBatch{Template: softmax.Template, Shape: softmax.Shape, Target: softmax.Target,
		Config: softmax.Configs[0], MinSamples: 1, MinTime: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no GPU today") {
		t.Errorf("a worker that fails before the bench gave %v, want its message as an error", err)
	}
}

// TestPeakLoopPTX compiles the peak loop to PTX with clang and checks that
// its chains are fused multiply-adds, unrolled, kept in registers.
func TestPeakLoopPTX(t *testing.T) {
	clang, err := emu.FindClang()
	if err != nil {
		t.Skip(err)
	}
	k := kernels.CUDAKernel{Source: peakSource, Entry: "autotune_peak"}
	ptx, err := emu.PTX(context.Background(), clang, k, "sm_90", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(ptx), "fma.rn.f32"); n < peakChains*16 {
		t.Errorf("%d fma.rn.f32 in the PTX, want at least %d: the loop is not unrolled by 16", n, peakChains*16)
	}
	if strings.Contains(string(ptx), ".local") {
		t.Error("the chains are in local memory")
	}
}
