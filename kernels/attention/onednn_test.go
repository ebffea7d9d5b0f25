//go:build onednn

package attention

import (
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks the onednn baselines of Template and TemplateCausal
// against the reference on every input set: one head of one row, heads of
// odd lengths, several batches and heads.
func TestOneDNN(t *testing.T) {
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			if b := tmpl.Baselines[len(tmpl.Baselines)-3]; b.Name != "onednn" || !b.Cgo || b.Requires != nil {
				t.Fatalf("third baseline from the end %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
			}
			kerneltest.CheckBaseline(t, tmpl, "onednn", onednnShapes)
		})
	}
	if why := skipBatchedScores([]int{1, 8, 1024, 64}, dtype.F32); why != "" {
		t.Errorf("onednn left out of 1x8x1024x64: %s", why)
	}
	if why := skipBatchedScores([]int{64, 16, 2048, 64}, dtype.F32); why == "" {
		t.Error("onednn runs with 16 GiB of scores, want it left out")
	}
	if why := skipBatchedScores([]int{1, 1, 20000, 64}, dtype.BF16); why != "" {
		t.Errorf("onednn-bf16 left out of 1x1x20000x64, 763 MiB of bf16 scores: %s", why)
	}
}

// onednnShapes are the shapes the onednn baselines are checked on: one
// head of one row, heads of odd lengths, several batches and heads.
var onednnShapes = [][]int{{1, 1, 1, 8}, {1, 2, 37, 64}, {2, 3, 130, 32}, {1, 2, 512, 64}}

// TestOneDNNHalf checks the onednn-bf16 and onednn-f16 baselines of
// Template and TemplateCausal, the composition with every buffer in the
// 16-bit dtype, as TestOneDNN the float32 ones, on every input set of
// their dtype (saturating scores among them), where this CPU's oneDNN has
// the primitives.
func TestOneDNNHalf(t *testing.T) {
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckHalfBaselines(t, tmpl, "onednn", onednnShapes)
		})
	}
}
