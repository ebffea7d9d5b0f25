package gemm

import (
	"math"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaEstimate is a rough time of cfg for shape on a GPU target, for the
// first batch of a tune, when nothing is measured yet; only the order of
// the configs of one shape matters. It does not see the dtype (float32 on
// the FMA units, 16 bits on tensor cores), so it scores what helps both:
// the multiply-adds of the block tiles, padding included, at a rate that
// grows with the block tile's reuse of each element it loads
// (bm·bn/(bm+bn) multiply-adds per element), with each thread's tile
// (tm·tn accumulators: independent FMAs in float32, the warp tile's size
// on tensor cores), with deeper K steps (fewer barriers) and 16-byte
// loads, with a pipeline that overlaps the next tile's loads (cp.async
// and more stages), and with the warps a multiprocessor keeps
// resident (at least 8 hide a load's latency). The rates are not fitted;
// TestCUDAEstimateRanksWinners checks that the winners of real GPU tunes
// rank near the top.
func cudaEstimate(shape []int, target device.Target, cfg schedule.Config) float64 {
	gpu := target.GPU
	if gpu == nil {
		return math.Inf(1)
	}
	m, n, k := checkShape(shape)
	g := newCUDAGeometry(shape, cfg)
	macs := float64(ceilDiv(m, g.bm)*g.bm) * float64(ceilDiv(n, g.bn)*g.bn) * float64(k)
	reuse := float64(g.bm*g.bn) / float64(g.bm+g.bn)
	perThread := float64(g.tm * g.tn)
	overlap := 0.6 // one stage: every tile's loads wait
	switch {
	case g.stages >= 3 && g.copy == "cp_async":
		overlap = 1
	case g.stages == 2 && g.copy == "cp_async":
		overlap = 0.95
	case g.stages == 2:
		overlap = 0.85
	}
	// Shared memory as the space counts it: the smaller of the float32
	// and the 16-bit kernels' (a search of the dtype whose kernel does
	// not fit has left the config out).
	smem := min(g.smem, halfSharedBytes(cfg))
	blocks := min(gpu.MaxBlocksPerSM, gpu.SharedMemPerSM/max(1, smem), gpu.RegistersPerSM/max(1, g.regs*g.threads))
	occupancy := min(1, float64(blocks*g.threads/32)/8)
	if occupancy == 0 {
		return math.Inf(1)
	}
	// A K step of bk ends in a barrier; 16-byte loads (vec 4) take a
	// quarter of the instructions of single elements.
	step := float64(g.bk) / float64(g.bk+8)
	loads := map[int]float64{1: 0.8, 4: 1}
	rate := reuse / (reuse + 16) * perThread / (perThread + 8) * overlap * occupancy * step * loads[g.va] * loads[g.vb]
	return macs / rate
}
