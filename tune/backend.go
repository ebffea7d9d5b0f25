package tune

import (
	"fmt"
	"slices"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/measure/cuda"
)

// MeasurerOptions are what every backend's measurer is configured with.
type MeasurerOptions struct {
	Seed   uint64        // fixes the harness's random inputs
	Target device.Target // where the candidates run
}

// measurers maps a backend to the constructor of its measurer: the one place
// that knows which package measures on which backend. A constructor fails when this machine cannot measure on
// o.Target (no GPU, no driver), saying what is missing.
var measurers = map[kernels.Backend]func(o MeasurerOptions) (Measurer, error){
	kernels.CPU:  func(o MeasurerOptions) (Measurer, error) { return cpu.New(&cpu.Options{Seed: o.Seed}), nil },
	kernels.CUDA: func(o MeasurerOptions) (Measurer, error) { return cuda.New(&cuda.Options{Seed: o.Seed}, o.Target) },
}

// HasBackend reports whether b can be measured by this build of autotune.
func HasBackend(b kernels.Backend) bool { return measurers[b] != nil }

// NewMeasurer returns the measurer of backend b for o.Target.
func NewMeasurer(b kernels.Backend, o MeasurerOptions) (Measurer, error) {
	newMeasurer, ok := measurers[b]
	if !ok {
		var known []string
		for k := range measurers {
			known = append(known, string(k))
		}
		slices.Sort(known)
		return nil, fmt.Errorf("tune: no %s backend yet (measured here: %v)", b, known)
	}
	return newMeasurer(o)
}

var _ Measurer = (*cuda.Measurer)(nil)
