package gemm

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestGoroutinesClear checks that the goroutines of a vector kernel clear
// the upper halves of the vector registers before they end, with either
// micro-kernel and either split, and that a scalar kernel's goroutines
// leave archsimd out.
func TestGoroutinesClear(t *testing.T) {
	for _, tmpl := range []*kernels.Template{&Template, &BiasTemplate, &BiasReLUTemplate} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckGoroutinesClear(t, tmpl, cpu(2, avx512), "17x20x70",
				"vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
				"vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
				"vec=16,mr=4,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy",
				"vec=1,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy")
		})
	}
}
