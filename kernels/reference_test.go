package kernels

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestForRowsCoversEachRowOnce runs ForRows at row counts below, at and
// above GOMAXPROCS (set to 3 so that ranges are uneven) and checks that
// every row was visited exactly once and no range was empty or reversed.
func TestForRowsCoversEachRowOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1031} {
		seen := make([]atomic.Int32, n)
		ForRows(n, func(lo, hi int) {
			if lo >= hi && n > 0 {
				t.Errorf("n=%d: empty range [%d, %d)", n, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d: row %d visited %d times", n, i, c)
			}
		}
	}
}
