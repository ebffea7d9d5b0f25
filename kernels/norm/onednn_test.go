//go:build onednn

package norm

import (
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks LayerNorm's onednn baseline against the reference on
// every input set but those it is known to be wrong on (KnownWrong:
// oneDNN 2.7's float32 statistics, E[x²]−E[x]² for the constant rows
// near 1e18 and the low-variance rows, a sum of squares that overflows
// for the large inputs), and that RMSNorm has none: oneDNN 2 has no
// RMSNorm primitive.
func TestOneDNN(t *testing.T) {
	b := LayerTemplate.Baselines[len(LayerTemplate.Baselines)-3]
	if b.Name != "onednn" || !b.Cgo || b.Requires != nil {
		t.Fatalf("third baseline from the end %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
	}
	for _, b := range RMSTemplate.Baselines {
		if strings.HasPrefix(b.Name, "onednn") {
			t.Error("rmsnorm has an onednn baseline; oneDNN 2 has no RMSNorm")
		}
	}
	tmpl := LayerTemplate
	tmpl.Op.Inputs = nil
	for _, set := range LayerTemplate.Op.Inputs {
		if !slices.Contains(b.KnownWrong, set.Name) {
			tmpl.Op.Inputs = append(tmpl.Op.Inputs, set)
		}
	}
	if len(tmpl.Op.Inputs) < 2 || tmpl.Op.Inputs[0].Name != LayerOp.Inputs[0].Name {
		t.Fatalf("onednn is checked on %d input sets, not the timed one first", len(tmpl.Op.Inputs))
	}
	kerneltest.CheckBaseline(t, &tmpl, "onednn", append(baselineShapes, []int{64, 4096}))
}

// TestOneDNNHalf checks the onednn-bf16 and onednn-f16 baselines,
// oneDNN's layer normalization on 16-bit buffers with gamma and beta
// widened to its float32 scale and shift, as kerneltest.CheckBaseline
// does every baseline: on every input set of their dtype (for f16 those
// at the edges of its range), against the float64 reference with the
// op's tolerance for the dtype, where this CPU's oneDNN has them. A set
// in KnownWrong on which a baseline is right, or one not in it on which
// it is wrong, fails the test.
func TestOneDNNHalf(t *testing.T) {
	kerneltest.CheckHalfBaselines(t, &LayerTemplate, "onednn", append(baselineShapes, []int{64, 4096}))
}
