package gemm

import (
	"math"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// fallbackL1 is the L1 data cache assumed when the target does not say.
const fallbackL1 = 32 << 10

// featureNames name what features returns, in order (see the package doc).
var featureNames = []string{
	"log2_tile", "l1_bytes_per_flop", "l2_bytes_per_flop", "mem_bytes_per_flop",
	"b_strip_fits_l1", "a_block_l2_share", "log2_work_per_goroutine", "edge_share",
}

// features returns the analytic features of cfg for shape on target, for
// the cost model (kernels.Template.Features), with the blocks capped at the
// matrix as the emitted code caps them:
//
//	log2_tile                log2(mr·nr), the register tile's size
//	l1_bytes_per_flop        4·(mr+nr) bytes per 2·mr·nr FLOPs: the micro-kernel's loads
//	l2_bytes_per_flop        2/nr + 4/kc: the A sliver per strip, the C tile per slice of K
//	mem_bytes_per_flop       2/nc + 2/rows: A per panel of B, B's panel per run's rows
//	b_strip_fits_l1          1 when the kc×nr strip of B fits L1, else 0
//	a_block_l2_share         4·mc·kc / L2, the A block's share of L2
//	log2_work_per_goroutine  log2 of the FLOPs of the largest goroutine's share
//	edge_share               the share of c computed by the archsimd edge tiles
func features(shape []int, target device.Target, cfg schedule.Config) []float64 {
	k := newKernel("", shape, cfg, noEpilogue)
	l1, l2 := caches(target)
	mr, nr, kc, mc, nc := float64(k.mr), float64(k.nr), float64(k.kc), float64(k.mc), float64(k.nc)
	rows, cols := share(k, k.threads) // the largest goroutine's share
	runRows, _ := share(k, k.threads*cfg.Int("chunks"))
	fits := 0.0
	if 4*kc*nr <= float64(l1) {
		fits = 1
	}
	edge := float64(k.m%k.mr)*float64(k.n) + float64(k.m-k.m%k.mr)*float64(k.n%k.nr)
	return []float64{
		math.Log2(mr * nr),
		2 * (mr + nr) / (mr * nr),
		2/nr + 4/kc,
		2/nc + 2/float64(runRows),
		fits,
		4 * mc * kc / float64(l2),
		math.Log2(2 * float64(rows) * float64(cols) * float64(k.k)),
		edge / (float64(k.m) * float64(k.n)),
	}
}

// share returns the rows and columns of c the largest of parts runs of k's
// split covers.
func share(k kernel, parts int) (rows, cols int) {
	rows, cols = k.m, k.n
	if parts > 1 {
		if k.splitN {
			cols, _ = colsPerThread(k.n, k.nr, parts)
		} else {
			rows, _ = rowsPerThread(k.m, k.mr, parts)
		}
	}
	return min(rows, k.m), min(cols, k.n)
}

// caches returns target's L1 data cache and L2 sizes in bytes, or the
// fallbacks where the target does not say.
func caches(target device.Target) (l1, l2 int) {
	l1, l2 = fallbackL1, fallbackL2
	if cpu := target.CPU; cpu != nil {
		if cpu.L1D > 0 {
			l1 = cpu.L1D
		}
		if cpu.L2 > 0 {
			l2 = cpu.L2
		}
	}
	return l1, l2
}
