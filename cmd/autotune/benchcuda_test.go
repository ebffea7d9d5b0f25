package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/measure/cuda"
)

// fakeGPU answers a bench with fixed samples: the tuned kernel 2 ms,
// cuBLAS 1 ms, the peak loop 0.5 ms for 1e10 FLOPs, the floor 0.1 ms
// for 2 MB; and cuBLAS left out, with a note, for ops but gemm.
type fakeGPU struct{ asked cuda.BenchBatch }

func (f *fakeGPU) GPU() string { return "Fake GPU 9000 (sm_90)" }

func (f *fakeGPU) Bench(_ context.Context, b cuda.BenchBatch) ([]cuda.BenchResult, []string, error) {
	f.asked = b
	flops, bytes := 1e9, 4e6
	entry := func(name string, checked bool, bytes, flops, ns float64) cuda.BenchResult {
		return cuda.BenchResult{Name: name, Doc: name + " doc", Checked: checked, Bytes: bytes, FLOPs: flops,
			SamplesNS: []float64{ns, ns, ns}, MedianNS: ns, P20NS: ns, P80NS: ns}
	}
	res := []cuda.BenchResult{entry(cuda.BenchTuned, true, bytes, flops, 2e6)}
	var notes []string
	if b.Template.Op.Name == "gemm" {
		res = append(res, entry(cuda.BenchCUBLAS, true, bytes, flops, 1e6))
	} else {
		notes = append(notes, "cublas: for gemm only")
	}
	return append(res, entry(cuda.BenchPeak, false, 0, 1e10, 0.5e6), entry(cuda.BenchFloor, false, 2e6, 0, 0.1e6)), notes, nil
}

// TestBenchCUDATable runs bench --device sm_90 on a fake GPU and checks
// the JSON (rates, ratios, the peak, the notes), the table and the report.
func TestBenchCUDATable(t *testing.T) {
	fake := &fakeGPU{}
	defer func(old func(workload, uint64) (gpuBencher, error)) { newGPUBencher = old }(newGPUBencher)
	newGPUBencher = func(workload, uint64) (gpuBencher, error) { return fake, nil }
	dir := t.TempDir()
	args := []string{"bench", "--op", "gemm", "--shape", "64x32x16", "--device", "sm_90", "--db", filepath.Join(dir, "none.db"),
		"--samples", "3", "--report", filepath.Join(dir, "bench.html")}
	code, stdout, stderr := run(t, "", append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if fake.asked.MinSamples != 3 || !slices.Equal(fake.asked.Shape, []int{64, 32, 16}) || fake.asked.Config.Len() == 0 {
		t.Errorf("the GPU was asked %+v", fake.asked)
	}
	var b benchJSON
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	var names []string
	for _, r := range b.Results {
		names = append(names, r.Name)
	}
	if want := []string{"tuned", "cublas", "peak", "floor"}; !slices.Equal(names, want) {
		t.Fatalf("results %v, want %v", names, want)
	}
	tuned, cublas, floor := b.Results[0], b.Results[1], b.Results[3]
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if !near(tuned.GFLOPs, 500) || !near(tuned.GBps, 2) || !near(cublas.VsTuned, 0.5) || !near(floor.GBps, 20) || tuned.Config == nil {
		t.Errorf("tuned %+v, cublas %+v, floor %+v: want 500 GFLOP/s and 2 GB/s, cuBLAS 0.5× the time, the floor 20 GB/s", tuned, cublas, floor)
	}
	if !near(b.PeakGFLOPs, 20000) || !near(b.OfPeak, 0.025) || b.Machine != fake.GPU() || b.Device != "sm_90" || b.ISA != "" {
		t.Errorf("peak %v (want 20000), of peak %v (want 0.025), machine %q, device %q, isa %q", b.PeakGFLOPs, b.OfPeak, b.Machine, b.Device, b.ISA)
	}
	if len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "default config") || !strings.Contains(tuned.Doc, "default config") {
		t.Errorf("notes %q, tuned doc %q: want the default config said", b.Notes, tuned.Doc)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "bench.html")); err != nil || !strings.Contains(string(page), "cublas") {
		t.Errorf("--report: %v, or no cublas row", err)
	}

	code, stdout, stderr = run(t, "", "bench", "--op", "softmax", "--shape", "64x32", "--device", "sm_90", "--db", filepath.Join(dir, "none.db"))
	if code != 0 {
		t.Fatalf("softmax: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"Fake GPU 9000", "NAME", "tuned", "peak", "floor", "runs at", "of the FMA peak", "note: cublas: for gemm only"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "isa") {
		t.Errorf("the table has an isa line on a GPU:\n%s", stdout)
	}
}
