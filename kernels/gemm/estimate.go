package gemm

import (
	"math"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// The machine the estimate assumes where the target does not say: a core
// of about 3 GHz with two FMA ports, 8 bytes a cycle of copying, and the
// start of a goroutine and a wait for it in 2 µs.
const (
	estGHz        = 3.0
	estCopyBytes  = 8.0
	estSpawnNS    = 2000.0
	estChunkNS    = 40.0
	estFMALatency = 4.0
	estFMAPorts   = 2.0
	// asmRegisters are the vector registers an assembly tile may keep
	// live: all but one of AVX-512's 32, or of AVX2's 16.
	asmRegisters512, asmRegisters256 = 31, 15
)

// estimate is Template.Estimate: a rough time per call of cfg in
// nanoseconds. The FLOPs run at the FMA peak of cfg's vectors times the
// micro-kernel's efficiency, which drops when the tile's live vectors
// exceed the registers (spills), when its accumulators are too few to
// hide the FMA latency, when its loads outnumber its FMAs, in archsimd Go
// against assembly, and when a block overflows its cache (B's strip L1,
// A's block L2); edge tiles run at a third of it. Packing B (and A)
// costs a copy, not packing B a strided walk. Each goroutine adds its
// start, each run dealt from the counter a little, and the busiest
// goroutine's share sets the time; convert=dot doubles the peak. It
// reads only the knobs revision 4 has, and chunks, pack_a and convert
// where the space has them.
func estimate(shape []int, target device.Target, cfg schedule.Config) float64 {
	m, n, k := checkShape(shape)
	vec, mr, nv := cfg.Int("vec"), cfg.Int("mr"), cfg.Int("nr_vecs")
	nr := nv * vec
	kc, mc := min(cfg.Int("kc"), k), min(cfg.Int("mc"), roundUp(m, mr))
	l1, l2 := caches(target)

	acc := float64(mr * nv)
	eff := acc / math.Max(acc, float64(mr+nv))          // loads against FMAs
	eff *= math.Min(1, acc/(estFMALatency*estFMAPorts)) // latency hidden
	budget := registerBudget
	if cfg.Str("micro") == "asm" {
		budget = asmRegisters256
		if vec == 16 {
			budget = asmRegisters512
		}
	} else {
		eff *= 0.6
	}
	if mr*nv+nv+1 > budget {
		eff *= 0.35 // spills
	}
	if 4*kc*nr > l1 {
		eff *= 0.75
	}
	if 4*mc*kc > l2 {
		eff *= 0.75
	}

	threads := cfg.Int("threads")
	rows, cols := m, n
	if threads > 1 {
		if cfg.Str("split") == "n" {
			cols = min(n, roundUp((n+threads-1)/threads, nr))
		} else {
			rows = min(m, roundUp((m+threads-1)/threads, mr))
		}
	}
	full := float64(rows/mr*mr) * float64(cols/nr*nr)
	edge := float64(rows)*float64(cols) - full
	peak := 2 * estFMAPorts * float64(vec) // FLOPs a cycle
	if v, ok := cfg.Lookup(kernels.ConvertKnob); ok && v.Str() == kernels.ConvertDot {
		// VDPBF16PS does two multiply-adds a lane. Only a bf16 search
		// offers dot (float32 pins convert, f16 leaves dot out), and
		// the space offers it only with the packed assembly tiles.
		peak *= 2
	}
	cycles := 2 * float64(k) * (full + 3*edge) / (peak * eff)

	copyBytes := 0.0
	if cfg.Bool("pack_b") {
		copyBytes += 4 * float64(k*cols)
	} else if n > nr {
		cycles *= 1.1 // B's rows a stride apart
	}
	if v, ok := cfg.Lookup("pack_a"); ok && v.Bool() {
		copyBytes += 4 * float64(k*rows)
	}
	ns := (cycles + copyBytes/estCopyBytes) / estGHz
	if threads > 1 {
		runs := 1
		if v, ok := cfg.Lookup("chunks"); ok {
			runs = v.Int()
		}
		cores := 1
		if target.CPU != nil {
			cores = max(target.CPU.Cores, 1)
		}
		ns = ns*float64(max(1, threads/cores)) + float64(threads)*estSpawnNS + float64(runs*threads)*estChunkNS
	}
	return ns
}
