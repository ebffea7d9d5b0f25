package attention

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/codegen/neon"
)

// On arm64 a lanes config with micro=asm and vec=4 is the plain form
// (emitPlain) around NEON assembly: the same register tiles as amd64's,
// written by codegen/neon for the 32 V registers of 4 lanes (VLD1R
// broadcasts of a key or value element, VFMLA into the accumulators), and
// with a polynomial exp the online softmax of a key block as amd64's
// softmaxAsm does it, a vector of 4 query lanes at a time, with
// codegen/neon's Exp (same operations and constants as golang.Exp).

// NEON registers of the online softmax: the exp's argument and scratch
// (Exp.Emit's x, k, p, t), the new maxima, the sums, 1 in every lane, the
// mask of the lanes whose maximum grew, the old sums; the exp's constants
// from neonConsts on (11 at degree 5).
const (
	neonX, neonK, neonP, neonT, neonMax, neonSum, neonOne, neonGrew, neonL = 0, 1, 2, 3, 4, 5, 6, 7, 8
	neonConsts                                                             = 9
)

// neonFile returns the NEON assembly of k: its tiles and, with a
// polynomial exp, its online softmax.
func (k kernel) neonFile() []byte {
	src := neon.File(k.asmTiles()...)
	if k.asmSoftmax() {
		src = append(src, k.neonSoftmax()...)
	}
	return src
}

// neonSoftmax returns the TEXT block of the NEON online softmax, the
// function softmaxAsmDecl declares. General registers: R0 p, R1 m, R2 l,
// R3 alpha, R4 cols, R5 the byte offset of the vector of query lanes, R6
// the score at hand, R7 the keys left, R8 the bytes between the scores of
// two keys, R9 to R11 m, l and alpha at the vector, R12 scratch.
func (k kernel) neonSoftmax() string {
	r := &neon.Rows{}
	exp := neon.Exp{Degree: expDegree[k.cfg.Str("exp")], First: neonConsts}
	v := func(n int) string { return fmt.Sprintf("V%d.S4", n) }
	b16 := func(n int) string { return fmt.Sprintf("V%d.B16", n) }
	row := 4 * k.br // bytes between the scores of two keys

	r.Text(fmt.Sprintf("\n// func %s(p, m, l, alpha, cols)\n", k.softmaxFn()))
	r.Text(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $0-40\n", k.softmaxFn()))
	for i, a := range []string{"p", "m", "l", "alpha", "cols"} {
		r.Line("MOVD %s+%d(FP), R%d", a, 8*i, i)
	}
	r.Line("MOVD $%d, R8", row)
	for _, l := range exp.Load("R12") {
		r.Line("%s", l)
	}
	r.Line("MOVW $0x%08x, R12 // 1", math.Float32bits(1))
	r.Line("VDUP R12, %s", v(neonOne))
	r.Line("MOVD ZR, R5")
	r.Label("lanes")
	r.Line("ADD R5, R1, R9")
	r.Line("ADD R5, R2, R10")
	r.Line("ADD R5, R3, R11")
	// The new maxima, in two chains (x and k) from the old ones.
	r.Line("ADD R5, R0, R6")
	r.Line("MOVD R4, R7")
	r.Line("VLD1 (R9), [%s]", v(neonX))
	r.Line("VMOV %s, %s", b16(neonX), b16(neonK))
	r.Line("CMP $2, R7")
	r.Line("BLT max_one")
	r.Label("max_two")
	r.Line("VLD1.P (R6)(R8), [%s]", v(neonP))
	r.Line("VLD1.P (R6)(R8), [%s]", v(neonT))
	r.Line("%s", neon.FMAX.Word(neonX, neonX, neonP))
	r.Line("%s", neon.FMAX.Word(neonK, neonK, neonT))
	r.Line("SUB $2, R7")
	r.Line("CMP $2, R7")
	r.Line("BGE max_two")
	r.Label("max_one")
	r.Line("CBZ R7, max_done")
	r.Line("VLD1 (R6), [%s]", v(neonP))
	r.Line("%s", neon.FMAX.Word(neonX, neonX, neonP))
	r.Label("max_done")
	r.Line("%s", neon.FMAX.Word(neonMax, neonX, neonK))
	// The weights in place of the scores, and their sum.
	r.Line("ADD R5, R0, R6")
	r.Line("MOVD R4, R7")
	r.Line("VEOR %s, %s, %s", b16(neonSum), b16(neonSum), b16(neonSum))
	r.Label("weights")
	r.Line("VLD1 (R6), [%s]", v(neonX))
	res := k.neonExp(r, exp)
	r.Line("VST1.P [%s], (R6)(R8)", v(res))
	r.Line("%s", neon.FADD.Word(neonSum, neonSum, res))
	r.Line("SUBS $1, R7")
	r.Line("BNE weights")
	// alpha = e^(old max - new max) where the maximum grew, 1 elsewhere.
	r.Line("VLD1 (R9), [%s]", v(neonX))
	r.Line("%s // old max < new max", neon.FCMGT.Word(neonGrew, neonMax, neonX))
	res = k.neonExp(r, exp)
	r.Line("VMOV %s, %s", b16(neonOne), b16(neonK))
	r.Line("VBIT %s, %s, %s", b16(neonGrew), b16(res), b16(neonK))
	// l = l·alpha + sum, then the new maxima and alpha.
	r.Line("VLD1 (R10), [%s]", v(neonL))
	r.Line("VFMLA %s, %s, %s", v(neonK), v(neonL), v(neonSum))
	r.Line("VST1 [%s], (R10)", v(neonSum))
	r.Line("VST1 [%s], (R9)", v(neonMax))
	r.Line("VST1 [%s], (R11)", v(neonK))
	r.Line("ADD $%d, R5", 4*neon.Lanes)
	r.Line("CMP $%d, R5", row)
	r.Line("BLT lanes")
	r.Line("RET")
	return string(r.Bytes())
}

// neonExp writes e^(x - new max) of the vector in neonX and returns the
// register of the result.
func (k kernel) neonExp(r *neon.Rows, exp neon.Exp) int {
	r.Line("%s", neon.FSUB.Word(neonX, neonX, neonMax))
	lines, res := exp.Emit(neonX, neonK, neonP, neonT)
	for _, l := range lines {
		r.Line("%s", l)
	}
	return res
}
