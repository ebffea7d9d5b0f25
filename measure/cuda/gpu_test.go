package cuda

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/norm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/schedule"
)

// gpuMeasurer returns a measurer for the local GPU, whose workers are this
// test binary, or skips the test where there is none.
func gpuMeasurer(t *testing.T) *Measurer {
	t.Helper()
	d, err := driver.Open("")
	if err != nil {
		t.Skipf("no usable CUDA driver: %v", err)
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := device.Lookup(fmt.Sprintf("sm_%d%d", major, minor))
	if err != nil {
		t.Skipf("GPU of an architecture autotune has no limits for: %v", err)
	}
	m, err := New(&Options{Samples: 3, MinTime: 1, Warmup: 1, Command: []string{os.Args[0], WorkerArg}}, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GPU: %s", m.GPU())
	return m
}

// TestGPUSoftmax compiles and runs valid configs of softmax's CUDA template
// on odd shapes (one column, primes, rows off a float4 boundary, a tail
// block of rows) on the GPU; each must match the float64 reference.
func TestGPUSoftmax(t *testing.T) {
	checkOnGPU(t, gpuMeasurer(t), dtype.F32, 40, []string{softmax.Op.Name},
		[][]int{{1, 1}, {3, 7}, {13, 97}, {33, 1023}, {7, 4097}, {255, 1024}, {2, 30011}})
}

// TestGPUSoftmax16 does the same in bf16 and f16, where the buffers hold
// 2-byte elements.
func TestGPUSoftmax16(t *testing.T) {
	m := gpuMeasurer(t)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		checkOnGPU(t, m, dt, 20, []string{softmax.Op.Name}, [][]int{{1, 1}, {3, 7}, {33, 1023}, {2, 30011}})
	}
}

// TestGPUGemm does the same for the three GEMM templates: one element,
// primes in every dimension (tails of every tile, scalar loads), aligned
// shapes with tails of the block tiles only, and 2048³'s neighbour.
func TestGPUGemm(t *testing.T) {
	checkOnGPU(t, gpuMeasurer(t), dtype.F32, 12, []string{gemm.Op.Name, gemm.BiasOp.Name, gemm.BiasReLUOp.Name},
		[][]int{{1, 1, 1}, {7, 13, 5}, {33, 17, 9}, {97, 131, 67}, {100, 68, 36}, {256, 256, 256}, {513, 260, 1028}})
}

// TestGPUGemm16 does the same in bf16 and f16, on tensor cores, for
// gemm and gemm_bias_relu: one element, primes (odd K and N: element-wise
// copies and stores), aligned rows with tails of the tiles, and a larger
// aligned shape with tails. Few
// configs a shape, to keep it to a couple of minutes of NVRTC.
func TestGPUGemm16(t *testing.T) {
	m := gpuMeasurer(t)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		checkOnGPU(t, m, dt, 4, []string{gemm.Op.Name, gemm.BiasReLUOp.Name},
			[][]int{{1, 1, 1}, {17, 13, 37}, {100, 72, 40}, {513, 264, 1032}})
	}
}

// TestGPUAttention does the same for attention and attention_causal: one
// element, odd S and D (tails of rows and keys, scalar loads, padded
// columns), several heads and batches, D = 64 and 128.
func TestGPUAttention(t *testing.T) {
	checkOnGPU(t, gpuMeasurer(t), dtype.F32, 4, []string{attention.Op.Name, attention.CausalOp.Name},
		[][]int{{1, 1, 1, 1}, {1, 2, 37, 5}, {2, 3, 67, 17}, {1, 1, 33, 64}, {2, 2, 130, 64}, {1, 4, 257, 128}})
}

// TestGPUAttention16 does the same in bf16 and f16: 16-byte loads at D =
// 64 and 128, single elements at D = 5.
func TestGPUAttention16(t *testing.T) {
	m := gpuMeasurer(t)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		checkOnGPU(t, m, dt, 3, []string{attention.Op.Name, attention.CausalOp.Name},
			[][]int{{1, 1, 1, 1}, {1, 2, 37, 5}, {1, 1, 129, 64}, {1, 4, 257, 128}})
	}
}

// TestGPUAttentionMMA runs every tensor-core config a bf16 search
// explores (kv_copy=mma: one m16 tile of rows a warp or two) of attention
// and causal attention on odd shapes, D = 64 and 128, tails of the row
// and key tiles; f16 on one shape. Each config's registers and local
// memory (spills) are logged, per config, since the space's register
// count is an estimate.
func TestGPUAttentionMMA(t *testing.T) {
	m := gpuMeasurer(t)
	mma := func(c schedule.Config) bool { return c.Str("kv_copy") == "mma" }
	for _, op := range []string{attention.Op.Name, attention.CausalOp.Name} {
		for _, shape := range [][]int{{1, 2, 37, 64}, {2, 3, 131, 64}, {1, 4, 257, 128}} {
			for _, r := range checkConfigs(t, m, op, shape, dtype.BF16, validConfigs(t, op, shape, dtype.BF16, m.target, mma)) {
				t.Logf("  %s: %d registers, %d bytes of local memory", r.Config, r.Registers, r.LocalBytes)
			}
		}
		shape := []int{1, 3, 200, 64}
		checkConfigs(t, m, op, shape, dtype.F16, validConfigs(t, op, shape, dtype.F16, m.target, mma))
	}
}

// TestGPUNorm does the same for RMSNorm and LayerNorm in f32, bf16 and
// f16: one element, primes (element-at-a-time rows in 16 bits), rows of
// whole 16-byte vectors, and a long row with a tail, for blocks of
// several warps.
func TestGPUNorm(t *testing.T) {
	m := gpuMeasurer(t)
	for _, dt := range []dtype.DType{dtype.F32, dtype.BF16, dtype.F16} {
		checkOnGPU(t, m, dt, 4, []string{norm.RMSOp.Name, norm.LayerOp.Name},
			[][]int{{1, 1}, {7, 13}, {33, 1024}, {3, 4099}})
	}
}

// checkOnGPU measures a spread of at most per valid configs of each op's
// CUDA template on each shape (every one when there are fewer): each must
// be correct.
func checkOnGPU(t *testing.T, m *Measurer, dt dtype.DType, per int, ops []string, shapes [][]int) {
	t.Helper()
	for _, op := range ops {
		for _, shape := range shapes {
			valid := validConfigs(t, op, shape, dt, m.target, nil)
			var spread []schedule.Config
			step := max(1, len(valid)/per)
			for i := 0; i < len(valid); i += step {
				spread = append(spread, valid[i])
			}
			checkConfigs(t, m, op, shape, dt, spread)
		}
	}
}

// validConfigs returns the configs of op's CUDA template for shape that a
// search of dt explores and keep (nil: all) accepts.
func validConfigs(t *testing.T, op string, shape []int, dt dtype.DType, target device.Target, keep func(schedule.Config) bool) []schedule.Config {
	t.Helper()
	tmpl, ok := kernels.TemplateFor(op, kernels.CUDA)
	if !ok {
		t.Fatalf("no CUDA template of %s", op)
	}
	sp := tmpl.SearchSpace(shape, dt, target)
	var valid []schedule.Config
	for i := range sp.Size() {
		if c := sp.At(i); sp.Valid(c) && (keep == nil || keep(c)) {
			valid = append(valid, c)
		}
	}
	return valid
}

// checkConfigs measures configs of op's CUDA template on shape in dt:
// each must be correct. It logs the most registers and local memory a
// thread of them took, and returns the results.
func checkConfigs(t *testing.T, m *Measurer, op string, shape []int, dt dtype.DType, configs []schedule.Config) []measure.Result {
	t.Helper()
	tmpl, _ := kernels.TemplateFor(op, kernels.CUDA)
	b := measure.Batch{Template: tmpl, Shape: shape, DType: dt, Target: m.target, Configs: configs}
	res, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatalf("%s %v: %v", op, shape, err)
	}
	bad, maxRegs, maxLocal := 0, 0, 0
	for _, r := range res {
		maxRegs, maxLocal = max(maxRegs, r.Registers), max(maxLocal, r.LocalBytes)
		if r.Status != measure.StatusOK {
			bad++
			if bad <= 5 {
				t.Errorf("%s %v %s: %s: %s", op, shape, r.Config, r.Status, r.Error)
			}
		}
	}
	if len(res) == 0 {
		t.Errorf("%s %v: no valid config", op, shape)
	}
	t.Logf("%s %v %s: %d configs, %d failed; up to %d registers and %d bytes of local memory a thread", op, shape, dt, len(res), bad, maxRegs, maxLocal)
	return res
}

// plantedTemplate is softmax with a kernel of our own per config: the
// config's kind picks a correct copy kernel's broken variants.
func plantedTemplate() kernels.Template {
	tmpl, _ := kernels.TemplateFor(softmax.Op.Name, kernels.CUDA)
	tmpl.Version = "planted-1"
	tmpl.Space = func([]int, device.Target) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{schedule.Enum("kind", "ok", "syntax", "skip_last", "illegal", "after")})
	}
	tmpl.CUDA = kernels.CUDAFunc(func(want kernels.Kernel) kernels.CUDAKernel {
		shape, cfg := want.Shape, want.Config
		k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: want.Name, Shape: shape,
			Config: mustParse(softmax.CUDATemplate.Space(shape, device.Target{}), "tpr=32,rows_per_block=1,vec=1,keep=global,algo=threepass,exp=precise")})
		switch cfg.Str("kind") {
		case "syntax":
			k.Source = strings.Replace(k.Source, "const float inv", "const float inv = ;", 1)
		case "skip_last":
			k.Source = strings.Replace(k.Source, "y[i] =", "if (i != C - 1) y[i] =", -1)
			k.Source = strings.Replace(k.Source, "reinterpret_cast<float *>(y + head)[k] =", "if (k != nvec - 1) reinterpret_cast<float *>(y + head)[k] =", 1)
		case "illegal":
			k.Source = strings.Replace(k.Source, "const float inv = 1.f / s;", "const float inv = 1.f / s; if (row == 0 && t == 0) y[1ll << 40] = 1.f;", 1)
		}
		return k
	})
	return tmpl
}

func mustParse(sp *schedule.Space, text string) schedule.Config {
	c, err := sp.Parse(text)
	if err != nil {
		panic(err)
	}
	return c
}

// TestGPUFailuresAreRecords plants a compile error, a wrong answer and an
// illegal address among correct kernels: each is a record of its kind and
// the kernels after the illegal address still run, in a fresh worker.
func TestGPUFailuresAreRecords(t *testing.T) {
	m := gpuMeasurer(t)
	tmpl := plantedTemplate()
	b := measure.Batch{Template: tmpl, Shape: []int{5, 33}, Target: m.target}
	sp := tmpl.Space(b.Shape, b.Target)
	for _, kind := range []string{"ok", "syntax", "skip_last", "illegal", "after"} {
		b.Configs = append(b.Configs, mustParse(sp, "kind="+kind))
	}
	res, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	want := []measure.Status{"ok", "build_error", "wrong_answer", "runtime_error", "ok"}
	for i, r := range res {
		t.Logf("%s: %s %s", r.Config, r.Status, r.Error)
		if r.Status != want[i] {
			t.Errorf("%s: %s, want %s", r.Config, r.Status, want[i])
		}
	}
	if !strings.Contains(res[3].Error, "CUDA_ERROR_ILLEGAL_ADDRESS") {
		t.Errorf("the illegal address's error %q does not name it", res[3].Error)
	}
	if !strings.Contains(res[2].Error, "out[32]") {
		t.Errorf("the wrong answer's error %q does not name the first bad element, out[32]", res[2].Error)
	}
}

// TestGPUBench benches the default config of gemm at an odd shape (so that
// cuBLAS's column-major mapping is checked against the reference where
// M, N and K differ) and of softmax on the GPU: every entry is timed, the
// tuned kernel and cuBLAS are checked, and the rates are plausible. Where
// cuBLAS is not installed its note says so and the test goes on; a wrong
// cuBLAS answer fails it.
func TestGPUBench(t *testing.T) {
	m := gpuMeasurer(t)
	for _, w := range []struct {
		op    string
		shape []int
	}{{gemm.Op.Name, []int{300, 200, 100}}, {softmax.Op.Name, []int{1024, 1000}}} {
		tmpl, ok := kernels.TemplateFor(w.op, kernels.CUDA)
		if !ok {
			t.Fatalf("no CUDA template of %s", w.op)
		}
		cfg, err := tmpl.DefaultConfig(w.shape, m.target)
		if err != nil {
			t.Fatal(err)
		}
		res, notes, err := m.Bench(context.Background(), BenchBatch{Template: tmpl, Shape: w.shape, Target: m.target, Config: cfg,
			MinSamples: 5, MinTime: 1})
		if err != nil {
			t.Fatalf("%s: %v", w.op, err)
		}
		want := []string{BenchTuned, BenchCUBLAS, BenchPeak, BenchFloor}
		if w.op != gemm.Op.Name || len(notes) > 0 {
			want = slices.DeleteFunc(want, func(n string) bool { return n == BenchCUBLAS })
		}
		var names []string
		for _, r := range res {
			names = append(names, r.Name)
			t.Logf("%s %v: %-6s median %8.1f µs, %7.1f GB/s, %8.1f GFLOP/s: %s", w.op, w.shape, r.Name, r.MedianNS/1e3,
				r.Bytes/r.MedianNS, r.FLOPs/r.MedianNS, r.Doc)
			if len(r.SamplesNS) < 5 || !(r.MedianNS > 0) || r.Checked != (r.Name == BenchTuned || r.Name == BenchCUBLAS) {
				t.Errorf("%s: %s: %d samples, median %v, checked %v", w.op, r.Name, len(r.SamplesNS), r.MedianNS, r.Checked)
			}
		}
		for _, n := range notes {
			t.Logf("%s: note: %s", w.op, n)
			if strings.Contains(n, "wrong answer") {
				t.Errorf("%s: cuBLAS disagrees with the reference: %s", w.op, n)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: entries %v, want %v (notes %q)", w.op, names, want, notes)
		}
	}
}
