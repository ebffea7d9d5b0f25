//go:build onednn

package onednn

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
)

// TestOneDNNProbe checks that the probes find oneDNN's f32 primitives, which
// every CPU it runs on has, and that a layout oneDNN refuses is described
// rather than reported as there.
func TestOneDNNProbe(t *testing.T) {
	md := MD{Dims: []int{3, 5}, Strides: []int{5, 1}}
	if why := Softmax(dtype.F32, md, 1); why != "" {
		t.Errorf("f32 softmax: %s", why)
	}
	mm := Matmul{Src: MD{[]int{3, 7}, []int{7, 1}}, Weights: MD{[]int{7, 5}, []int{5, 1}}, Dst: md,
		Bias: &MD{[]int{1, 5}, []int{5, 1}}, ReLU: true}
	if why := mm.Missing(dtype.F32); why != "" {
		t.Errorf("f32 matmul: %s", why)
	}
	if why := Add(dtype.F32, md, MD{[]int{1, 5}, []int{5, 1}}); why != "" {
		t.Errorf("f32 add: %s", why)
	}
	if why := LayerNorm(dtype.F32, md, 1e-5); why != "" {
		t.Errorf("f32 layer normalization: %s", why)
	}
	// A softmax along an axis the tensor does not have is invalid.
	if why := Softmax(dtype.F32, md, 2); !strings.Contains(why, "has no f32 softmax here") {
		t.Errorf("softmax along axis 2 of a matrix: %q, want it missing", why)
	}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Logf("%s: softmax %q, matmul %q, layer normalization %q", dt, Softmax(dt, md, 1), mm.Missing(dt), LayerNorm(dt, md, 1e-5))
	}
}
