//go:build libxsmm

package gemm

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestLibxsmm checks the libxsmm baselines of Template and of the
// epilogue templates (followed by a Go loop) against the reference on
// small shapes with tails in every dimension, and that it is left out of
// shapes with a side over 128.
func TestLibxsmm(t *testing.T) {
	shapes := [][]int{{1, 1, 1}, {17, 1, 33}, {64, 64, 1}, {32, 32, 32}, {127, 65, 128}, {128, 128, 128}}
	for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckBaseline(t, tmpl, "libxsmm", shapes)
		})
	}
	for _, shape := range [][]int{{129, 1, 1}, {1, 129, 1}, {1, 1, 129}, {1, 4096, 4096}} {
		if why := skipLibxsmm(shape); why == "" {
			t.Errorf("libxsmm runs for %v, want it left out", shape)
		}
	}
	if why := skipLibxsmm([]int{128, 128, 128}); why != "" {
		t.Errorf("libxsmm left out of 128³: %s", why)
	}
}
