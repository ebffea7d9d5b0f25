package kernels

import (
	"runtime"
	"sync"
)

// ForRows calls f on consecutive ranges [lo, hi) that cover [0, n), one
// goroutine per range and at most GOMAXPROCS of them, and returns when all
// have returned. Ops' float64 references use it for their independent
// output rows: a reference is plain scalar Go, and at the sizes people tune
// on GPUs (a 4096³ GEMM is 69 G multiply-adds) one core takes over a minute
// per input set where a GPU host's cores together take seconds.
func ForRows(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}
