package gemm

import (
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// halfShapes are the shapes of the 16-bit test: one element, tails of
// every tile and block in M, N and K, and a K long enough for f16's large
// inputs to sum far from its range's edges.
var halfShapes = [][]int{{1, 1, 1}, {7, 13, 5}, {67, 33, 129}, {17, 1, 1031}}

// TestHalfKernels checks GEMM's and its epilogues' kernels of bf16 and f16
// (float32 kernels on float32 copies, kernels/halfcopy): every fifth
// config of the short grid on halfShapes, the plain forms of assembly, and
// generic kernels of a few configs on the same shapes, on the input sets
// of each dtype rounded to it, against the float64 reference with the
// tolerance of a 16-bit output. A sample is enough: the float32 tests
// sweep every config, and a 16-bit kernel wraps the same float32 code.
func TestHalfKernels(t *testing.T) {
	host := device.Host()
	for _, tmpl := range []*kernels.Template{&Template, &BiasTemplate, &BiasReLUTemplate} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				var specs []kerneltest.Spec
				n := 0
				for _, shape := range halfShapes {
					for _, cfg := range grid(t, shape, host, true) {
						if n++; n%5 != 0 {
							continue
						}
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape})
						if tmpl.Go.Asm(cfg) {
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
						}
					}
				}
				for i, cfg := range genericConfigs(t, tmpl) {
					if i%7 != 0 {
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
