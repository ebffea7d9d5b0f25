//go:build openblas

package attention

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// With the openblas tag both templates have a third baseline, openblas,
// the gonum baseline's composition on OpenBLAS's sgemm: checked against
// the reference on every input set, on one head of one row, heads of odd
// lengths, several batches and heads.
func TestOpenBLASBaseline(t *testing.T) {
	shapes := [][]int{{1, 1, 1, 8}, {1, 2, 37, 17}, {2, 3, 130, 32}}
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			if b := tmpl.Baselines[2]; b.Name != "openblas" || !b.Cgo || len(b.Requires) != 2 {
				t.Fatalf("third baseline %s, cgo %v, requires %v; want openblas, cgo, netlib and gonum", b.Name, b.Cgo, b.Requires)
			}
			kerneltest.CheckBaseline(t, tmpl, "openblas", shapes)
		})
	}
}
