package cpu

import (
	"sync"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
)

// Sizes of Limits' measurements: 32 MiB is past the last-level cache of
// the machines autotune runs on, so the copy streams from memory.
const (
	limitsPeakCalls = 20
	limitsCopyCalls = 10
	limitsCopyBytes = 32 << 20
)

// Limits measures the two ceilings of a roofline in this process, on the
// machine it runs on, which t must describe: the float32 multiply-add peak
// in GFLOP/s, bench's peak loop (package peak, the same lanes, goroutines
// and steps) at its best of 20 calls, and the memory bandwidth in GB/s, a
// copy of 32 MiB into another buffer split among one goroutine per core of
// t, bytes read plus bytes written (as bench counts its floor) at the best
// of 10 calls. Best, not median: something else running only slows a
// loop down. It takes a fraction of a second.
func Limits(t device.Target) (peakGFLOPs, copyGBps float64) {
	lanes, cores := peakLanes(t), peakGoroutines(t)
	peak.Run(lanes, cores, peakSteps) // warm up: wake the cores
	best := time.Duration(1 << 62)
	for range limitsPeakCalls {
		start := time.Now()
		peak.Run(lanes, cores, peakSteps)
		best = min(best, time.Since(start))
	}
	peakGFLOPs = peak.FLOPs(lanes, cores, peakSteps) / float64(best.Nanoseconds())

	n := limitsCopyBytes / 4
	src, dst := make([]float32, n), make([]float32, n)
	for i := range src {
		src[i] = float32(i) // touch every page before timing
	}
	parallelCopy(dst, src, cores)
	best = time.Duration(1 << 62)
	for range limitsCopyCalls {
		start := time.Now()
		parallelCopy(dst, src, cores)
		best = min(best, time.Since(start))
	}
	copyGBps = float64(8*n) / float64(best.Nanoseconds())
	return peakGFLOPs, copyGBps
}

// parallelCopy copies src to dst in parts equal to within an element on
// the given number of goroutines, the caller's included.
func parallelCopy(dst, src []float32, goroutines int) {
	n := len(src)
	var wg sync.WaitGroup
	for g := 1; g < goroutines; g++ {
		wg.Go(func() { copy(dst[g*n/goroutines:(g+1)*n/goroutines], src[g*n/goroutines:(g+1)*n/goroutines]) })
	}
	copy(dst[:n/goroutines], src[:n/goroutines])
	wg.Wait()
}
