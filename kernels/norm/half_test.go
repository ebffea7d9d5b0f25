package norm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// TestHalfKernels checks the kernels of bf16 and f16 of both templates:
// every third config of the grid on the test shapes, plain forms of
// assembly included, and shape-generic kernels of each vector width on the
// generic shapes, each on the input sets of its dtype (f16's at the edges
// of its range) rounded to it, against the float64 reference with the
// tolerance of a 16-bit output. A sample is enough: the float32 tests
// sweep every config, and a 16-bit kernel wraps the same float32 rows.
// The assembly configs of the sample that take convert=reg (and on a
// host with AVX512-BF16 convert=cvtne) are checked with it too, streamed
// ones (store=stream, Z registers) included, and generic ones of each
// width and store on the generic shapes (LayerNorm's two-pass), their
// outputs equal to convert=block's bit for bit
// (kerneltest.Spec.Twin): a rounding other than to nearest even, or a
// lane lost at a row's end, fails there even where the tolerance would
// pass it.
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
							block := len(specs)
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
							for _, to := range []string{"reg", cvtne} {
								if c, ok := withConvert(tmpl.Space(shape, twoCores()), cfg, to); ok {
									specs = append(specs,
										kerneltest.Spec{Config: c, Shape: shape, Twin: block},
										kerneltest.Spec{Config: c, Shape: shape, Plain: true, Twin: block})
								}
							}
						}
					}
				}
				// Shape-generic kernels: each vector width with the
				// assembly (the Go of scalar code), LayerNorm's one-pass.
				sp := tmpl.Space([]int{256, 100}, twoCores())
				algo := ""
				if tmpl.Op.Name == LayerOp.Name {
					algo = ",algo=onepass"
				}
				for _, vec := range vecs {
					form := codeForms[1] + algo
					if vec == 1 {
						form = codeForms[0] + algo
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
				for _, form := range []struct {
					vec   int
					store string
				}{{asmLanesAVX2, "cached"}, {asmLanes, "cached"}, {asmLanes, "stream"}} {
					if tmpl.Op.Name == LayerOp.Name {
						algo = ",algo=twopass"
					}
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,unroll=2,threads=2,rows_per_chunk=4,code=asm,store=%s,prefetch=true,convert=block%s", form.vec, form.store, algo))
					if err != nil {
						t.Fatal(err)
					}
					for _, to := range []string{"reg", cvtne} {
						c, ok := withConvert(sp, cfg, to)
						if !ok {
							continue // a width or an extension the host lacks
						}
						for _, shape := range genericShapes {
							specs = append(specs,
								kerneltest.Spec{Config: cfg, Shape: shape, Generic: true},
								kerneltest.Spec{Config: c, Shape: shape, Generic: true, Twin: len(specs) + 1})
						}
					}
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}

// withConvert returns cfg, a point of sp with convert=block, with
// convert=to, and whether that is valid in sp.
func withConvert(sp *schedule.Space, cfg schedule.Config, to string) (schedule.Config, bool) {
	c, err := sp.Parse(strings.Replace(cfg.String(), "convert=block", "convert="+to, 1))
	return c, err == nil && sp.Check(c) == nil
}
