package cpu

import (
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/device"
)

// TestLimits checks that both ceilings are measured (positive and finite)
// and that the copy copies; their size depends on the machine and is
// only logged.
func TestLimits(t *testing.T) {
	host := device.Host()
	gflops, gbps := Limits(host)
	t.Logf("%s: peak %.1f GFLOP/s, copy %.1f GB/s", host.Fingerprint(), gflops, gbps)
	if !(gflops > 0 && gflops < 1e9) || !(gbps > 0 && gbps < 1e9) {
		t.Errorf("Limits = %v GFLOP/s, %v GB/s; want positive and finite", gflops, gbps)
	}
	src := []float32{1, 2, 3, 4, 5, 6, 7}
	for g := 1; g <= 8; g++ {
		dst := make([]float32, len(src))
		parallelCopy(dst, src, g)
		if !slices.Equal(dst, src) {
			t.Errorf("parallelCopy on %d goroutines = %v, want %v", g, dst, src)
		}
	}
}
