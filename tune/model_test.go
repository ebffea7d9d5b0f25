package tune

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// TestFeaturize checks the model's input: the knobs' encoding, then the
// template's analytic features for the shape and target, then log2 of the
// dimensions.
func TestFeaturize(t *testing.T) {
	space := schedule.NewSpace([]schedule.Knob{schedule.Choice("tile", 2, 8)})
	cfg, err := space.Parse("tile=8")
	if err != nil {
		t.Fatal(err)
	}
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 3}}
	tmpl := kernels.Template{Features: func(shape []int, target device.Target, c schedule.Config) []float64 {
		return []float64{float64(c.Int("tile") * shape[0]), float64(target.CPU.Cores)}
	}}
	got := featurize(tmpl, space, []int{4, 1024}, target)(cfg)
	want := append(space.Features(cfg), 32, 3, 2, 10)
	if !slices.Equal(got, want) {
		t.Errorf("featurize = %v, want %v", got, want)
	}
	// Without analytic features: the knobs and the dimensions.
	got = featurize(kernels.Template{}, space, []int{4, 1024}, target)(cfg)
	if want := append(space.Features(cfg), 2, 10); !slices.Equal(got, want) || math.IsNaN(got[0]) {
		t.Errorf("featurize without Features = %v, want %v", got, want)
	}
}
