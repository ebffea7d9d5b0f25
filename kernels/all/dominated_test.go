package all

import (
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// A template's Dominated leaves configs to tune, and the default among
// them, on a CPU with vectors; on one without, it rules out nothing: a
// scalar config is all there is.
func TestDominatedLeavesConfigs(t *testing.T) {
	for _, isa := range []device.ISA{{}, {SSE42: true, AVX2: true, FMA: true}, {SSE42: true, AVX2: true, FMA: true, AVX512: true}} {
		target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, ISA: isa}}
		vectors := kernels.WidestVector(target) > 1
		for _, op := range kernels.Ops() {
			tmpl, ok := kernels.TemplateFor(op.Name, kernels.CPU)
			if !ok || tmpl.Dominated == nil {
				continue
			}
			for _, dims := range []string{op.Example, "7"} {
				shape, err := op.ParseShape(dims)
				if err != nil {
					shape = make([]int, len(op.Dims))
					for i := range shape {
						shape[i] = 7 + 2*i
					}
				}
				// Dominated does not look at where 16-bit elements are
				// converted: the float32 space (convert pinned) is the
				// whole question, at a third of GEMM's points.
				space := tmpl.SearchSpace(shape, dtype.F32, target)
				var kept, ruled int
				for i := range space.Size() {
					c := space.At(i)
					if !space.Valid(c) {
						continue
					}
					if tmpl.Dominated(shape, target, c) {
						ruled++
					} else {
						kept++
					}
				}
				def := tmpl.Default(shape, target)
				switch {
				case kept == 0:
					t.Errorf("%s %v on %s: every valid config is dominated", op.Name, shape, isa)
				case vectors && ruled == 0:
					t.Errorf("%s %v on %s: nothing is dominated, yet scalar configs are valid", op.Name, shape, isa)
				case !vectors && ruled != 0:
					t.Errorf("%s %v on %s: %d configs dominated without vectors", op.Name, shape, isa, ruled)
				case tmpl.Dominated(shape, target, def):
					t.Errorf("%s %v on %s: the default %s is dominated", op.Name, shape, isa, def)
				}
			}
		}
	}
}
