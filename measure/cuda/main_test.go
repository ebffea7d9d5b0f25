package cuda

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as a worker: the real one
// (WorkerArg), as the autotune command does, or a scripted fake one
// (fakeWorkerArg) for the tests of the parent's side.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case WorkerArg:
			os.Exit(ServeWorker(os.Stdin, os.Stdout))
		case fakeWorkerArg:
			os.Exit(fakeWorker(os.Args[2]))
		}
	}
	os.Exit(m.Run())
}

const fakeWorkerArg = "fake-cuda-worker"

// fakeWorker acts out script, one comma-separated word per kernel ID: ok,
// build (a build error), wrong, crash (dies after starting), hang, sticky
// (reports a runtime error, then exits as after an illegal address), or
// fatal (before any kernel). A bench acts out the first word (fakeBench).
func fakeWorker(script string) int {
	var j job
	if err := json.NewDecoder(os.Stdin).Decode(&j); err != nil {
		return 9
	}
	acts := strings.Split(script, ",")
	enc := json.NewEncoder(os.Stdout)
	if j.Bench != nil && acts[0] != "fatal" {
		enc.Encode(fakeBench(j, acts[0]))
		return exitOK
	}
	for _, k := range j.Kernels {
		act := acts[k.ID]
		if act == "fatal" {
			enc.Encode(event{Kind: "fatal", Error: "no GPU today"})
			return exitFatal
		}
		enc.Encode(event{Kind: "start", ID: k.ID})
		switch act {
		case "ok":
			enc.Encode(event{Kind: "result", ID: k.ID, Status: "ok", SamplesNS: []float64{3, 1, 2}, BuildNS: 7, RunNS: 11, Registers: 40, LocalB: 16})
		case "build":
			enc.Encode(event{Kind: "result", ID: k.ID, Status: "build_error", Error: "error: expected a \";\""})
		case "wrong":
			enc.Encode(event{Kind: "result", ID: k.ID, Status: "wrong_answer", Error: "out[3] = NaN, want 0.5"})
		case "crash":
			os.Stderr.WriteString("segmentation violation\n")
			return 2
		case "hang":
			time.Sleep(time.Minute)
		case "sticky":
			enc.Encode(event{Kind: "result", ID: k.ID, Status: "runtime_error", Error: "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)"})
			return exitSticky
		}
	}
	return exitOK
}

// fakeBench answers a bench job: for "wrong", the error of a wrong tuned
// kernel; otherwise the tuned kernel with samples 3, 1, 2 and the job's
// bytes and FLOPs, cuBLAS with the bytes of float32 for a GEMM, and the
// floor, with a note naming the entry (the job's tuned doc) it echoes.
func fakeBench(j job, act string) event {
	e := event{Kind: "bench"}
	b := j.Bench
	if act == "wrong" {
		e.Error = "the tuned kernel: a wrong answer, not timed: input set gaussian: out[3] = NaN, want 0.5"
		return e
	}
	e.Bench = append(e.Bench, BenchResult{Name: BenchTuned, Doc: b.TunedDoc, Checked: true, Bytes: b.Bytes, FLOPs: b.FLOPs, SamplesNS: []float64{3, 1, 2}})
	if len(b.GEMM) == 3 {
		e.Bench = append(e.Bench, BenchResult{Name: BenchCUBLAS, Checked: true, Bytes: b.BytesF32, FLOPs: b.FLOPs, SamplesNS: []float64{1, 1, 1}})
	}
	e.Bench = append(e.Bench, BenchResult{Name: BenchFloor, Bytes: 8, SamplesNS: []float64{5, 4, 6}})
	e.Notes = []string{fmt.Sprintf("samples %d, warmup %d, min time %d", j.Samples, j.Warmup, j.MinTimeNS)}
	return e
}
