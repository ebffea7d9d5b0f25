package peak

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/autotune-dev/autotune/device"
)

// lanesHere returns the vector widths this CPU runs, and why the others
// are left out.
func lanesHere(t testing.TB) []int {
	isa := device.Host().CPU.ISA
	lanes := []int{1}
	if runtime.GOARCH != "amd64" || isa.AVX2 && isa.FMA {
		lanes = append(lanes, 8)
	} else {
		t.Log("no AVX2 and FMA: 8 lanes not tested")
	}
	if runtime.GOARCH != "amd64" || isa.AVX512 {
		lanes = append(lanes, 16)
	} else {
		t.Log("no AVX-512: 16 lanes not tested")
	}
	return lanes
}

// Every accumulator of every chain ends where a Go loop of the same steps
// from the same start ends: each chain did one multiply-add per lane and
// step, no more and no fewer, which is what FLOPs counts. The operands are
// exact in float32 (x·y = 1/8), so the sums are too and compare bitwise.
func TestChainsMatchGo(t *testing.T) {
	const x, y = 0.5, 0.25
	for _, lanes := range lanesHere(t) {
		for _, steps := range []int{0, 1, 7, 1000} {
			t.Run(fmt.Sprintf("lanes=%d/steps=%d", lanes, steps), func(t *testing.T) {
				want := make([]float32, Chains*lanes)
				for i := range want {
					want[i] = float32(i)
					for range steps {
						want[i] += x * y
					}
				}
				var got []float32
				switch lanes {
				case 16:
					var acc [Chains][16]float32
					initAcc(acc[:])
					fma16(steps, x, y, &acc)
					for _, v := range acc {
						got = append(got, v[:]...)
					}
				case 8:
					var acc [Chains][8]float32
					initAcc(acc[:])
					fma8(steps, x, y, &acc)
					for _, v := range acc {
						got = append(got, v[:]...)
					}
				case 1:
					var acc [Chains][1]float32
					initAcc(acc[:])
					fmaGo(steps, x, y, &acc)
					for _, v := range acc {
						got = append(got, v[:]...)
					}
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("chain %d lane %d: %g after %d steps, want %g", i/lanes, i%lanes, got[i], steps, want[i])
					}
				}
				var sum float32
				for _, v := range want {
					sum += v
				}
				if s := chains(lanes, steps, x, y); s != sum {
					t.Errorf("chains returned %g, want the sum %g", s, sum)
				}
			})
		}
	}
}

// dotHere reports whether this CPU runs dot16, skipping t where not.
func dotHere(t testing.TB) bool {
	if runtime.GOARCH == "amd64" && !device.Host().CPU.ISA.AVX512BF16 {
		t.Log("no AVX512-BF16: the VDPBF16PS chains not run")
		return false
	}
	return true
}

// Every accumulator of the VDPBF16PS chains ends where adding both
// products of the pairs, step by step, ends: one instruction per chain
// and step, each multiplying both halves of every lane's pairs. The pairs
// are (0.5, 1) and (0.25, 4), so a step adds 0.125 + 4 (exact), and a
// wrong pairing (halves crossed: 0.5·4 + 1·0.25) or a lost half shows.
func TestDotChainsMatchGo(t *testing.T) {
	if !dotHere(t) {
		t.Skip()
	}
	const x, y = 0x3f80_3f00, 0x4080_3e80 // bf16 pairs (hi, lo): (1, 0.5) and (4, 0.25)
	for _, steps := range []int{0, 1, 7, 1000} {
		var acc [Chains][16]float32
		initAcc(acc[:])
		dot16(steps, x, y, &acc)
		for i := range acc {
			for l, got := range acc[i] {
				want := float32(i*16 + l)
				for range steps {
					want += 0.125 + 4
				}
				if got != want {
					t.Fatalf("steps=%d: chain %d lane %d: %g, want %g", steps, i, l, got, want)
				}
			}
		}
	}
	n := float64(Chains * 16)
	least := float32(n * (n - 1) / 2)
	if got := RunDot(2, 1000); got < least || got > least+float32(n) {
		t.Errorf("RunDot(2, 1000) = %g, want a little over %g", got, least)
	}
	if got, want := DotFLOPs(2, 1000), 64.0*12*1000*2; got != want {
		t.Errorf("DotFLOPs(2, 1000) = %g, want %g", got, want)
	}
}

func TestRun(t *testing.T) {
	for _, lanes := range lanesHere(t) {
		// Accumulators start at 0, 1, …, 12·lanes-1 and each moves by
		// steps·X·Y; with the timed operands that is below 1e-4 here.
		n := float64(Chains * lanes)
		least := float32(n * (n - 1) / 2)
		if got := Run(lanes, 2, 1000); got < least || got > least+float32(n) {
			t.Errorf("Run(%d, 2, 1000) = %g, want a little over %g", lanes, got, least)
		}
	}
	if got, want := FLOPs(16, 2, 1000), 2.0*16*12*1000*2; got != want {
		t.Errorf("FLOPs(16, 2, 1000) = %g, want %g", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Run with 4 lanes did not panic")
		}
	}()
	Run(4, 1, 1)
}

// BenchmarkPeak reports the GFLOP/s of each width on one goroutine and on
// one per core, and of the VDPBF16PS chains (dot) where the CPU has them,
// counting 64 FLOPs per instruction.
func BenchmarkPeak(b *testing.B) {
	const steps = 1 << 18
	for _, lanes := range lanesHere(b) {
		for _, g := range []int{1, runtime.NumCPU()} {
			b.Run(fmt.Sprintf("lanes=%d/goroutines=%d", lanes, g), func(b *testing.B) {
				for b.Loop() {
					Run(lanes, g, steps)
				}
				b.ReportMetric(FLOPs(lanes, g, steps)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
	if !dotHere(b) {
		return
	}
	for _, g := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("dot/goroutines=%d", g), func(b *testing.B) {
			for b.Loop() {
				RunDot(g, steps)
			}
			b.ReportMetric(DotFLOPs(g, steps)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
