package softmax

import (
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// halfShapes are the shapes of the 16-bit test: one element, partial
// vectors, a long row with a tail, many short rows.
var halfShapes = [][]int{{1, 1}, {3, 17}, {5, 48}, {7, 1023}, {131, 33}, {1, 4099}}

// TestHalfKernels checks softmax's kernels of bf16 and f16: every fourth
// config of the short grid on halfShapes, the plain forms of assembly,
// and every third of genericConfigs shape-generic on the same shapes, each
// on the op's input sets for the dtype rounded to it, against the float64
// reference with the tolerance of a 16-bit output. A sample is enough: the
// float32 tests sweep every config, and a 16-bit kernel wraps the same
// float32 rows.
func TestHalfKernels(t *testing.T) {
	host := device.Host()
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			var specs []kerneltest.Spec
			n := 0
			for _, shape := range halfShapes {
				for _, cfg := range grid(t, shape, host, true) {
					if n++; n%4 != 0 {
						continue
					}
					specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape})
					if Template.Go.Asm(cfg) {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
					}
				}
			}
			for i, cfg := range genericConfigs(t) {
				if i%3 != 0 {
					continue
				}
				for _, shape := range halfShapes {
					specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true})
				}
			}
			kerneltest.CheckDType(t, &Template, dt, specs)
		})
	}
}
