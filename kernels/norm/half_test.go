package norm

import (
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestHalfKernels checks the kernels of bf16 and f16 of both templates:
// every third config of the grid on the test shapes, plain forms of
// assembly included, and shape-generic kernels of each vector width on the
// generic shapes, each on the input sets of its dtype (f16's at the edges
// of its range) rounded to it, against the float64 reference with the
// tolerance of a 16-bit output. A sample is enough: the float32 tests
// sweep every config, and a 16-bit kernel wraps the same float32 rows.
func TestHalfKernels(t *testing.T) {
	for _, tmpl := range templates {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				var specs []kerneltest.Spec
				n := 0
				for _, shape := range testShapes {
					for _, cfg := range grid(t, tmpl, shape, twoCores()) {
						if n++; n%3 != 0 {
							continue
						}
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape})
						if tmpl.Go.Asm(cfg) {
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
						}
					}
				}
				// Shape-generic kernels: each vector width with the first
				// code form (the assembly, for RMSNorm's vectors).
				sp := tmpl.Space([]int{256, 100}, twoCores())
				for _, vec := range vecs {
					form := "algo=twopass"
					if tmpl.Op.Name != LayerOp.Name {
						form = codeForms[1]
						if vec == 1 {
							form = codeForms[0]
						}
					}
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,%s,%s", vec, genericSchedules[1], form))
					if err != nil {
						t.Fatal(err)
					}
					if sp.Check(cfg) != nil {
						continue // a width the host lacks
					}
					for _, shape := range genericShapes {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true})
					}
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}
