package norm

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// On arm64 RMSNorm's code=asm rows are Go assembly for NEON: the two
// sweeps of amd64's (asm.go) on 4-lane vectors, called by the same plain
// Go (emitAsmRows), the loops over a row neon.Rows'. The sum of squares
// is float32 lanes, again in float64 one element at a time where it
// overflows, and 1/rms is computed in float64, as the Go rows do. NEON
// has no non-temporal vector store, so the arm64 space offers
// store=cached only (neon_stores_cached).

// neonMaxUnroll is the most vectors the NEON assembly keeps in flight:
// an accumulator, a vector of x and one of gamma each, 24 of the 32 V
// registers at 8.
const neonMaxUnroll = 8

// NEON vector registers: the bases of the accumulators, of x and of
// gamma, vector u of a group using base+u; 1/rms.
const (
	nAcc, nX, nGamma = 0, 8, 16
	nInv             = 31
)

// General registers of the NEON assembly: R0, R1 the rows of y and x, R2
// gamma, R3 the rows left, R4 cols, R5 to R7 the pointers a sweep walks
// (y, x, gamma), R8 the next row of x with prefetch, R9 the groups of a
// row, R10 its single vectors, R11 the elements of its partial vector,
// R12 a loop's count, R13 the bytes of a row, R14 scratch.

// emitNEON returns the NEON assembly of the kernel of cfg for shape (nil:
// shape-generic), or nil for code=go.
func emitNEON(k kind, name string, shape []int, cfg schedule.Config) []byte {
	kn := newKernel(k, name, shape, dtype.F32, cfg) // the assembly of the rows is float32 whatever the dtype
	if !kn.asm {
		return nil
	}
	if kn.lanes != neon.Lanes || kn.unroll > neonMaxUnroll || kn.stream {
		panic(fmt.Sprintf("norm: no NEON assembly for %s %s", k.name, cfg))
	}
	w := &neonWriter{kernel: kn, Rows: &neon.Rows{Unroll: kn.unroll, Groups: "R9", Vecs: "R10", Tail: "R11", Count: "R12"}}
	if kn.layer {
		w.layerFile()
	} else {
		w.file()
	}
	return w.Bytes()
}

// neonWriter writes the NEON assembly of one kernel.
type neonWriter struct {
	kernel
	*neon.Rows
}

// file writes the .s file: one function, a loop over rows.
func (w *neonWriter) file() {
	k := w.kernel
	w.Text(goasm.Header)
	args, frame := "y, x, gamma, rows", 32
	if k.generic {
		args, frame = args+", cols", 40
	}
	w.Text(fmt.Sprintf("\n// func %s(%s)\n// RMSNorm of each row in %s.\nTEXT ·%s(SB), NOSPLIT, $0-%d\n",
		k.asmFn(), args, k.asmSweeps(), k.asmFn(), frame))
	w.Line("MOVD y+0(FP), R0")
	w.Line("MOVD x+8(FP), R1")
	w.Line("MOVD gamma+16(FP), R2")
	w.Line("MOVD rows+24(FP), R3")
	if k.generic {
		w.Line("MOVD cols+32(FP), R4")
	} else {
		w.Line("MOVD $%d, R4", k.cols)
	}
	w.Line("LSL $2, R4, R13")
	w.Counts("R4", "R14")
	w.Line("CBZ R3, done")
	w.Label("row")
	w.sumSweep()
	w.scale()
	w.outSweep()
	w.Line("ADD R13, R0")
	w.Line("ADD R13, R1")
	w.Line("SUBS $1, R3")
	w.Line("BNE row")
	w.Label("done")
	w.Line("RET")
	w.slow()
}

// sumSweep writes the sum of squares of the row into F0, in float32
// lanes; a partial vector's lanes past the row's end are zero.
func (w *neonWriter) sumSweep() {
	for u := range w.Unroll {
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16", nAcc+u, nAcc+u, nAcc+u)
	}
	w.Line("MOVD R1, R6")
	square := func(u int) string {
		return fmt.Sprintf("VFMLA V%d.S4, V%d.S4, V%d.S4", nX+u, nX+u, nAcc+u)
	}
	w.Sweep("sum", func(n int) {
		w.Load("R6", nX, n)
		for u := range n {
			w.Line("%s", square(u))
		}
	}, func() {
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16", nX, nX, nX)
		w.Lanes("sum_loaded", func(i int) string { return fmt.Sprintf("VLD1.P 4(R6), V%d.S[%d]", nX, i) })
		w.Line("%s", square(0))
	})
	w.Reduce(nAcc, neon.FADD, neon.FADDP)
}

// scale writes 1/rms = 1/√(sum/n + eps) into every lane of nInv, in
// float64 from the float32 sum in F0, or from slow's float64 one where
// that overflowed or is NaN.
func (w *neonWriter) scale() {
	w.overflow("F0", "slow")
	w.Line("FCVTSD F0, F0")
	w.Label("scale")
	w.loadN("F1", "R4")
	w.Line("FDIVD F1, F0")
	w.invSqrt("F0", nInv)
}

// overflow writes the branch to slow where the float32 in f is not at
// most MaxFloat32: a sum of squares that overflowed, or NaN. It
// clobbers F31 and R14.
func (w *neonWriter) overflow(f, slow string) {
	w.Line("MOVW $0x%08x, R14 // MaxFloat32", math.Float32bits(math.MaxFloat32))
	w.Line("FMOVS R14, F31")
	w.Line("FCMPS F31, %s", f)
	w.Line("BHI %s // the float32 sum overflowed (or is NaN): again in float64", slow)
}

// loadN writes n, the elements of a row (in the register cols for a
// generic kernel), into the float64 register f, through R14.
func (w *neonWriter) loadN(f, cols string) {
	if w.generic {
		w.Line("SCVTFD %s, %s", cols, f)
		return
	}
	w.Line("MOVD $0x%016x, R14 // n = %d", math.Float64bits(float64(w.cols)), w.cols)
	w.Line("FMOVD R14, %s", f)
}

// invSqrt writes float32(1/√(ms+eps)), ms the float64 in the register f,
// into every lane of vector register dst, as the Go rows compute it. It
// clobbers f, F30 and R14.
func (w *neonWriter) invSqrt(f string, dst int) {
	w.Line("MOVD $0x%016x, R14 // eps = %g", math.Float64bits(w.eps), w.eps)
	w.Line("FMOVD R14, F30")
	w.Line("FADDD F30, %s", f)
	w.Line("FSQRTD %s, %s", f, f)
	w.Line("FMOVD $(1.0), F30")
	w.Line("FDIVD %s, F30, %s", f, f)
	w.Line("FCVTDS %s, %s", f, f)
	w.Line("VDUP V%s.S[0], V%d.S4", f[1:], dst)
}

// outSweep writes y = x·(1/rms)·gamma.
func (w *neonWriter) outSweep() {
	w.Line("MOVD R0, R5")
	w.Line("MOVD R1, R6")
	w.Line("MOVD R2, R7")
	if w.prefetch {
		w.Line("ADD R13, R1, R8 // the next row of x, fetched during the output sweep")
	}
	mul := func(u int) []string {
		return []string{neon.FMUL.Word(nX+u, nX+u, nInv), neon.FMUL.Word(nX+u, nX+u, nGamma+u)}
	}
	w.Sweep("out", func(n int) {
		w.Load("R6", nX, n)
		w.Load("R7", nGamma, n)
		if w.prefetch {
			w.Line("PRFM (R8), PLDL1KEEP")
			w.Line("ADD $%d, R8", 16*n)
		}
		for u := range n {
			for _, l := range mul(u) {
				w.Line("%s", l)
			}
		}
		w.Store("R5", nX, n)
	}, func() {
		w.Lanes("out_loaded", func(i int) string {
			return fmt.Sprintf("VLD1.P 4(R6), V%d.S[%d]\n\tVLD1.P 4(R7), V%d.S[%d]", nX, i, nGamma, i)
		})
		for _, l := range mul(0) {
			w.Line("%s", l)
		}
		w.Lanes("out_stored", func(i int) string { return fmt.Sprintf("VST1.P V%d.S[%d], 4(R5)", nX, i) })
	})
}

// slow writes the sum of squares again of a row whose float32 sum
// overflowed, in float64, one element at a time, as the Go rows' slow
// path does, into F0, and goes on to scale.
func (w *neonWriter) slow() {
	w.Label("slow")
	w.Line("FMOVD ZR, F0")
	w.Line("MOVD R1, R6")
	w.Line("MOVD R4, R12")
	w.Label("slow_loop")
	w.Line("FMOVS.P 4(R6), F1")
	w.Line("FCVTSD F1, F1")
	w.Line("FMADDD F1, F0, F1, F0 // F0 += F1·F1")
	w.Line("SUBS $1, R12")
	w.Line("BNE slow_loop")
	w.Line("B scale")
}

// LayerNorm's NEON vector registers: the sums' accumulators from lSum
// (Σt, then the squares of the deviations), onepass's Σt² from lSq, t
// from lX; in the output sweep gamma from lSum and beta from lSq; x[0],
// the mean and 1/σ broadcast; scratch.
const (
	lSum, lSq, lX         = 0, 8, 16
	lK, lMean, lInv, lTmp = 24, 25, 26, 27
)

// LayerNorm's general registers: R0 to R3 the rows of y and x, gamma and
// beta; R4 the rows left, R5 cols; R6, R7, R8 and R15 the pointers a
// sweep walks (x, gamma, beta, y); R9 to R12 the counts (neon.Rows), R13
// the bytes of a row, R14 scratch.

// layerFile writes LayerNorm's .s file: per row, the statistics of
// t = x-x[0] in one sweep (onepass) or two, then y = (t-mean)·(1/σ)·γ + β.
func (w *neonWriter) layerFile() {
	k := w.kernel
	w.Text(goasm.Header)
	args, frame := "y, x, gamma, beta, rows", 40
	if k.generic {
		args, frame = args+", cols", 48
	}
	w.Text(fmt.Sprintf("\n// func %s(%s)\n// LayerNorm of each row in %s.\nTEXT ·%s(SB), NOSPLIT, $0-%d\n",
		k.asmFn(), args, k.asmSweeps(), k.asmFn(), frame))
	for i, a := range []string{"y", "x", "gamma", "beta", "rows"} {
		w.Line("MOVD %s+%d(FP), R%d", a, 8*i, i)
	}
	if k.generic {
		w.Line("MOVD cols+40(FP), R5")
	} else {
		w.Line("MOVD $%d, R5", k.cols)
	}
	w.Line("LSL $2, R5, R13")
	w.Counts("R5", "R14")
	w.Line("CBZ R4, done")
	w.Label("row")
	w.Line("FMOVS (R1), F%d", lK)
	w.Line("VDUP V%d.S[0], V%d.S4 // k = x[0]", lK, lK)
	if k.onepass {
		w.onepassStats()
	} else {
		w.twopassStats()
	}
	w.Label("stats")
	w.layerOut()
	w.Line("ADD R13, R0")
	w.Line("ADD R13, R1")
	w.Line("SUBS $1, R4")
	w.Line("BNE row")
	w.Label("done")
	w.Line("RET")
	w.layerSlow()
}

// shifted writes the loads of n vectors of x into lX on, less k; the
// partial vector starts as k, so that t is 0 past the row's end.
func (w *neonWriter) shifted(name string, n int, part bool) {
	if part {
		w.Line("VMOV V%d.B16, V%d.B16", lK, lX)
		w.Lanes(name, func(i int) string { return fmt.Sprintf("VLD1.P 4(R6), V%d.S[%d]", lX, i) })
	} else {
		w.Load("R6", lX, n)
	}
	for u := range n {
		w.Line("%s", neon.FSUB.Word(lX+u, lX+u, lK))
	}
}

// zero writes the clearing of n vector registers from base.
func (w *neonWriter) zero(base, n int) {
	for u := range n {
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16", base+u, base+u, base+u)
	}
}

// fmla returns the instruction acc += a·b.
func fmla(a, b, acc int) string { return fmt.Sprintf("VFMLA V%d.S4, V%d.S4, V%d.S4", a, b, acc) }

// mean writes float32(float64(Σt)/n), Σt the float32 in F(from), into
// F(lMean) and every lane of lMean; the float64 mean stays in F1.
func (w *neonWriter) mean(from int) {
	w.Line("FCVTSD F%d, F1", from)
	w.loadN("F2", "R5")
	w.Line("FDIVD F2, F1")
	w.Line("FCVTDS F1, F%d", lMean)
	w.Line("VDUP V%d.S[0], V%d.S4", lMean, lMean)
}

// twopassStats writes the mean of t, then 1/σ from the sum of (t-mean)²,
// sending a row whose float32 sum overflows to the slow path.
func (w *neonWriter) twopassStats() {
	w.zero(lSum, w.Unroll)
	w.Line("MOVD R1, R6")
	w.Sweep("sum", func(n int) {
		w.shifted("", n, false)
		for u := range n {
			w.Line("%s", neon.FADD.Word(lSum+u, lSum+u, lX+u))
		}
	}, func() {
		w.shifted("sum_loaded", 1, true)
		w.Line("%s", neon.FADD.Word(lSum, lSum, lX))
	})
	w.Reduce(lSum, neon.FADD, neon.FADDP)
	w.mean(lSum)
	w.zero(lSum, w.Unroll)
	w.Line("MOVD R1, R6")
	dev := func(u int) {
		w.Line("%s", neon.FSUB.Word(lX+u, lX+u, lMean))
	}
	w.Sweep("dev", func(n int) {
		w.shifted("", n, false)
		for u := range n {
			dev(u)
			w.Line("%s", fmla(lX+u, lX+u, lSum+u))
		}
	}, func() {
		w.shifted("dev_loaded", 1, true)
		dev(0)
		w.zero(lTmp, 1)
		w.Lanes("dev_lanes", func(i int) string { return fmt.Sprintf("VMOV V%d.S[%d], V%d.S[%d]", lX, i, lTmp, i) })
		w.Line("%s", fmla(lTmp, lTmp, lSum))
	})
	w.Reduce(lSum, neon.FADD, neon.FADDP)
	w.overflow(fmt.Sprintf("F%d", lSum), "slow")
	w.Line("FCVTSD F%d, F0", lSum)
	w.loadN("F2", "R5")
	w.Line("FDIVD F2, F0")
	w.invSqrt("F0", lInv)
}

// onepassStats writes the mean of t and 1/σ from Σt and Σt² of one
// sweep, var = max(E[t²]-E[t]², 0), sending a row whose float32 Σt²
// overflows to the slow path.
func (w *neonWriter) onepassStats() {
	w.zero(lSum, w.Unroll)
	w.zero(lSq, w.Unroll)
	w.Line("MOVD R1, R6")
	acc := func(u int) {
		w.Line("%s", neon.FADD.Word(lSum+u, lSum+u, lX+u))
		w.Line("%s", fmla(lX+u, lX+u, lSq+u))
	}
	w.Sweep("sum", func(n int) {
		w.shifted("", n, false)
		for u := range n {
			acc(u)
		}
	}, func() {
		w.shifted("sum_loaded", 1, true)
		acc(0)
	})
	w.Reduce(lSum, neon.FADD, neon.FADDP)
	w.Reduce(lSq, neon.FADD, neon.FADDP)
	w.overflow(fmt.Sprintf("F%d", lSq), "slow")
	w.mean(lSum)
	w.Line("FCVTSD F%d, F0", lSq)
	w.Line("FDIVD F2, F0")
	w.Line("FMULD F1, F1, F3")
	w.Line("FSUBD F3, F0 // E[t²]-E[t]²")
	w.Line("FMOVD ZR, F3")
	w.Line("FMAXD F3, F0")
	w.invSqrt("F0", lInv)
}

// layerOut writes y = (t-mean)·(1/σ)·γ + β, the last a fused
// multiply-add, as the Go rows compute it.
func (w *neonWriter) layerOut() {
	w.Line("MOVD R0, R15")
	w.Line("MOVD R1, R6")
	w.Line("MOVD R2, R7")
	w.Line("MOVD R3, R8")
	out := func(u int) {
		w.Line("%s", neon.FSUB.Word(lX+u, lX+u, lMean))
		w.Line("%s", neon.FMUL.Word(lX+u, lX+u, lInv))
		w.Line("%s", fmla(lX+u, lSum+u, lSq+u))
	}
	w.Sweep("out", func(n int) {
		w.shifted("", n, false)
		w.Load("R7", lSum, n)
		w.Load("R8", lSq, n)
		for u := range n {
			out(u)
		}
		w.Store("R15", lSq, n)
	}, func() {
		w.shifted("out_loaded", 1, true)
		w.Lanes("out_params", func(i int) string {
			return fmt.Sprintf("VLD1.P 4(R7), V%d.S[%d]\n\tVLD1.P 4(R8), V%d.S[%d]", lSum, i, lSq, i)
		})
		out(0)
		w.Lanes("out_stored", func(i int) string { return fmt.Sprintf("VST1.P V%d.S[%d], 4(R15)", lSq, i) })
	})
}

// layerSlow writes the statistics again of a row whose float32 sum of
// squares overflowed, in float64, one element at a time, as the Go rows'
// slow path does: the mean of x-k, then the sum of the squared
// deviations; then goes on to the output sweep.
func (w *neonWriter) layerSlow() {
	w.Label("slow")
	w.Line("FMOVS (R1), F5")
	w.Line("FCVTSD F5, F5 // k")
	w.Line("FMOVD ZR, F1")
	w.Line("MOVD R1, R6")
	w.Line("MOVD R5, R12")
	w.Label("slow_mean")
	w.Line("FMOVS.P 4(R6), F6")
	w.Line("FCVTSD F6, F6")
	w.Line("FSUBD F5, F6")
	w.Line("FADDD F6, F1")
	w.Line("SUBS $1, R12")
	w.Line("BNE slow_mean")
	w.loadN("F2", "R5")
	w.Line("FDIVD F2, F1 // the mean")
	w.Line("FMOVD ZR, F0")
	w.Line("MOVD R1, R6")
	w.Line("MOVD R5, R12")
	w.Label("slow_dev")
	w.Line("FMOVS.P 4(R6), F6")
	w.Line("FCVTSD F6, F6")
	w.Line("FSUBD F5, F6")
	w.Line("FSUBD F1, F6")
	w.Line("FMADDD F6, F0, F6, F0 // F0 += F6·F6")
	w.Line("SUBS $1, R12")
	w.Line("BNE slow_dev")
	w.Line("FCVTDS F1, F%d", lMean)
	w.Line("VDUP V%d.S[0], V%d.S4", lMean, lMean)
	w.Line("FDIVD F2, F0")
	w.invSqrt("F0", lInv)
	w.Line("B stats")
}
