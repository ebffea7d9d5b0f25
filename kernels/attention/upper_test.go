package attention

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestGoroutinesClear checks that the goroutines of a vector kernel clear
// the upper halves of the vector registers before they end, in either
// layout, and that a scalar kernel's goroutines leave archsimd out.
func TestGoroutinesClear(t *testing.T) {
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckGoroutinesClear(t, tmpl, cpu(2, avx512), "1x2x100x32",
				"vec=16,br=32,bc=16,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
				"vec=8,br=32,bc=16,exp=poly4,threads=2,layout=lanes,mr=6,nv=1,micro=go,convert=copy",
				"vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy",
				"vec=1,br=32,bc=16,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy")
		})
	}
}
