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
	if kn.layer || kn.lanes != neon.Lanes || kn.unroll > neonMaxUnroll || kn.stream {
		panic(fmt.Sprintf("norm: no NEON assembly for %s %s", k.name, cfg))
	}
	w := &neonWriter{kernel: kn, Rows: &neon.Rows{Unroll: kn.unroll, Groups: "R9", Vecs: "R10", Tail: "R11", Count: "R12"}}
	w.file()
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
	k := w.kernel
	w.Line("MOVW $0x%08x, R14 // MaxFloat32", math.Float32bits(math.MaxFloat32))
	w.Line("FMOVS R14, F1")
	w.Line("FCMPS F1, F0")
	w.Line("BHI slow // the float32 sum overflowed (or is NaN): again in float64")
	w.Line("FCVTSD F0, F0")
	w.Label("scale")
	if k.generic {
		w.Line("SCVTFD R4, F1")
	} else {
		w.Line("MOVD $0x%016x, R14 // n = %d", math.Float64bits(float64(k.cols)), k.cols)
		w.Line("FMOVD R14, F1")
	}
	w.Line("FDIVD F1, F0")
	w.Line("MOVD $0x%016x, R14 // eps = %g", math.Float64bits(k.eps), k.eps)
	w.Line("FMOVD R14, F1")
	w.Line("FADDD F1, F0")
	w.Line("FSQRTD F0, F0")
	w.Line("FMOVD $(1.0), F1")
	w.Line("FDIVD F0, F1, F0")
	w.Line("FCVTDS F0, F0")
	w.Line("VDUP V0.S[0], V%d.S4", nInv)
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
