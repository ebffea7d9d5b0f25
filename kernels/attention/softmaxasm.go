package attention

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
)

// With micro=asm and a polynomial exp, the online softmax of a key block
// is Go assembly too, so that everything a key block costs but the causal
// mask runs in assembly: the archsimd softmax checks the bounds of every
// load and keeps some of the exp's values on the stack (see the package
// doc). The assembly does what emitLanesSoftmax's Go does, in the same
// order and with the same operations (goasm.Exp gives golang.Exp's bits),
// so that the two forms compute the same weights.

// asmSoftmax reports whether k's online softmax is assembly: its tiles are
// (micro=asm) and its exp is one goasm.Exp has (poly4, poly5). With
// exp=f64 the softmax stays Go.
func (k kernel) asmSoftmax() bool { return k.asm && expDegree[k.cfg.Str("exp")] > 0 }

// Registers of the assembly softmax: the exp's argument, scratch and
// result, the new maximum and the sum; the exp's constants from
// softmaxConsts on. Sixteen in all at degree 5, so that it fits AVX2's
// Y registers.
const (
	softmaxX, softmaxK, softmaxP, softmaxMax, softmaxSum = 0, 1, 2, 3, 4
	softmaxConsts                                        = 5
	// softmaxScale holds 1/√D in a dot kernel (16 lanes, 32 registers).
	softmaxScale = 31
)

// softmaxAsmDecl returns the Go declaration of the assembly softmax.
func (k kernel) softmaxAsmDecl() jen.Code {
	id := jen.Id
	return jen.Comment(fmt.Sprintf("%s folds the scores of a block of cols ≥ 1 keys, p[c*%d+i], into the online softmax "+
		"of %d query rows, as the package doc's lanes layout says: the new maxima m, the weights e^(score-max) in place "+
		"of the scores, the sums l rescaled and grown, and alpha, the factor by which the output rows are to be rescaled.",
		k.softmaxFn(), k.br, k.br)).Line().
		Comment("").Line().
		Comment("It is Go assembly, in the kernel's .s file; p, m, l and alpha are the state's arrays.").Line().
		Comment("//go:noescape").Line().
		Func().Id(k.softmaxFn()).Params(jen.List(id("p"), id("m"), id("l"), id("alpha")).Op("*").Float32(), id("cols").Int())
}

// softmaxCall returns the call of the online softmax of a key block of
// cols keys on the state st.
func (k kernel) softmaxCall() jen.Code {
	id := jen.Id
	if !k.asmSoftmax() {
		return id(k.softmaxFn()).Call(jen.Op("&").Id("st"), id("cols"))
	}
	at := func(field string) jen.Code { return jen.Op("&").Id("st").Dot(field).Index(jen.Lit(0)) }
	return id(k.softmaxFn()).Call(at("p"), at("m"), at("l"), at("alpha"), id("cols"))
}

// softmaxAsm returns the TEXT block of the assembly softmax. Registers: DI
// p, R8 m, R9 l, R10 alpha, R11 cols, BX the byte offset of the vector of
// query lanes, DX the score of the column at hand, CX the keys left.
func (k kernel) softmaxAsm() string {
	var b strings.Builder
	lanes := k.v.Lanes()
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	label := func(l string) { fmt.Fprintf(&b, "%s:\n", l) }
	reg := func(n int) string {
		if lanes == 16 {
			return fmt.Sprintf("Z%d", n)
		}
		return fmt.Sprintf("Y%d", n)
	}
	x, kk, p, mNew, sum := reg(softmaxX), reg(softmaxK), reg(softmaxP), reg(softmaxMax), reg(softmaxSum)
	exp := goasm.Exp{Lanes: lanes, Degree: expDegree[k.cfg.Str("exp")], First: softmaxConsts}
	row := 4 * k.br // bytes between the scores of two keys
	xor := "VXORPS"
	if lanes == 16 {
		xor = "VPXORD" // VXORPS of Z registers needs AVX-512DQ
	}

	fmt.Fprintf(&b, "\n// func %s(p, m, l, alpha, cols)\n", k.softmaxFn())
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $0-40\n", k.softmaxFn())
	w("MOVQ p+0(FP), DI")
	w("MOVQ m+8(FP), R8")
	w("MOVQ l+16(FP), R9")
	w("MOVQ alpha+24(FP), R10")
	w("MOVQ cols+32(FP), R11")
	for _, l := range exp.Load() {
		w("%s", l)
	}
	// arg turns x, a score (or old maximum) less the new maximum, into
	// the exp's argument: times 1/√D, in softmaxScale, where the scores
	// are not scaled (dot).
	arg := func() {}
	if k.dot {
		scale := reg(softmaxScale)
		w("MOVL $0x%08x, AX // 1/√D", math.Float32bits(k.scale()))
		w("VMOVD AX, X%d", softmaxScale)
		w("VPBROADCASTD X%d, %s", softmaxScale, scale)
		arg = func() { w("VMULPS %s, %s, %s", scale, x, x) }
	}
	w("XORQ BX, BX")
	label("lanes")
	// The new maxima, in two chains (x and k) from the old ones.
	w("LEAQ (DI)(BX*1), DX")
	w("MOVQ R11, CX")
	w("VMOVUPS (R8)(BX*1), %s", x)
	w("VMOVAPS %s, %s", x, kk)
	w("CMPQ CX, $2")
	w("JLT max_one")
	label("max_two")
	w("VMAXPS (DX), %s, %s", x, x)
	w("VMAXPS %d(DX), %s, %s", row, kk, kk)
	w("ADDQ $%d, DX", 2*row)
	w("SUBQ $2, CX")
	w("CMPQ CX, $2")
	w("JGE max_two")
	label("max_one")
	w("TESTQ CX, CX")
	w("JZ max_done")
	w("VMAXPS (DX), %s, %s", x, x)
	label("max_done")
	w("VMAXPS %s, %s, %s", kk, x, mNew)
	// The weights in place of the scores, and their sum.
	w("LEAQ (DI)(BX*1), DX")
	w("MOVQ R11, CX")
	w("%s %s, %s, %s", xor, sum, sum, sum)
	label("weights")
	w("VMOVUPS (DX), %s", x)
	w("VSUBPS %s, %s, %s", mNew, x, x)
	arg()
	for _, l := range exp.Emit(x, kk, p) {
		w("%s", l)
	}
	w("VMOVUPS %s, (DX)", p)
	w("VADDPS %s, %s, %s", p, sum, sum)
	w("ADDQ $%d, DX", row)
	w("DECQ CX")
	w("JNZ weights")
	// alpha = e^(old max - new max) where the maximum grew, 1 elsewhere.
	w("VMOVUPS (R8)(BX*1), %s", x)
	w("VSUBPS %s, %s, %s", mNew, x, x)
	arg()
	for _, l := range exp.Emit(x, kk, p) {
		w("%s", l)
	}
	w("MOVL $0x%08x, AX // 1", math.Float32bits(1))
	w("VMOVD AX, X%d", softmaxK)
	w("VPBROADCASTD X%d, %s", softmaxK, kk)
	w("VMOVUPS (R8)(BX*1), %s", x)
	if lanes == 16 {
		w("VCMPPS $1, %s, %s, K1 // old max < new max", mNew, x)
		w("VMOVAPS %s, K1, %s", p, kk)
	} else {
		w("VCMPPS $1, %s, %s, %s // old max < new max", mNew, x, x)
		w("VBLENDVPS %s, %s, %s, %s", x, p, kk, kk)
	}
	// l = l·alpha + sum, then the new maxima and alpha.
	w("VMOVUPS (R9)(BX*1), %s", x)
	w("VFMADD231PS %s, %s, %s", x, kk, sum)
	w("VMOVUPS %s, (R9)(BX*1)", sum)
	w("VMOVUPS %s, (R8)(BX*1)", mNew)
	w("VMOVUPS %s, (R10)(BX*1)", kk)
	w("ADDQ $%d, BX", 4*lanes)
	w("CMPQ BX, $%d", row)
	w("JLT lanes")
	w("VZEROUPPER")
	w("RET")
	return b.String()
}
