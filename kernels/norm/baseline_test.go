package norm

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// baselineShapes: one element, a tail, a prime column count, one long row.
var baselineShapes = [][]int{{1, 1}, {3, 17}, {11, 97}, {1, 4099}}

// TestNaive checks the plain Go baselines against the reference on every
// input set.
func TestNaive(t *testing.T) {
	for _, tmpl := range templates {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckBaseline(t, tmpl, "naive", baselineShapes)
		})
	}
}
