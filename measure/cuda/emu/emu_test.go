package emu

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// TestMain lets the test binary serve as the emulation worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		os.Exit(ServeWorker(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// checker returns a Checker whose workers are this test binary, skipping
// the test when a compiler it needs is missing.
func checker(t *testing.T, ptx bool) *Checker {
	t.Helper()
	c := &Checker{Command: []string{os.Args[0], WorkerArg}, NoPTX: !ptx, Seed: 3}
	if err := c.setup(); errors.Is(err, ErrNoCompiler) {
		t.Skipf("%v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return c
}

func target(t *testing.T, arch string) device.Target {
	t.Helper()
	tg, err := device.Lookup(arch)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// run emulates the kernel src (entry k, one input of n floats, the output
// n floats) on inputs 1, 2, ..., and returns the outcome; want is the
// expected output.
func run(t *testing.T, c *Checker, src string, grid, block [3]int, shared int, in []float32, want []float64) Outcome {
	t.Helper()
	k := kernels.CUDAKernel{Source: src, Entry: "k", Grid: grid, Block: block, SharedBytes: shared}
	o, err := c.Emulate(context.Background(), k, "sm_80", [][]float32{in}, want, 1e-6, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func iota(n int) ([]float32, []float64) {
	in := make([]float32, n)
	want := make([]float64, n)
	for i := range in {
		in[i] = float32(i + 1)
		want[i] = float64(i + 1)
	}
	return in, want
}

// reverse reverses each block of 64 through shared memory, with the barrier
// between the writes and the reads, or without it.
const reverse = `
extern "C" __global__ void k(float *out, const float *in) {
	__shared__ float s[64];
	const int i = blockIdx.x * 64 + threadIdx.x;
	s[threadIdx.x] = in[i];
	BARRIER
	out[i] = s[63 - threadIdx.x];
}
`

func reversed(n int) ([]float32, []float64) {
	in, _ := iota(n)
	want := make([]float64, n)
	for i := range want {
		b, t := i/64, i%64
		want[i] = float64(in[b*64+63-t])
	}
	return in, want
}

func TestSharedMemoryRace(t *testing.T) {
	c := checker(t, false)
	in, want := reversed(256)
	if o := run(t, c, strings.Replace(reverse, "BARRIER", "__syncthreads();", 1), [3]int{4, 1, 1}, [3]int{64, 1, 1}, 0, in, want); !o.OK {
		t.Fatalf("the correct kernel: %s", o)
	}
	o := run(t, c, strings.Replace(reverse, "BARRIER", "", 1), [3]int{4, 1, 1}, [3]int{64, 1, 1}, 0, in, want)
	if o.OK || !strings.Contains(o.Error, "depends on the order") && !strings.Contains(o.Error, "NaN") {
		t.Errorf("a missing __syncthreads: %s; want an order-dependent result or NaN", o)
	}
	t.Log(o)
}

// TestRaceBetweenPhases plants the other common race: a buffer reused
// without a barrier after the reads of the previous phase.
func TestRaceBetweenPhases(t *testing.T) {
	c := checker(t, false)
	src := `
extern "C" __global__ void k(float *out, const float *in) {
	__shared__ float s[32];
	const int t = threadIdx.x;
	float acc = 0.f;
	for (int phase = 0; phase < 2; phase++) {
		s[t] = in[phase * 32 + t];
		__syncthreads();
		acc += s[31 - t];
		BARRIER
	}
	out[t] = acc;
}
`
	in, _ := iota(64)
	want := make([]float64, 32)
	for i := range want {
		want[i] = float64(in[31-i] + in[32+31-i])
	}
	if o := run(t, c, strings.Replace(src, "BARRIER", "__syncthreads();", 1), [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, in, want); !o.OK {
		t.Fatalf("the correct kernel: %s", o)
	}
	if o := run(t, c, strings.Replace(src, "BARRIER", "", 1), [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, in, want); o.OK {
		t.Errorf("a missing second __syncthreads passed")
	} else {
		t.Log(o)
	}
}

func TestOutOfBoundsSharedRead(t *testing.T) {
	c := checker(t, false)
	in, want := iota(64)
	// Dynamic shared memory: one float past 64 floats is in the guard page;
	// below them is NaN, then the other guard page.
	dyn := `
extern "C" __global__ void k(float *out, const float *in) {
	extern __shared__ float s[];
	s[threadIdx.x] = in[threadIdx.x];
	__syncthreads();
	out[threadIdx.x] = s[(int)threadIdx.x + OFF];
}
`
	if o := run(t, c, strings.Replace(dyn, "OFF", "0", 1), [3]int{1, 1, 1}, [3]int{64, 1, 1}, 256, in, want); !o.OK {
		t.Fatalf("the correct kernel: %s", o)
	}
	for _, off := range []string{"1", "1024", "-1", "-65", "-1100"} {
		o := run(t, c, strings.Replace(dyn, "OFF", off, 1), [3]int{1, 1, 1}, [3]int{64, 1, 1}, 256, in, want)
		if o.OK || !strings.Contains(o.Error, "dynamic shared memory") && !strings.Contains(o.Error, "out[0] = NaN") {
			t.Errorf("reading s[t%+s] of 64 floats: %s; want a report naming the dynamic shared memory, or out[0] = NaN", off, o)
		}
		t.Log(o)
	}
	// Static shared memory: the read past the array reads the NaN it was
	// filled with. Every other element is right.
	want = make([]float64, 64)
	for i := range 63 {
		want[i] = float64(in[i+1])
	}
	static := `
extern "C" __global__ void k(float *out, const float *in) {
	__shared__ float s[64];
	s[threadIdx.x] = in[threadIdx.x];
	__syncthreads();
	out[threadIdx.x] = s[threadIdx.x + 1];
}
`
	o := run(t, c, static, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, in, want)
	if o.OK || !strings.Contains(o.Error, "out[63] = NaN") {
		t.Errorf("reading past a static shared array: %s; want out[63] = NaN", o)
	}
	t.Log(o)
}

func TestOutOfBoundsGlobal(t *testing.T) {
	c := checker(t, false)
	in, want := iota(100)
	src := `
extern "C" __global__ void k(float *out, const float *in) {
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = in[i];
}
`
	// 128 threads for 100 elements: the last 28 read and write past the end.
	o := run(t, c, src, [3]int{1, 1, 1}, [3]int{128, 1, 1}, 0, in, want)
	if o.OK || !strings.Contains(o.Error, "past the end of") {
		t.Errorf("an unguarded tail: %s; want an access past the end of a buffer", o)
	}
	t.Log(o)
}

func TestDivergentBarrier(t *testing.T) {
	c := checker(t, false)
	in, want := iota(64)
	for name, src := range map[string]string{
		"exited": `
extern "C" __global__ void k(float *out, const float *in) {
	if (threadIdx.x >= 40) return;
	__syncthreads();
	out[threadIdx.x] = in[threadIdx.x];
}
`,
		"two barriers": `
extern "C" __global__ void k(float *out, const float *in) {
	if (threadIdx.x < 32) {
		__syncthreads();
	} else {
		__syncthreads();
	}
	out[threadIdx.x] = in[threadIdx.x];
}
`,
		"warp and block": `
extern "C" __global__ void k(float *out, const float *in) {
	float v = in[threadIdx.x];
	if (threadIdx.x < 32) __syncthreads();
	else v = __shfl_xor_sync(0xffffffffu, v, 1);
	out[threadIdx.x] = v;
}
`,
	} {
		o := run(t, c, src, [3]int{1, 1, 1}, [3]int{64, 1, 1}, 0, in, want)
		if o.OK || !strings.Contains(o.Error, "barrier") && !strings.Contains(o.Error, "deadlock") {
			t.Errorf("%s: %s; want a divergent barrier or a deadlock", name, o)
		}
		t.Logf("%s: %s", name, o)
	}
}

// shuffles is a kernel that writes, for each thread, the results of the
// shuffles and votes below: 12 values per thread.
const shuffles = `
extern "C" __global__ void k(float *out, const float *in) {
	const int t = threadIdx.x, lane = t % 32;
	const float v = in[t];
	float *o = out + t * 12;
	o[0] = __shfl_sync(0xffffffffu, v, 5);
	o[1] = __shfl_sync(0xffffffffu, v, lane + 37, 16);
	o[2] = __shfl_up_sync(0xffffffffu, v, 3);
	o[3] = __shfl_up_sync(0xffffffffu, v, 2, 8);
	o[4] = __shfl_down_sync(0xffffffffu, v, 4);
	o[5] = __shfl_down_sync(0xffffffffu, v, 1, 4);
	o[6] = __shfl_xor_sync(0xffffffffu, v, 1);
	o[7] = __shfl_xor_sync(0xffffffffu, v, 16, 16);
	o[8] = (float)__ballot_sync(0xffffffffu, lane % 3 == 0);
	o[9] = (float)__all_sync(0xffffffffu, v > 0.f);
	o[10] = (float)__any_sync(0xffffffffu, lane == 31 && t < 32);
	float s = v;
	for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
	o[11] = __shfl_sync(0xffffffffu, s, 0);
}
`

// TestWarpShuffles checks the emulated shuffles and votes against CUDA's
// definitions, written out here lane by lane.
func TestWarpShuffles(t *testing.T) {
	c := checker(t, false)
	const n = 64
	in, _ := iota(n)
	val := func(t int) float64 { return float64(in[t]) }
	want := make([]float64, 12*n)
	for th := range n {
		lane, base := th%32, th/32*32
		seg := func(w int) int { return lane / w * w }
		o := want[12*th:]
		o[0] = val(base + 5)
		o[1] = val(base + seg(16) + (lane+37)%16)
		o[2] = val(th)
		if lane >= 3 {
			o[2] = val(th - 3)
		}
		o[3] = val(th)
		if lane-2 >= seg(8) {
			o[3] = val(th - 2)
		}
		o[4] = val(th)
		if lane+4 < 32 {
			o[4] = val(th + 4)
		}
		o[5] = val(th)
		if lane+1 < seg(4)+4 {
			o[5] = val(th + 1)
		}
		o[6] = val(base + lane ^ 1)
		// xor 16 within segments of 16: lanes 0-15 would read a later
		// segment and keep their own value; 16-31 read an earlier one.
		o[7] = val(th)
		if lane >= 16 {
			o[7] = val(base + lane ^ 16)
		}
		o[8] = float64(0x49249249) // lanes 0, 3, 6, ..., 30
		o[9] = 1
		o[10] = 0
		if base == 0 {
			o[10] = 1
		}
		sum := 0.0
		for l := range 32 {
			sum += val(base + l)
		}
		o[11] = sum
	}
	if o := run(t, c, shuffles, [3]int{1, 1, 1}, [3]int{n, 1, 1}, 0, in, want); !o.OK {
		t.Errorf("shuffles and votes: %s", o)
	}
	// A mask that leaves a lane out while another lane reads from it.
	bad := `
extern "C" __global__ void k(float *out, const float *in) {
	const int t = threadIdx.x;
	float v = in[t];
	if (t < 16) v = __shfl_xor_sync(0x0000ffffu, v, 16);
	out[t] = v;
}
`
	in32, want32 := iota(32)
	if o := run(t, c, bad, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, in32, want32); o.OK || !strings.Contains(o.Error, "outside the mask") {
		t.Errorf("a shuffle reading outside its mask: %s", o)
	}
}

// TestSoftmax checks configs of softmax's CUDA template under emulation on
// odd shapes: one element, primes, rows off a vector boundary, a tail
// block of rows.
func TestSoftmax(t *testing.T) {
	c := checker(t, false)
	tmpl, ok := kernels.TemplateFor(softmax.Op.Name, kernels.CUDA)
	if !ok {
		t.Fatal("no CUDA template of softmax")
	}
	tg := target(t, "sm_90")
	r := rand.New(rand.NewPCG(1, 2))
	// Each config is a g++ build of about a second: two per shape by
	// default (CI's autotune check covers more), six with
	// AUTOTUNE_EXHAUSTIVE=1.
	perShape := 1
	if os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1" {
		perShape = 6
	}
	for _, shape := range [][]int{{1, 1}, {3, 7}, {13, 97}, {5, 1023}, {2, 4099}} {
		sp := tmpl.Space(shape, tg)
		cfgs := sample(t, sp, r, perShape)
		reports, err := c.Check(context.Background(), tmpl, shape, tg, cfgs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rep := range reports {
			if !rep.Passed() {
				t.Errorf("%v %s: %s", shape, rep.Config, rep.Emu)
			}
		}
	}
}

// sample returns n distinct valid configs of sp and the first valid one.
func sample(t *testing.T, sp *schedule.Space, r *rand.Rand, n int) []schedule.Config {
	t.Helper()
	seen := map[string]bool{}
	var out []schedule.Config
	for i := range sp.Size() {
		if c := sp.At(i); sp.Valid(c) {
			out, seen[c.String()] = append(out, c), true
			break
		}
	}
	for tries := 0; len(out) < n+1 && tries < 100*n; tries++ {
		c, err := sp.Sample(r)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[c.String()] {
			out, seen[c.String()] = append(out, c), true
		}
	}
	return out
}

// TestSoftmaxPlantedBug breaks one softmax kernel (its last element is
// never written) and expects the check to name the element.
func TestSoftmaxPlantedBug(t *testing.T) {
	c := checker(t, false)
	tg := target(t, "sm_80")
	shape := []int{3, 33}
	sp := softmax.CUDATemplate.Space(shape, tg)
	cfg, err := sp.Parse("tpr=32,rows_per_block=1,vec=1,keep=global,algo=threepass,exp=precise")
	if err != nil {
		t.Fatal(err)
	}
	k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, Config: cfg})
	k.Source = strings.Replace(k.Source, "reinterpret_cast<float *>(y + head)[k] =", "if (k != nvec - 1) reinterpret_cast<float *>(y + head)[k] =", 1)
	ins, want, err := measure.NewData(context.Background(), softmax.Op, shape, dtype.F32, 1)
	if err != nil {
		t.Fatal(err)
	}
	rel, abs := softmax.Op.Tolerance(shape, dtype.F32)
	o, err := c.Emulate(context.Background(), k, "sm_80", ins, want, rel, abs)
	if err != nil {
		t.Fatal(err)
	}
	if o.OK || !strings.Contains(o.Error, "out[32] = NaN") {
		t.Errorf("a kernel that skips each row's last element: %s; want out[32] = NaN", o)
	}
}
