package cpu

import (
	"slices"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// peakSteps is the steps of the peak loop per goroutine and call: 2^18
// steps of 12 FMAs make a call about 1 ms at 16 lanes, long enough that
// starting goroutines and waking idle threads (some 0.1 ms on a VM) are
// noise.
const peakSteps = 1 << 18

// peakLanes returns the widest float32 vector the target's ISA runs
// multiply-adds on: 16 lanes with AVX-512, 8 with AVX2 and FMA, else 1.
func peakLanes(t device.Target) int {
	switch {
	case t.CPU != nil && t.CPU.ISA.AVX512:
		return 16
	case t.CPU != nil && t.CPU.ISA.AVX2 && t.CPU.ISA.FMA:
		return 8
	}
	return 1
}

// dotPeak reports whether a bench of dt's workloads on t takes
// VDPBF16PS's peak instead of the FMAs': bf16 on an amd64 CPU with
// AVX512-BF16, where gemm's convert=dot tiles (and oneDNN's bf16 matmul)
// run that instruction, at twice the FMAs' multiply-adds, so that the
// FMA peak would read as a ceiling they pass.
func dotPeak(t device.Target, dt dtype.DType) bool {
	return dt == dtype.BF16 && kernels.ArchOf(t) == kernels.AMD64 && t.CPU != nil && t.CPU.ISA.AVX512BF16
}

// peakGoroutines is one per core of the target.
func peakGoroutines(t device.Target) int {
	if t.CPU == nil {
		return 1
	}
	return max(t.CPU.Cores, 1)
}

// PeakGFLOPs returns the machine's multiply-add peak in GFLOP/s from the
// results of a bench: the peak entry's best sample, since the loop never
// runs faster than the machine but runs slower whenever something else
// takes a core. When the median of a checked entry (the tuned kernel, a
// baseline) is faster still, the loop fell short of the machine, and the
// peak is that entry's median instead: raisedBy names the entry and loop
// is the peak loop's own figure. No entry then runs at more than 100% of
// the peak. All zero for a bench without a peak.
func PeakGFLOPs(res []BenchResult) (gflops float64, raisedBy string, loop float64) {
	for _, r := range res {
		if r.Name == BenchPeak && len(r.SamplesNS) > 0 {
			if best := slices.Min(r.SamplesNS); best > 0 {
				loop = r.FLOPs / best
			}
		}
	}
	if loop == 0 {
		return 0, "", 0
	}
	gflops = loop
	for _, r := range res {
		if r.Checked && r.MedianNS > 0 && r.FLOPs/r.MedianNS > gflops {
			gflops, raisedBy = r.FLOPs/r.MedianNS, r.Name
		}
	}
	return gflops, raisedBy, loop
}
