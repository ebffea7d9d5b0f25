//go:build onednn

package attention

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks the onednn baselines of Template and TemplateCausal
// against the reference on every input set: one head of one row, heads of
// odd lengths, several batches and heads.
func TestOneDNN(t *testing.T) {
	shapes := [][]int{{1, 1, 1, 8}, {1, 2, 37, 64}, {2, 3, 130, 32}, {1, 2, 512, 64}}
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			if b := tmpl.Baselines[len(tmpl.Baselines)-1]; b.Name != "onednn" || !b.Cgo || b.Requires != nil {
				t.Fatalf("last baseline %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
			}
			kerneltest.CheckBaseline(t, tmpl, "onednn", shapes)
		})
	}
	if why := skipBatchedScores([]int{1, 8, 1024, 64}); why != "" {
		t.Errorf("onednn left out of 1x8x1024x64: %s", why)
	}
	if why := skipBatchedScores([]int{64, 16, 2048, 64}); why == "" {
		t.Error("onednn runs with 16 GiB of scores, want it left out")
	}
}
