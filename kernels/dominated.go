package kernels

import (
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// ScalarDominated is a Template.Dominated for a CPU template with a "vec"
// knob: a scalar config (vec=1) is dominated on a target that runs
// vectors, being the same loops a lane at a time, many times slower (16
// to 60 times, for softmax).
func ScalarDominated(_ []int, target device.Target, cfg schedule.Config) bool {
	return cfg.Int("vec") == 1 && WidestVector(target) > 1
}

// ScalarExpDominated is a Template.Dominated for a CPU template with
// "vec" and "exp" knobs (codegen/golang.Exp): on a target that runs
// vectors, a scalar config is dominated, and so is exp=f64, which calls
// math.Exp a lane at a time where a polynomial exp computes a whole
// vector in a few fused multiply-adds.
func ScalarExpDominated(shape []int, target device.Target, cfg schedule.Config) bool {
	return ScalarDominated(shape, target, cfg) || cfg.Str("exp") == "f64" && WidestVector(target) > 1
}
