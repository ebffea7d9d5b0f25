package cpu

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
)

// peakSteps is the steps of the peak loop per goroutine and call: 2^18
// steps of 12 FMAs make a call about 1 ms at 16 lanes, long enough that
// starting goroutines and waking idle threads (some 0.1 ms on a VM) are
// noise.
const peakSteps = 1 << 18

// peakSource is package peak, which the bench module gets a copy of.
//
//go:embed peak
var peakSource embed.FS

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

// peakGoroutines is one per core of the target.
func peakGoroutines(t device.Target) int {
	if t.CPU == nil {
		return 1
	}
	return max(t.CPU.Cores, 1)
}

// peakFiles returns the files of package peak but its tests, by name.
func peakFiles() (map[string][]byte, error) {
	files := make(map[string][]byte)
	err := fs.WalkDir(peakSource, "peak", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := peakSource.ReadFile(p)
		files[path.Base(p)] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cpu: bench: the peak package: %w", err)
	}
	return files, nil
}

// emitPeak adds to f (package peak) the FMA peak as a kernel: func
// Kernel(out, in0, ...) that runs peak.Run on goroutines goroutines and
// writes its result to out[0], so that nothing can be dropped.
func emitPeak(f *jen.File, inputs, lanes, goroutines int) {
	params := []jen.Code{jen.Id("out")}
	var body []jen.Code
	for i := range inputs {
		params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
		body = append(body, jen.Id("_").Op("=").Id(fmt.Sprintf("in%d", i)))
	}
	f.Add(comment(fmt.Sprintf("%s runs Run(%d, %d, %d), %g FLOPs in all, and writes its result to\n"+
		"out[0]; it reads no input. Its FLOPs per second are the machine's multiply-add peak.",
		kernelName, lanes, goroutines, peakSteps, peak.FLOPs(lanes, goroutines, peakSteps))))
	body = append(body, jen.Id("out").Index(jen.Lit(0)).Op("=").Id("Run").Call(jen.Lit(lanes), jen.Lit(goroutines), jen.Lit(peakSteps)))
	f.Func().Id(kernelName).Params(jen.List(params...).Index().Float32()).Block(body...)
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
