package kernels

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// TestModelFeatures checks the model's input: the knobs' encoding, then the
// template's analytic features for the shape and target, then log2 of the
// dimensions.
func TestModelFeatures(t *testing.T) {
	space := schedule.NewSpace([]schedule.Knob{schedule.Choice("tile", 2, 8)})
	cfg, err := space.Parse("tile=8")
	if err != nil {
		t.Fatal(err)
	}
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 3}}
	tmpl := Template{Features: func(shape []int, target device.Target, c schedule.Config) []float64 {
		return []float64{float64(c.Int("tile") * shape[0]), float64(target.CPU.Cores)}
	}}
	got := tmpl.ModelFeatures(space, []int{4, 1024}, target)(cfg)
	want := append(space.Features(cfg), 32, 3, 2, 10)
	if !slices.Equal(got, want) {
		t.Errorf("ModelFeatures = %v, want %v", got, want)
	}
	// Without analytic features: the knobs and the dimensions.
	got = Template{}.ModelFeatures(space, []int{4, 1024}, target)(cfg)
	if want := append(space.Features(cfg), 2, 10); !slices.Equal(got, want) || math.IsNaN(got[0]) {
		t.Errorf("ModelFeatures without Features = %v, want %v", got, want)
	}
}

// TestModelFeatureNames checks that the names line up with the vector.
func TestModelFeatureNames(t *testing.T) {
	space := schedule.NewSpace([]schedule.Knob{schedule.Choice("tile", 2, 8), schedule.Enum("algo", "a", "b")})
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 3}}
	tmpl := Template{Op: Op{Dims: []string{"R", "C"}}, Features: func(shape []int, target device.Target, c schedule.Config) []float64 {
		return []float64{1}
	}}
	got := tmpl.ModelFeatureNames(space, []int{4, 1024}, target)
	want := []string{"tile", "algo=a", "algo=b", "analytic 1", "log2 R", "log2 C"}
	if !slices.Equal(got, want) {
		t.Errorf("ModelFeatureNames = %q, want %q", got, want)
	}
	if n := len(tmpl.ModelFeatures(space, []int{4, 1024}, target)(space.At(0))); n != len(got) {
		t.Errorf("%d names for %d features", len(got), n)
	}
}

// TestCompiledFeatures: a CUDA template's vectors end with the compiled
// resources, known (1, registers, log2(1 + local bytes)) or not (0, 0, 0),
// named as such; a CPU template's have none, even when asked.
func TestCompiledFeatures(t *testing.T) {
	space := schedule.NewSpace([]schedule.Knob{schedule.Choice("tile", 2, 8)})
	small, _ := space.Parse("tile=2")
	big, _ := space.Parse("tile=8")
	compiled := func(c schedule.Config) (int, int, bool) {
		return 40 + c.Int("tile"), 7, c.Int("tile") == 8
	}
	gpu, err := device.Lookup("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	shape := []int{4, 1024}
	cuda := Template{Backend: CUDA}
	feats := cuda.ModelFeaturesCompiled(space, shape, gpu, compiled)
	base := append(space.Features(big), 2, 10)
	if got, want := feats(big), append(slices.Clone(base), 1, 48, 3); !slices.Equal(got, want) {
		t.Errorf("a compiled config: %v, want %v", got, want)
	}
	if got, want := feats(small), append(space.Features(small), 2, 10, 0, 0, 0); !slices.Equal(got, want) {
		t.Errorf("a config never compiled: %v, want %v", got, want)
	}
	if got, want := cuda.ModelFeatures(space, shape, gpu)(big), append(slices.Clone(base), 0, 0, 0); !slices.Equal(got, want) {
		t.Errorf("ModelFeatures: %v, want the compiled resources unknown, %v", got, want)
	}
	names := cuda.ModelFeatureNames(space, shape, gpu)
	if len(names) != len(feats(big)) || !slices.Equal(names[len(names)-3:], compiledFeatureNames) {
		t.Errorf("names %v do not end with %v, or do not line up with the vector", names, compiledFeatureNames)
	}

	cpu := Template{Backend: CPU}
	host := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 3}}
	if got := cpu.ModelFeaturesCompiled(space, shape, host, compiled)(big); !slices.Equal(got, base) {
		t.Errorf("a CPU template: %v, want no compiled resources, %v", got, base)
	}
	if names := cpu.ModelFeatureNames(space, shape, host); slices.Contains(names, "registers") {
		t.Errorf("a CPU template's names %v include registers", names)
	}
}
