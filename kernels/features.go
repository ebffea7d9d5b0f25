package kernels

import (
	"math"
	"strconv"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// ModelFeatures returns the cost model's input for configs of space, the
// space of t for shape on target: the config's own features
// (schedule.Space.Features), t's analytic ones (Template.Features), then
// the workload's, log2 of each dimension, so that one model learns across
// shapes; for a CUDA template, then what the compiler gave the config's
// kernel, all unknown here (see ModelFeaturesCompiled). The tuner trains
// its model on these vectors, and the report evaluates a model on the same
// ones.
func (t Template) ModelFeatures(space *schedule.Space, shape []int, target device.Target) func(schedule.Config) []float64 {
	return t.ModelFeaturesCompiled(space, shape, target, nil)
}

// Compiled says what the compiler gave the kernel of a config: registers
// and local memory (spills) per thread, in bytes; ok is false for a config
// that was never compiled.
type Compiled func(schedule.Config) (registers, localBytes int, ok bool)

// ModelFeaturesCompiled is ModelFeatures with the compiled resources of a
// CUDA template's configs from compiled (nil: none known): three more
// features, 1 when the config's are known (0 otherwise, with the other two
// 0), its registers per thread and log2(1 + local bytes per thread). A CPU
// template has none of them. They are known for a config once it has been
// compiled at any shape (the tuner keeps what the measurer reported),
// before which the model ranks it on the others alone.
func (t Template) ModelFeaturesCompiled(space *schedule.Space, shape []int, target device.Target, compiled Compiled) func(schedule.Config) []float64 {
	wf := make([]float64, len(shape))
	for i, n := range shape {
		wf[i] = math.Log2(float64(n))
	}
	return func(c schedule.Config) []float64 {
		f := space.Features(c)
		if t.Features != nil {
			f = append(f, t.Features(shape, target, c)...)
		}
		f = append(f, wf...)
		if t.Backend != CUDA {
			return f
		}
		if compiled != nil {
			if regs, local, ok := compiled(c); ok {
				return append(f, 1, float64(regs), math.Log2(1+float64(local)))
			}
		}
		return append(f, 0, 0, 0)
	}
}

// compiledFeatureNames name the features ModelFeaturesCompiled adds for a
// CUDA template.
var compiledFeatureNames = []string{"compiled", "registers", "local bytes (log2)"}

// ModelFeatureNames names the entries of ModelFeatures' vectors for shape:
// the space's feature names, "analytic 1", "analytic 2", … for the
// template's, "log2 D" for each dimension D of Op.Dims, and for a CUDA
// template those of the compiled resources.
func (t Template) ModelFeatureNames(space *schedule.Space, shape []int, target device.Target) []string {
	names := space.FeatureNames()
	if t.Features != nil && space.Size() > 0 {
		for i := range t.Features(shape, target, space.At(0)) {
			names = append(names, "analytic "+strconv.Itoa(i+1))
		}
	}
	for i := range shape {
		d := "d" + strconv.Itoa(i)
		if i < len(t.Dims) {
			d = t.Dims[i]
		}
		names = append(names, "log2 "+d)
	}
	if t.Backend == CUDA {
		names = append(names, compiledFeatureNames...)
	}
	return names
}
