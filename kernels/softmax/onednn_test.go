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
	if b := Template.Baselines[len(Template.Baselines)-3]; b.Name != "onednn" || !b.Cgo || b.Requires != nil {
		t.Fatalf("third baseline from the end %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
	}
	kerneltest.CheckBaseline(t, &Template, "onednn", append(testShapes, []int{12288, 128}))
}

// TestOneDNNHalf checks the onednn-bf16 and onednn-f16 baselines, oneDNN's
// softmax on 16-bit buffers, as TestOneDNN the float32 one, on every input
// set of their dtype (logits near f16's largest value, subnormals, long
// rows), where this CPU's oneDNN has them.
func TestOneDNNHalf(t *testing.T) {
	kerneltest.CheckHalfBaselines(t, &Template, "onednn", testShapes)
}
