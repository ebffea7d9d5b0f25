package tune

import (
	"fmt"
	"slices"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cpu"
)

// MeasurerOptions are what every backend's measurer is configured with.
type MeasurerOptions struct {
	Seed uint64 // fixes the harness's random inputs
}

// measurers maps a backend to the constructor of its measurer: the one place
// that knows which package measures on which backend. The CUDA backend adds
// its line here.
var measurers = map[kernels.Backend]func(MeasurerOptions) Measurer{
	kernels.CPU: func(o MeasurerOptions) Measurer { return cpu.New(&cpu.Options{Seed: o.Seed}) },
}

// HasBackend reports whether b can be measured by this build of autotune.
func HasBackend(b kernels.Backend) bool { return measurers[b] != nil }

// NewMeasurer returns the measurer of backend b.
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
	return newMeasurer(o), nil
}
