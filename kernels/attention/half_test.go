package attention

import (
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// halfShapes are the shapes of the 16-bit test: one element, odd heads,
// sequence lengths and head sizes, a block's tail.
var halfShapes = [][]int{{1, 1, 1, 1}, {1, 3, 7, 5}, {2, 1, 37, 64}}

// TestHalfKernels checks both attention templates' kernels of bf16 and
// f16 (float32 kernels on float32 copies, kernels/halfcopy): every
// seventh config of the short grid on halfShapes, the plain forms of
// assembly, and generic kernels of a few configs, on the input sets of
// each dtype rounded to it, against the float64 reference with the
// tolerance of a 16-bit output. A sample is enough: the float32 tests
// sweep every config, and a 16-bit kernel wraps the same float32 code.
func TestHalfKernels(t *testing.T) {
	host := device.Host()
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				var specs []kerneltest.Spec
				n := 0
				for _, shape := range halfShapes {
					for _, cfg := range grid(t, shape, host, true) {
						if n++; n%7 != 0 {
							continue
						}
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape})
						if tmpl.Go.Asm(cfg) {
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
						}
					}
				}
				for i, cfg := range genericConfigs(t, tmpl) {
					if i%9 != 0 {
						continue
					}
					for _, shape := range halfShapes {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true})
					}
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}
