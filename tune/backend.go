package tune

import (
	"context"
	"fmt"
	"slices"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/measure/cuda"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
)

// MeasurerOptions are what every backend's measurer is configured with.
type MeasurerOptions struct {
	Seed   uint64        // fixes the harness's random inputs
	Target device.Target // where the candidates run
	// Env is added to the environment of the CPU harness processes
	// (cpu.Options.Env): a GODEBUG that hides AVX-512, to tune at AVX2.
	Env []string
}

// measurers maps a backend to the constructor of its measurer: the one place
// that knows which package measures on which backend. A constructor fails when this machine cannot measure on
// o.Target (no GPU, no driver), saying what is missing.
var measurers = map[kernels.Backend]func(o MeasurerOptions) (Measurer, error){
	kernels.CPU:  func(o MeasurerOptions) (Measurer, error) { return cpu.New(&cpu.Options{Seed: o.Seed, Env: o.Env}), nil },
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

// Toolchainer is a measurer that names the toolchain that builds its
// candidates, as tunedb.Workload.Toolchain holds it (cpu.Measurer,
// cuda.Measurer).
type Toolchainer interface {
	Toolchain(ctx context.Context) (string, error)
}

var (
	_ Toolchainer = (*cpu.Measurer)(nil)
	_ Toolchainer = (*cuda.Measurer)(nil)
)

// ToolchainOf returns the toolchain m builds candidates with, or "" when m
// cannot say: a remote measurer, whose workers may build with others.
func ToolchainOf(ctx context.Context, m Measurer) (string, error) {
	if tc, ok := m.(Toolchainer); ok {
		return tc.Toolchain(ctx)
	}
	return "", nil
}

// LocalToolchain returns the toolchain this machine builds candidates of
// backend b with, without starting a measurer: the Go version of the go
// command for the CPU, NVRTC's version for CUDA; "" when there is none to
// ask. Readers of the database (best, bench, gen) prefer its records.
func LocalToolchain(ctx context.Context, b kernels.Backend) string {
	switch b {
	case kernels.CPU:
		tc, _ := cpu.New(nil).Toolchain(ctx)
		return tc
	case kernels.CUDA:
		if nv, err := driver.OpenNVRTC(); err == nil {
			if v, err := nv.Version(); err == nil {
				return "nvrtc" + v
			}
		}
	}
	return ""
}
