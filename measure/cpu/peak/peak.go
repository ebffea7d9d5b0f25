// Package peak measures the machine's float32 multiply-add peak: Chains
// independent chains of fused multiply-adds, acc += x·y, on the widest
// vectors the CPU has, on as many goroutines as it has cores. RunDot
// measures the same chains of AVX512-BF16's VDPBF16PS, the instruction of
// gemm's convert=dot tiles, which multiplies pairs of bf16 and adds both
// products to a float32 lane: the ceiling of a bf16 GEMM on such a CPU.
//
// The loops are Go assembly on amd64 (VFMADD231PS on Z registers with
// AVX-512, on Y registers with AVX2 and FMA): on a 2-core AVX-512 Zen 5
// the same chains in archsimd Go read 279–287 GFLOP/s where a C loop of
// AVX-512 FMAs read 652. Twelve chains cover the latency of
// an FMA (4 cycles) times the FMAs a core starts per cycle (2) with room to
// spare, and with x and y fit in the 16 registers AVX2 has. Elsewhere, and
// with lanes 1, the chains are scalar Go.
//
// The package has no dependencies: measure/cpu copies it into the bench
// module it builds, where the bench harness times Run as the peak entry.
package peak

import "sync"

// Chains is the number of independent accumulators of a loop.
const Chains = 12

// Operands of the timed loops: x·y is small enough that 2^18 steps move an
// accumulator by about 0.03, far from overflow and from subnormals.
const (
	X = 0.5
	Y = 1.0 / 4096 / 4096
)

// The bf16 operands of RunDot: pairs of X and of Y (both exact in bf16,
// the top halves of their float32 bits), so that a step moves a lane by
// 2·X·Y.
const (
	XPair = 0x3f00_3f00
	YPair = 0x3380_3380
)

// DotFLOPs is the work of RunDot(goroutines, steps): two multiplies and two
// adds per lane of every chain, every step, on every goroutine; 64 per
// VDPBF16PS on Z registers.
func DotFLOPs(goroutines, steps int) float64 {
	return 4 * 16 * Chains * float64(steps) * float64(goroutines)
}

// RunDot is Run with VDPBF16PS on Z registers in place of the FMAs; it
// needs AVX512-BF16 on amd64 (elsewhere the chains are scalar Go).
func RunDot(goroutines, steps int) float32 {
	run := func() float32 {
		var acc [Chains][16]float32
		initAcc(acc[:])
		dot16(steps, XPair, YPair, &acc)
		return total(acc[:])
	}
	if goroutines <= 1 {
		return run()
	}
	var wg sync.WaitGroup
	for range goroutines - 1 {
		wg.Go(func() { run() })
	}
	sum := run()
	wg.Wait()
	return sum
}

// FLOPs is the work of Run(lanes, goroutines, steps): a multiply and an add
// per lane of every chain, every step, on every goroutine.
func FLOPs(lanes, goroutines, steps int) float64 {
	return 2 * float64(lanes) * Chains * float64(steps) * float64(goroutines)
}

// Run runs steps steps of the Chains chains on vectors of lanes float32
// (16, 8 or 1) on goroutines goroutines, the caller's included, and returns
// the sum of every accumulator of the first goroutine, so that no work can
// be dropped. lanes must be a width the CPU runs: 16 needs AVX-512F, 8 AVX2
// and FMA (Supported).
func Run(lanes, goroutines, steps int) float32 {
	if goroutines <= 1 {
		return chains(lanes, steps, X, Y) // allocates nothing
	}
	var wg sync.WaitGroup
	for range goroutines - 1 {
		wg.Go(func() { chains(lanes, steps, X, Y) })
	}
	sum := chains(lanes, steps, X, Y)
	wg.Wait()
	return sum
}

// chains runs steps steps of the chains from the accumulators 0, 1, 2, …
// (one value per chain and lane) with operands x and y, and returns the sum
// of the accumulators.
func chains(lanes, steps int, x, y float32) float32 {
	var sum float32
	switch lanes {
	case 16:
		var acc [Chains][16]float32
		initAcc(acc[:])
		fma16(steps, x, y, &acc)
		sum = total(acc[:])
	case 8:
		var acc [Chains][8]float32
		initAcc(acc[:])
		fma8(steps, x, y, &acc)
		sum = total(acc[:])
	case 1:
		var acc [Chains][1]float32
		initAcc(acc[:])
		fmaGo(steps, x, y, &acc)
		sum = total(acc[:])
	default:
		panic("peak: lanes must be 16, 8 or 1")
	}
	return sum
}

// initAcc sets acc[i][l] to i·lanes + l.
func initAcc[V [16]float32 | [8]float32 | [1]float32](acc []V) {
	for i := range acc {
		for l := range len(acc[i]) {
			acc[i][l] = float32(i*len(acc[i]) + l)
		}
	}
}

func total[V [16]float32 | [8]float32 | [1]float32](acc []V) float32 {
	var s float32
	for i := range acc {
		for l := range len(acc[i]) {
			s += acc[i][l]
		}
	}
	return s
}

// fmaGo is the scalar loop. Go fuses x*y + a only where GOAMD64 allows it,
// so this is a multiply and an add, or an FMA: the same FLOPs either way.
func fmaGo(steps int, x, y float32, acc *[Chains][1]float32) {
	a0, a1, a2, a3, a4, a5 := acc[0][0], acc[1][0], acc[2][0], acc[3][0], acc[4][0], acc[5][0]
	a6, a7, a8, a9, a10, a11 := acc[6][0], acc[7][0], acc[8][0], acc[9][0], acc[10][0], acc[11][0]
	for range steps {
		a0 += x * y
		a1 += x * y
		a2 += x * y
		a3 += x * y
		a4 += x * y
		a5 += x * y
		a6 += x * y
		a7 += x * y
		a8 += x * y
		a9 += x * y
		a10 += x * y
		a11 += x * y
	}
	acc[0][0], acc[1][0], acc[2][0], acc[3][0], acc[4][0], acc[5][0] = a0, a1, a2, a3, a4, a5
	acc[6][0], acc[7][0], acc[8][0], acc[9][0], acc[10][0], acc[11][0] = a6, a7, a8, a9, a10, a11
}
