//go:build onednn

package softmax

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks the onednn baseline against the reference on every
// input set of the op (logits in the hundreds, rows with -Inf entries) and
// on shapes of one element, a partial vector, many rows with a tail, one
// long row and many short ones.
func TestOneDNN(t *testing.T) {
	if b := Template.Baselines[len(Template.Baselines)-1]; b.Name != "onednn" || !b.Cgo || b.Requires != nil {
		t.Fatalf("last baseline %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
	}
	kerneltest.CheckBaseline(t, &Template, "onednn", append(testShapes, []int{12288, 128}))
}
