package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/autotune-dev/autotune/kernels"
	measurecpu "github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/measure/cuda"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
)

// gpuBencher runs a bench on a GPU: *cuda.Measurer.
type gpuBencher interface {
	GPU() string
	Bench(ctx context.Context, b cuda.BenchBatch) ([]cuda.BenchResult, []string, error)
}

// newGPUBencher returns the bencher of w's GPU. It needs the driver with a
// GPU and NVRTC, and says which is missing. Tests replace it.
var newGPUBencher = func(w workload, seed uint64) (gpuBencher, error) {
	var missing []string
	if _, err := cuda.Detect(""); err != nil {
		missing = append(missing, "a CUDA driver with a GPU ("+err.Error()+")")
	}
	if _, err := driver.OpenNVRTC(); err != nil {
		missing = append(missing, "NVRTC ("+err.Error()+")")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("bench --device %s needs %s", w.target.Name, strings.Join(missing, " and "))
	}
	return cuda.New(&cuda.Options{Seed: seed}, w.target)
}

// benchCUDA is bench on a CUDA target: the best tuned config of w in the
// database (the template's default when there is none) against the GPU's
// baselines (cuda.Measurer.Bench), printed as the CPU bench prints.
func benchCUDA(std *stdio, o benchOptions, w workload, tmpl kernels.Template) error {
	gpu, err := newGPUBencher(w, o.seed)
	if err != nil {
		return err
	}
	cfg, note, err := cudaBenchConfig(std, o.db, w, tmpl)
	if err != nil {
		return err
	}
	var notes []string
	if note != "" {
		notes = append(notes, note)
		fmt.Fprintf(std.errs, "note: %s\n", note)
	}
	ctx, caught, stop := signalContext()
	defer stop()
	names := "tuned, peak, floor"
	if w.op.Name == cuda.CUBLASOp {
		names = "tuned, cuBLAS, peak, floor"
	}
	fmt.Fprintf(std.errs, "benchmarking %s: %s, interleaved, at least %d samples each and %v in all (seed %d), on %s\n",
		describeWorkload(w), names, o.samples, o.minTime, o.seed, gpu.GPU())
	res, left, err := gpu.Bench(ctx, cuda.BenchBatch{Template: tmpl, Shape: w.shape, DType: w.dtype, Target: w.target, Config: cfg,
		MinSamples: o.samples, MinTime: o.minTime})
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	for _, n := range left {
		fmt.Fprintf(std.errs, "note: %s\n", n)
	}
	out := benchJSON{Op: w.op.Name, Shape: w.shape, Device: w.target.Name, DType: string(w.dtype),
		Template: tmpl.Version, Machine: gpu.GPU(), Seed: o.seed, Notes: append(notes, left...)}
	rows := make([]measurecpu.BenchResult, len(res))
	for i, r := range res {
		rows[i] = measurecpu.BenchResult{Name: r.Name, Doc: r.Doc, Checked: r.Checked, Bytes: r.Bytes, FLOPs: r.FLOPs, Reps: 1,
			SamplesNS: r.SamplesNS, MedianNS: r.MedianNS, P20NS: r.P20NS, P80NS: r.P80NS}
	}
	if note != "" {
		rows[0].Doc = "the template's default config, " + cfg.String()
	}
	return finishBench(std, o, w, out, rows, cfg)
}

// cudaBenchConfig returns the config bench runs for w on a GPU: the best
// record of the database at path for this template and NVRTC, or, when
// there is none, the template's default, with a note saying so.
func cudaBenchConfig(std *stdio, path string, w workload, tmpl kernels.Template) (schedule.Config, string, error) {
	db, err := openDB(path, readDB)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return schedule.Config{}, "", err
	default:
		tc := tune.LocalToolchain(context.Background(), kernels.CUDA)
		best, ok, err := bestOfToolchain(db, w, tmpl, tc)
		db.Close()
		if err != nil {
			return schedule.Config{}, "", err
		}
		if ok {
			warnToolchain(std, &best, tc)
			return best.Config, "", nil
		}
	}
	cfg, err := tmpl.DefaultConfig(w.shape, w.target)
	if err != nil {
		return schedule.Config{}, "", err
	}
	return cfg, fmt.Sprintf("%s was not tuned with template %s; the tuned row is the template's default config", describeWorkload(w), tmpl.Version), nil
}
