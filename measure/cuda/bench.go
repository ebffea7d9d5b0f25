package cuda

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
	"github.com/autotune-dev/autotune/schedule"
)

// Names of a bench's entries; the tuned kernel's, the peak's and the
// floor's are those of the CPU bench (package measure/cpu).
const (
	BenchTuned  = "tuned"
	BenchCUBLAS = "cublas"
	BenchPeak   = "peak"
	BenchFloor  = "floor"
)

// CUBLASOp is the op Bench compares with cuBLAS: plain GEMM (the epilogues
// of gemm_bias and gemm_bias_relu are not cuBLAS's).
const CUBLASOp = "gemm"

// BenchBatch is a bench: the tuned config of a workload against the
// baselines of the GPU.
type BenchBatch struct {
	Template   kernels.Template // a CUDA template
	Shape      []int
	DType      dtype.DType // "" means dtype.Default
	Target     device.Target
	Config     schedule.Config
	MinSamples int           // samples of each entry, at least
	MinTime    time.Duration // and at least this long, all entries together
}

// BenchResult is one entry of a bench.
type BenchResult struct {
	Name    string  // BenchTuned, BenchCUBLAS, BenchPeak or BenchFloor
	Doc     string  // one line: what it runs
	Checked bool    // compared with the float64 reference and passed; false for the peak and the floor
	Bytes   float64 // memory one launch must move: the op's, or what the floor reads and writes; 0 for the peak
	FLOPs   float64 // the op's, or the peak loop's; 0 for the floor

	SamplesNS []float64 // every timed launch, in ns, in round order
	MedianNS  float64   `json:"-"` // measure.Summarize(SamplesNS)
	P20NS     float64   `json:"-"`
	P80NS     float64   `json:"-"`
}

// Bench runs the tuned kernel of b in a worker next to the GPU's
// baselines, interleaved: cuBLAS's float32 GEMM for op gemm (on float32
// copies of the inputs, whatever the workload's dtype; left out, with a
// note, where cuBLAS cannot be loaded), a peak loop of float32 FMAs filling
// every multiprocessor, and a floor, a device-to-device copy of the input
// to the output (cuMemcpyDtoD). The tuned kernel is first checked on every
// input set and cuBLAS on the first, as a candidate is in tuning; a wrong
// tuned kernel is an error, not timed. Each entry is launched
// Options.Warmup times, then sampled in rounds, one launch of each entry in
// an order rotated every round, each launch timed with CUDA events after L2
// is flushed, until each entry has b.MinSamples samples and b.MinTime has
// passed. It returns the entries in that order (tuned first) and the
// notes of those left out.
func (m *Measurer) Bench(ctx context.Context, b BenchBatch) ([]BenchResult, []string, error) {
	if !b.Target.IsCUDA() || b.Template.CUDA == nil {
		return nil, nil, fmt.Errorf("cuda: target %q or template %s is not CUDA", b.Target.Name, b.Template.Version)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b.Shape = slices.Clone(b.Shape)
	dt := cmp.Or(b.DType, dtype.Default)
	k, err := emit(b.Template, kernels.Kernel{Name: kernelName(b.Template.Op, b.Shape), Shape: b.Shape, DType: dt, Config: b.Config})
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: bench: %w", err)
	}
	bj := &benchJob{TunedDoc: "the tuned kernel, " + b.Config.String()}
	if b.Template.Op.FLOPs != nil {
		bj.FLOPs = b.Template.Op.FLOPs(slices.Clone(b.Shape))
	}
	bj.Bytes = b.Template.Op.BytesOf(slices.Clone(b.Shape), dt)
	bj.BytesF32 = b.Template.Op.BytesOf(slices.Clone(b.Shape), dtype.F32)
	if b.Template.Op.Name == CUBLASOp {
		bj.GEMM = slices.Clone(b.Shape)
	}

	dir, err := measure.TempDir("", "autotune-cuda")
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := m.data(ctx, measure.Batch{Template: b.Template, Shape: b.Shape, DType: dt}); err != nil {
		return nil, nil, fmt.Errorf("cuda: %w", err)
	}
	if err := harness.Write(dir, m.work, m.sets); err != nil {
		return nil, nil, fmt.Errorf("cuda: writing the inputs: %w", err)
	}
	c, err := m.start(ctx, job{
		DriverPath: m.opts.DriverPath, Arch: b.Target.GPU.Arch, Dir: dir,
		Samples: max(b.MinSamples, 1), MinTimeNS: int64(b.MinTime), Warmup: m.opts.Warmup,
		Kernels: []kernel{{Source: k.Source, Entry: k.Entry, Grid: k.Grid, Block: k.Block, SharedBytes: k.SharedBytes}},
		Bench:   bj,
	})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		c.kill()
		for range c.events { // drain, so the reader goroutine ends
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("cuda: bench interrupted: %w", ctx.Err())
		case e, ok := <-c.events:
			switch {
			case !ok:
				return nil, nil, fmt.Errorf("cuda: bench: the worker died: %s", c.status())
			case e.Kind == "fatal":
				return nil, nil, fmt.Errorf("cuda: worker: %s", e.Error)
			case e.Kind != "bench":
				return nil, nil, fmt.Errorf("cuda: the worker broke the protocol: a %q event in a bench %s", e.Kind, e.Error)
			case e.Error != "":
				return nil, nil, fmt.Errorf("cuda: bench: %s", e.Error)
			case len(e.Bench) == 0 || e.Bench[0].Name != BenchTuned:
				return nil, nil, errors.New("cuda: the worker broke the protocol: a bench without the tuned kernel first")
			}
			for i := range e.Bench {
				r := &e.Bench[i]
				r.MedianNS, r.P20NS, r.P80NS = measure.Summarize(r.SamplesNS)
			}
			return e.Bench, e.Notes, nil
		}
	}
}

// kernelName is the name of the kernel of op at shape: "softmax_4096by1024".
func kernelName(op kernels.Op, shape []int) string {
	return op.Name + "_" + strings.ReplaceAll(kernels.FormatShape(shape), "x", "by")
}
