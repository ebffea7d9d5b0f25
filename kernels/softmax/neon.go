package softmax

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/schedule"
)

// On arm64 the rows of a code=asm config are Go assembly for NEON, the
// same three passes as amd64's (asm.go) on 4-lane vectors, called by the
// same plain Go (emitPlain, emitAsmRows). A row is cols/(4·unroll) groups
// of unroll vectors, then up to unroll-1 single vectors, then a partial
// vector of cols%4 elements, moved a lane at a time, since NEON has no
// masked loads (codegen/neon's Rows); the counts are worked out once per
// call, from a constant in a specialised kernel and from cols in a
// generic one, which are otherwise the same code.

// neonMaxUnroll is the most vectors the NEON assembly keeps in flight: per
// vector the exp's x, k, p and t and an accumulator, 20 of the 32 V
// registers at 4, with the exp's 11 constants and the row's maximum
// (then 1/sum) in the rest.
const neonMaxUnroll = 4

// NEON vector registers: the bases of the per-vector
// registers, vector u of a group using base+u; the row's maximum and
// then 1/sum; the exp's constants.
const (
	nX, nK, nP, nT, nAcc = 0, 4, 8, 12, 16
	nMax                 = 31
	nExp                 = 20 // to 30 at most: degree 5 has 11 constants
)

// General registers of the NEON assembly: R0 and R1 the rows of dst and
// src, R2 the rows left, R3 cols, R4 and R5 the pointers a pass walks, R6
// a loop's count, R7 the bytes of a row, R8 the next row of src with
// prefetch, R9 the groups of a row, R10 its single vectors, R11 the
// elements of its partial vector, R12 scratch.

// emitNEON returns the NEON assembly of the kernel of cfg for shape (nil:
// shape-generic), or nil for code=go.
func emitNEON(name string, shape []int, cfg schedule.Config) []byte {
	k := newKernel(name, "", cfg) // the assembly of the rows is float32 whatever the dtype
	if !k.asm {
		return nil
	}
	if shape == nil {
		k.generic = true
	} else {
		_, k.cols = checkShape(shape)
		k.unroll = min(k.unroll, max(1, k.cols/k.lanes)) // as emitPlain caps it
	}
	if k.lanes != neon.Lanes || k.unroll > neonMaxUnroll {
		panic(fmt.Sprintf("softmax: no NEON assembly for %s", k.cfg))
	}
	w := &neonWriter{kernel: k, exp: neon.Exp{Degree: expDegree[cfg.Str("exp")], First: nExp},
		Rows: &neon.Rows{Unroll: k.unroll, Groups: "R9", Vecs: "R10", Tail: "R11", Count: "R6"}}
	w.file()
	return w.Bytes()
}

// neonWriter writes the NEON assembly of one kernel.
type neonWriter struct {
	kernel
	*neon.Rows
	exp neon.Exp
}

// file writes the .s file: one function, a loop over rows.
func (w *neonWriter) file() {
	k := w.kernel
	w.Text(goasm.Header)
	args, frame := "dst, src, rows", 24
	if k.generic {
		args, frame = args+", cols", 32
	}
	w.Text(fmt.Sprintf("\n// func %s(%s)\n// The softmax of each row in %s.\nTEXT ·%s(SB), NOSPLIT, $0-%d\n",
		k.asmFn(), args, k.asmPasses(), k.asmFn(), frame))
	w.Line("MOVD dst+0(FP), R0")
	w.Line("MOVD src+8(FP), R1")
	w.Line("MOVD rows+16(FP), R2")
	if k.generic {
		w.Line("MOVD cols+24(FP), R3")
	} else {
		w.Line("MOVD $%d, R3", k.cols)
	}
	w.Line("LSL $2, R3, R7")
	w.Counts("R3", "R12")
	for _, l := range w.exp.Load("R12") {
		w.Line("%s", l)
	}
	w.Line("CBZ R2, done")
	w.Label("row")
	if k.prefetch {
		w.Line("ADD R7, R1, R8 // the next row of src, fetched during the sums")
	}
	w.maxPass()
	w.sumPass()
	w.scalePass()
	w.Line("ADD R7, R0")
	w.Line("ADD R7, R1")
	w.Line("SUBS $1, R2")
	w.Line("BNE row")
	w.Label("done")
	w.Line("RET")
}

// maxPass writes the row's maximum into every lane of nMax. The partial
// vector starts as the first accumulator, so that the lanes past the
// row's end leave the maximum as it is.
func (w *neonWriter) maxPass() {
	w.Line("MOVW $0x%08x, R12 // -MaxFloat32: running maxima start here, not at -Inf, since -Inf-(-Inf) would be NaN", math.Float32bits(-math.MaxFloat32))
	for u := range w.unroll {
		w.Line("VDUP R12, V%d.S4", nAcc+u)
	}
	w.Line("MOVD R1, R4")
	w.Sweep("max", func(n int) {
		w.Load("R4", nX, n)
		for u := range n {
			w.Line("%s", neon.FMAX.Word(nAcc+u, nAcc+u, nX+u))
		}
	}, func() {
		w.Line("VMOV V%d.B16, V%d.B16", nAcc, nX)
		w.Lanes("max_loaded", func(i int) string { return fmt.Sprintf("VLD1.P 4(R4), V%d.S[%d]", nX, i) })
		w.Line("%s", neon.FMAX.Word(nAcc, nAcc, nX))
	})
	w.Reduce(nAcc, neon.FMAX, neon.FMAXP)
	w.Line("VMOV V%d.B16, V%d.B16", nAcc, nMax)
}

// exps writes e^(x-max) of the n vectors from nX, their steps
// interleaved so that the exps overlap, and returns the base of their
// results.
func (w *neonWriter) exps(n int) int {
	bodies := make([][]string, n)
	res := 0
	for u := range n {
		lines, r := w.exp.Emit(nX+u, nK+u, nP+u, nT+u)
		bodies[u], res = append([]string{neon.FSUB.Word(nX+u, nX+u, nMax)}, lines...), r-u
	}
	for i := range bodies[0] {
		for u := range n {
			w.Line("%s", bodies[u][i])
		}
	}
	return res
}

// sumPass writes e^(x-max) into dst, its sum, and 1/sum into every lane
// of nMax. Of the partial vector only its lanes go to dst and the sum.
func (w *neonWriter) sumPass() {
	for u := range w.unroll {
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16", nAcc+u, nAcc+u, nAcc+u)
	}
	w.Line("MOVD R1, R4")
	w.Line("MOVD R0, R5")
	w.Sweep("sum", func(n int) {
		w.Load("R4", nX, n)
		if w.prefetch {
			w.Line("PRFM (R8), PLDL1KEEP")
			w.Line("ADD $%d, R8", 16*n)
		}
		res := w.exps(n)
		w.Store("R5", res, n)
		for u := range n {
			w.Line("%s", neon.FADD.Word(nAcc+u, nAcc+u, res+u))
		}
	}, func() {
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16", nX, nX, nX)
		w.Lanes("sum_loaded", func(i int) string { return fmt.Sprintf("VLD1.P 4(R4), V%d.S[%d]", nX, i) })
		res := w.exps(1)
		w.Line("VEOR V%d.B16, V%d.B16, V%d.B16 // the lanes to sum", nK, nK, nK)
		w.Lanes("sum_stored", func(i int) string {
			return fmt.Sprintf("VST1.P V%d.S[%d], 4(R5)\n\tVMOV V%d.S[%d], V%d.S[%d]", res, i, res, i, nK, i)
		})
		w.Line("%s", neon.FADD.Word(nAcc, nAcc, nK))
	})
	w.Reduce(nAcc, neon.FADD, neon.FADDP)
	w.Line("FMOVS $(1.0), F%d", nMax)
	w.Line("VDUP V%d.S[0], V%d.S4", nMax, nMax)
	w.Line("%s", neon.FDIV.Word(nMax, nMax, nAcc))
}

// scalePass writes dst *= 1/sum.
func (w *neonWriter) scalePass() {
	w.Line("MOVD R0, R4")
	w.Line("MOVD R0, R5")
	w.Sweep("scale", func(n int) {
		w.Load("R4", nX, n)
		for u := range n {
			w.Line("%s", neon.FMUL.Word(nX+u, nX+u, nMax))
		}
		w.Store("R5", nX, n)
	}, func() {
		w.Lanes("scale_loaded", func(i int) string { return fmt.Sprintf("VLD1.P 4(R4), V%d.S[%d]", nX, i) })
		w.Line("%s", neon.FMUL.Word(nX, nX, nMax))
		w.Lanes("scale_stored", func(i int) string { return fmt.Sprintf("VST1.P V%d.S[%d], 4(R5)", nX, i) })
	})
}
