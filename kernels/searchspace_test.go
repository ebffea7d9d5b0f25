package kernels

import (
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// SearchSpace pins convert to its first value for f32, leaves dot and
// cvtne out for f16 (their f16 kernels are other values'), keeps every
// value for bf16, and adds the template's SearchConstraints.
func TestSearchSpace(t *testing.T) {
	tmpl := Template{
		Space: func([]int, device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{
				schedule.Choice("vec", 8, 16),
				schedule.Enum(ConvertKnob, "block", "reg", ConvertDot, ConvertCVTNE),
			})
		},
		SearchConstraints: func(_ []int, dt dtype.DType, _ device.Target) []schedule.Constraint {
			return []schedule.Constraint{{Name: "vec16_for_" + string(dt), OK: func(c schedule.Config) bool { return c.Int("vec") == 16 }}}
		},
	}
	for _, tt := range []struct {
		dt   dtype.DType
		want []string
	}{
		{dtype.F32, []string{"block"}},
		{dtype.F16, []string{"block", "reg"}},
		{dtype.BF16, []string{"block", "reg", ConvertDot, ConvertCVTNE}},
	} {
		sp := tmpl.SearchSpace([]int{1}, tt.dt, device.Host())
		var got []string
		for i := range sp.Size() {
			if c := sp.At(i); sp.Valid(c) {
				if c.Int("vec") != 16 {
					t.Errorf("%s: %s is valid, want vec=16 only", tt.dt, c)
				}
				got = append(got, c.Str(ConvertKnob))
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: convert values %v, want %v", tt.dt, got, tt.want)
		}
	}
}
