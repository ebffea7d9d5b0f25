package cuda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/measure/harness"
)

// fakeGPUWorker builds the fake libcuda, NVRTC and cuBLAS of
// driver/testdata, puts the last two where their loaders look first
// ($CUDA_HOME/lib64), and returns the fake driver's path.
func fakeGPUWorker(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the fake libraries are loaded on Linux only")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no C compiler to build the fake CUDA libraries")
	}
	home := t.TempDir()
	lib := filepath.Join(home, "lib64")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, name := range map[string]string{"fakecuda.c": "libcuda.so.1", "fakenvrtc.c": "libnvrtc.so.13", "fakecublas.c": "libcublas.so.13"} {
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", filepath.Join(lib, name), filepath.Join("driver", "testdata", src)).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", src, err, out)
		}
	}
	t.Setenv("CUDA_HOME", home)
	return filepath.Join(lib, "libcuda.so.1")
}

// writeGEMM2x3x4 writes, to a new directory it returns, one input set of
// a 2×3×4 GEMM and its reference, which the fake driver's gemm2x3x4
// kernel computes.
func writeGEMM2x3x4(t *testing.T) string {
	t.Helper()
	a := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	b := []float32{1, 0, -1, 2, 1, 0, 0, 3, 1, -2, 0, 1}
	want := make([]float64, 6)
	for i := range 2 {
		for j := range 3 {
			for k := range 4 {
				want[i*3+j] += float64(a[i*4+k]) * float64(b[k*3+j])
			}
		}
	}
	dir := t.TempDir()
	info := harness.SetInfo{Name: "small", Rel: 1e-6, Abs: 1e-6}
	if err := harness.Write(dir, harness.Workload{DType: "f32", Inputs: []int{8, 12}, Output: 6, Sets: []harness.SetInfo{info}},
		[]harness.Set{{SetInfo: info, Ins: [][]float32{a, b}, Want: want}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serve runs a worker on j in this process and returns what it wrote,
// failing unless it exits 0.
func serve(t *testing.T, j job) *bytes.Buffer {
	t.Helper()
	in, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := make(chan int)
	go func() { code <- ServeWorker(bytes.NewReader(in), &out) }() // it locks its thread for good
	if c := <-code; c != exitOK {
		t.Fatalf("the worker exited %d: %s", c, out.String())
	}
	return &out
}

// runFakeBench runs a worker, in this process, on a bench of the fake
// driver's 2×3×4 GEMM kernel entry (gemm2x3x4 computes it; record, any
// other entry, writes nothing) and returns its event.
func runFakeBench(t *testing.T, entry string) event {
	driverPath := fakeGPUWorker(t)
	dir := writeGEMM2x3x4(t)
	j := job{DriverPath: driverPath, Arch: "sm_86", Dir: dir, Samples: 4, Warmup: 2,
		Kernels: []kernel{{Source: "// the fake compiles anything", Entry: entry, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}},
		Bench:   &benchJob{TunedDoc: "the tuned kernel", Bytes: 104, FLOPs: 48, BytesF32: 104, GEMM: []int{2, 3, 4}}}
	out := serve(t, j)
	var e event
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatalf("the worker's answer %q: %v", out.String(), err)
	}
	return e
}

// TestBenchOnFakeGPU runs the worker's side of a bench on the fake
// libraries: the tuned kernel checked, cuBLAS checked, the peak loop and
// the floor, each with its samples, and the rates the parent needs.
func TestBenchOnFakeGPU(t *testing.T) {
	e := runFakeBench(t, "gemm2x3x4")
	if e.Kind != "bench" || e.Error != "" || len(e.Notes) > 0 {
		t.Fatalf("answer %+v, want a bench without error or notes", e)
	}
	var names []string
	for _, r := range e.Bench {
		names = append(names, r.Name)
		// The fake's events are 0.25 ms apart, and the timer makes two.
		if len(r.SamplesNS) != 4 || r.SamplesNS[0] != 250000 {
			t.Errorf("%s: samples %v, want 4 of 250000 ns", r.Name, r.SamplesNS)
		}
		if r.Checked != (r.Name == BenchTuned || r.Name == BenchCUBLAS) {
			t.Errorf("%s: checked %v", r.Name, r.Checked)
		}
	}
	if want := []string{BenchTuned, BenchCUBLAS, BenchPeak, BenchFloor}; !slices.Equal(names, want) {
		t.Fatalf("entries %v, want %v", names, want)
	}
	tuned, cublas, peak, floor := e.Bench[0], e.Bench[1], e.Bench[2], e.Bench[3]
	if tuned.FLOPs != 48 || tuned.Bytes != 104 || cublas.FLOPs != 48 || !strings.Contains(cublas.Doc, "libcublas.so.13") {
		t.Errorf("tuned %+v, cublas %+v: want the job's FLOPs and bytes, and cuBLAS's path", tuned, cublas)
	}
	// 2 multiprocessors of 2048 threads, 8 chains of 4096 steps.
	if peak.FLOPs != 2*8*4096*2*2048 || floor.Bytes != 2*4*6 {
		t.Errorf("peak %v FLOPs, floor %v bytes; want %v and %v", peak.FLOPs, floor.Bytes, 2*8*4096*2*2048, 2*4*6)
	}
}

// TestBenchOnFakeGPUWrongKernel: a tuned kernel that writes nothing fails
// its check, and the bench is an error, not timed.
func TestBenchOnFakeGPUWrongKernel(t *testing.T) {
	e := runFakeBench(t, "record")
	if !strings.Contains(e.Error, "wrong answer, not timed") || len(e.Bench) > 0 {
		t.Errorf("answer %+v, want the wrong answer as the error and no entries", e)
	}
}

// TestWorkerCompilesAhead runs a job of three kernels, whose IDs are not
// their places in it, on the fake libraries: each result is its own
// kernel's (a correct one, one NVRTC refuses, one that writes nothing), in
// the job's order, whichever compiled first.
func TestWorkerCompilesAhead(t *testing.T) {
	driverPath := fakeGPUWorker(t)
	dir := writeGEMM2x3x4(t)
	k := func(id int, src, entry string) kernel {
		return kernel{ID: id, Source: src, Entry: entry, Grid: [3]int{1, 1, 1}, Block: [3]int{1, 1, 1}}
	}
	j := job{DriverPath: driverPath, Arch: "sm_86", Dir: dir, Samples: 2, Warmup: 1, Kernels: []kernel{
		k(7, "// compiles", "gemm2x3x4"), k(3, "#error no", "gemm2x3x4"), k(5, "// compiles", "record")}}
	out := serve(t, j)
	var got []string
	dec := json.NewDecoder(out)
	for {
		var e event
		if err := dec.Decode(&e); err != nil {
			break
		}
		if e.Kind == "result" {
			got = append(got, fmt.Sprintf("%d %s", e.ID, e.Status))
			if e.Status == string(measure.StatusBuildError) && !strings.Contains(e.Error, "#error in the source") {
				t.Errorf("kernel %d: error %q, want NVRTC's log", e.ID, e.Error)
			}
		}
	}
	wantSeq := []string{"7 ok", "3 build_error", "5 wrong_answer"}
	if !slices.Equal(got, wantSeq) {
		t.Fatalf("results %q, want %q", got, wantSeq)
	}

	// Three compilers on six kernels: each result is its kernel's.
	nv, err := driver.OpenNVRTC()
	if err != nil {
		t.Fatal(err)
	}
	var ks []kernel
	for i := range 6 {
		src := "// compiles"
		if i%2 == 1 {
			src = "#error"
		}
		ks = append(ks, k(10*i, src, "e"))
	}
	ahead := compileAhead(nv, ks, "sm_86", 3)
	for i, kk := range ks {
		c := <-ahead[kk.ID]
		if bad := c.err != nil; bad != (i%2 == 1) {
			t.Errorf("kernel %d: error %v, want one only for the odd ones", kk.ID, c.err)
		}
	}
}
