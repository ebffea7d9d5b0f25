package softmax

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// halfShapes are the shapes of the 16-bit test: one element, partial
// vectors, a long row with a tail, many short rows.
var halfShapes = [][]int{{1, 1}, {2, 13}, {3, 17}, {5, 48}, {7, 1023}, {131, 33}, {1, 4099}}

// TestHalfKernels checks softmax's kernels of bf16 and f16: every fourth
// config of the short grid on halfShapes, the plain forms of assembly,
// and every third of genericConfigs shape-generic on the same shapes, each
// on the op's input sets for the dtype rounded to it, against the float64
// reference with the tolerance of a 16-bit output. A sample is enough: the
// float32 tests sweep every config, and a 16-bit kernel wraps the same
// float32 rows. Each assembly config of the sample is checked with
// convert=reg too, and on a host with AVX512-BF16 with convert=cvtne,
// each also streamed (store=stream), whose outputs must equal
// convert=block's bit for bit (kerneltest.Spec.Twin): a rounding other
// than to nearest even, or a lane lost at a row's end, fails there even
// where the tolerance would pass it. Every eighth config of the grid is
// also checked with the degree-3 exp (poly3), in blocks of rows and, as
// its twin, converted in registers and streamed.
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
						block := len(specs)
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
						sp := Template.Space(shape, host)
						for _, to := range []string{"reg", cvtne} {
							c, ok := convertTo(cfg, sp, to)
							if !ok && to == "reg" {
								t.Fatalf("%s: no convert=reg twin", cfg)
							}
							if ok {
								specs = append(specs,
									kerneltest.Spec{Config: c, Shape: shape, Twin: block},
									kerneltest.Spec{Config: c, Shape: shape, Plain: true, Twin: block},
									kerneltest.Spec{Config: with(t, c, sp, "store", "stream"), Shape: shape, Twin: block})
							}
						}
						if n%8 == 0 {
							// The degree-3 exp, in blocks of rows and
							// streamed from registers.
							c := with(t, cfg, sp, "exp", poly3)
							specs = append(specs, kerneltest.Spec{Config: c, Shape: shape})
							specs = append(specs, kerneltest.Spec{Config: with(t, with(t, c, sp, "convert", "reg"), sp, "store", "stream"), Shape: shape, Twin: len(specs)})
						}
					}
				}
			}
			sp := genericSpace()
			for i, cfg := range genericConfigs(t) {
				if i%3 != 0 {
					continue
				}
				for _, shape := range halfShapes {
					specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true})
					if Template.Go.Asm(cfg) {
						block := len(specs)
						reg := with(t, cfg, sp, "convert", "reg")
						specs = append(specs, kerneltest.Spec{Config: reg, Shape: shape, Generic: true, Twin: block},
							kerneltest.Spec{Config: with(t, reg, sp, "store", "stream"), Shape: shape, Generic: true, Twin: block})
						if c, ok := convertTo(cfg, sp, cvtne); ok {
							specs = append(specs, kerneltest.Spec{Config: c, Shape: shape, Generic: true, Twin: block},
								kerneltest.Spec{Config: with(t, c, sp, "store", "stream"), Shape: shape, Generic: true, Twin: block})
						}
					}
				}
			}
			kerneltest.CheckDType(t, &Template, dt, specs)
		})
	}
}

// with returns cfg, a point of sp, with knob set to value, which must be
// valid there.
func with(t *testing.T, cfg schedule.Config, sp *schedule.Space, knob, value string) schedule.Config {
	t.Helper()
	c, ok := setKnob(cfg, sp, knob, value)
	if !ok {
		t.Fatalf("%s with %s=%s is not a valid config", cfg, knob, value)
	}
	return c
}

// convertTo returns cfg, a point of sp, with convert=value, and whether
// that is valid in sp (cvtne is only on Z registers with AVX512-BF16).
func convertTo(cfg schedule.Config, sp *schedule.Space, value string) (schedule.Config, bool) {
	return setKnob(cfg, sp, "convert", value)
}

// setKnob returns cfg, a point of sp, with knob set to value, and whether
// that is valid in sp.
func setKnob(cfg schedule.Config, sp *schedule.Space, knob, value string) (schedule.Config, bool) {
	c, err := sp.Parse(strings.Replace(cfg.String(), knob+"="+cfg.Str(knob), knob+"="+value, 1))
	return c, err == nil && sp.Check(c) == nil
}
