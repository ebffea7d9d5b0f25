package softmax

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestGoroutinesClear checks that the goroutines of a vector kernel clear
// the upper halves of the vector registers before they end, and that a
// scalar kernel's goroutines leave archsimd out.
func TestGoroutinesClear(t *testing.T) {
	kerneltest.CheckGoroutinesClear(t, &Template, cpu(2, avx512), "64x100",
		"vec=16,unroll=2,algo=online,exp=poly4,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
		"vec=1,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=block,store=cached")
}
