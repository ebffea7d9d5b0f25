package cuda

import (
	"sync"
	"testing"
)

// TestInChunks checks that inChunks covers [0, n) once, in ranges of at
// least its minimum, one range where n is below it.
func TestInChunks(t *testing.T) {
	for _, c := range []struct{ n, least int }{{0, 1}, {1, 1}, {5, 1}, {7, 3}, {100, 1 << 20}, {3<<20 + 5, 1 << 20}} {
		seen := make([]int, c.n)
		var mu sync.Mutex
		ranges := 0
		inChunks(c.n, c.least, func(lo, hi int) {
			mu.Lock()
			defer mu.Unlock()
			ranges++
			if hi-lo < c.least && c.n >= c.least {
				t.Errorf("n=%d least=%d: range [%d, %d) is short", c.n, c.least, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, k := range seen {
			if k != 1 {
				t.Fatalf("n=%d least=%d: element %d covered %d times", c.n, c.least, i, k)
			}
		}
		if c.n < c.least && ranges != 1 {
			t.Errorf("n=%d least=%d: %d ranges, want 1", c.n, c.least, ranges)
		}
	}
}
