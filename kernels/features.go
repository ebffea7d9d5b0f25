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
// shapes. The tuner trains its model on these vectors, and the report
// evaluates a model on the same ones.
func (t Template) ModelFeatures(space *schedule.Space, shape []int, target device.Target) func(schedule.Config) []float64 {
	wf := make([]float64, len(shape))
	for i, n := range shape {
		wf[i] = math.Log2(float64(n))
	}
	return func(c schedule.Config) []float64 {
		f := space.Features(c)
		if t.Features != nil {
			f = append(f, t.Features(shape, target, c)...)
		}
		return append(f, wf...)
	}
}

// ModelFeatureNames names the entries of ModelFeatures' vectors for shape:
// the space's feature names, "analytic 1", "analytic 2", … for the
// template's, and "log2 D" for each dimension D of Op.Dims.
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
	return names
}
