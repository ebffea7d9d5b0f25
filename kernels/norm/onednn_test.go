//go:build onednn

package norm

import (
	"slices"
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
	b := LayerTemplate.Baselines[len(LayerTemplate.Baselines)-1]
	if b.Name != "onednn" || !b.Cgo || b.Requires != nil {
		t.Fatalf("last baseline %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
	}
	for _, b := range RMSTemplate.Baselines {
		if b.Name == "onednn" {
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
