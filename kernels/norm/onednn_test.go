//go:build onednn

package norm

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks LayerNorm's onednn baseline against the reference on
// the uniform and tiny inputs, and that RMSNorm has none: oneDNN 2 has no
// RMSNorm primitive. oneDNN 2.7's primitive fails the other sets (its
// float32 statistics: E[x²]−E[x]² for the constant rows near 1e18 and the
// low-variance rows, a sum of squares that overflows for the large
// inputs), so it is not checked on them: bench times it on uniform inputs.
func TestOneDNN(t *testing.T) {
	if b := LayerTemplate.Baselines[len(LayerTemplate.Baselines)-1]; b.Name != "onednn" || !b.Cgo || b.Requires != nil {
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
		if set.Name == "uniform" || set.Name == "tiny" {
			tmpl.Op.Inputs = append(tmpl.Op.Inputs, set)
		}
	}
	if len(tmpl.Op.Inputs) != 2 {
		t.Fatalf("%d of the input sets uniform and tiny, want 2", len(tmpl.Op.Inputs))
	}
	kerneltest.CheckBaseline(t, &tmpl, "onednn", append(baselineShapes, []int{64, 4096}))
}
