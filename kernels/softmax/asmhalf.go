package softmax

import (
	"fmt"

	"github.com/autotune-dev/autotune/dtype"
)

// With convert=reg a bf16 or f16 kernel's assembly reads and writes the
// 16-bit elements itself: a vector of 16 bits is widened to float32 in
// registers as it is loaded (bf16: VPMOVZXWD then VPSLLD $16; f16:
// VCVTPH2PS), the passes compute in float32 exactly as the float32
// assembly does, and the result is narrowed to nearest even as it is
// stored. dst has no room for float32 between the sums and the scaling:
// the sums store e^(x-max) into tmp, a float32 row (and a vector) of
// scratch that stays in the caches, and the scaling reads it there, the
// same bits as the float32 kernel's dst before its scaling, hence a
// result bit for bit that of convert=block. (Computing e^(x-max) again
// from src instead measured 1.1-1.2× slower at 4096×1024: the exp, not
// memory, bounds these rows on two cores.)
//
// Narrowing: f16 by VCVTPS2PH with rounding control 0 (to nearest even,
// not MXCSR's mode); bf16 by the integer rounding of package dtype, x +
// 0x7fff + (the kept half's last bit), shifted right by 16, a NaN by its
// top half made quiet, as goasm.Half does. VCVTNEPS2BF16 (AVX512-BF16)
// would do it in one instruction but flushes subnormal inputs and results
// to zero, which package dtype does not: it is not used. On Z registers
// the words are stored by VPMOVDW (VCVTPS2PH for f16), under K1 for the
// partial vector; on Y registers a partial vector is moved a word at a
// time (VPINSRW, VPEXTRW), since AVX2 has no masked 16-bit moves.

// bf16Sym is the table of the constants of the bf16 rounding on Y
// registers: 1, 0x7fff and 0x40 in every lane, a vector each.
func (a *asmWriter) bf16Sym() string { return a.asmFn() + "BF16<>" }

// bf16Consts are the constants of the bf16 rounding, in bf16Sym's order
// and in registers acc to acc+2 on Z registers during the scaling.
var bf16Consts = []struct {
	val  uint32
	what string
}{{1, "the kept half's last bit"}, {0x7fff, "the rounding bias"}, {0x40, "a NaN's quiet bit"}}

// halfData writes the tables the conversions read: bf16Sym on Y
// registers.
func (a *asmWriter) halfData() {
	if a.half.DType != dtype.BF16 || !a.reg || a.zmm {
		return
	}
	a.b.WriteString("\n")
	for i, c := range bf16Consts {
		for l := range asmLanesAVX2 {
			fmt.Fprintf(&a.b, "DATA %s+%d(SB)/4, $0x%08x\n", a.bf16Sym(), 4*(asmLanesAVX2*i+l), c.val)
		}
	}
	fmt.Fprintf(&a.b, "GLOBL %s(SB), RODATA|NOPTR, $%d // 1, 0x7fff, 0x40: the bf16 rounding\n", a.bf16Sym(), 4*asmLanesAVX2*len(bf16Consts))
}

// bf16Const returns the operand of constant i of bf16Consts.
func (a *asmWriter) bf16Const(i int) string {
	if a.zmm {
		return a.v(a.r.acc + i)
	}
	return fmt.Sprintf("%s+%d(SB)", a.bf16Sym(), 4*asmLanesAVX2*i)
}

// x16 returns the 128-bit register under vector register n.
func x16(n int) string { return fmt.Sprintf("X%d", n) }

// half16 is the 16-bit dtype of a convert=reg kernel.
func (a *asmWriter) half16() dtype.DType { return a.half.DType }

// widen returns the instructions that load vector u of 16-bit elements
// at SI into register x as float32s; masked, the partial vector, the
// lanes past the row's end zero.
func (a *asmWriter) widen(u, x int, masked bool) []string {
	addr, v := a.at("SI", u), a.v(x)
	if masked && !a.zmm {
		return append(a.tailWords(x), a.widenReg(x16(x), v)...)
	}
	z := ""
	if masked {
		z = ".Z"
		addr += ", K1"
	}
	if a.half16() == dtype.F16 {
		return []string{fmt.Sprintf("VCVTPH2PS%s %s, %s", z, addr, v)}
	}
	return []string{fmt.Sprintf("VPMOVZXWD%s %s, %s", z, addr, v), fmt.Sprintf("VPSLLD $16, %s, %s", v, v)}
}

// widenReg widens the 16-bit elements of register src into v.
func (a *asmWriter) widenReg(src, v string) []string {
	if a.half16() == dtype.F16 {
		return []string{fmt.Sprintf("VCVTPH2PS %s, %s", src, v)}
	}
	return []string{fmt.Sprintf("VPMOVZXWD %s, %s", src, v), fmt.Sprintf("VPSLLD $16, %s, %s", v, v)}
}

// tailWords returns the instructions that move the partial vector's
// words at SI from CX into the low words of X register x, the others
// zero: one VPINSRW a word for a specialised kernel; for a generic one a
// loop from the row's last word down, each shifted in at the bottom.
func (a *asmWriter) tailWords(x int) []string {
	r := x16(x)
	out := []string{fmt.Sprintf("VPXOR %s, %s, %s", r, r, r)}
	if !a.generic {
		for i := range a.tail {
			out = append(out, fmt.Sprintf("VPINSRW $%d, %d(SI)(CX*1), %s, %s", i, 2*i, r, r))
		}
		return out
	}
	l := a.pass + "_ld"
	return append(out,
		"MOVQ R9, DX",
		l+":",
		"SUBQ $2, DX",
		fmt.Sprintf("VPSLLDQ $2, %s, %s", r, r),
		fmt.Sprintf("VPINSRW $0, (SI)(DX*1), %s, %s", r, r),
		"CMPQ DX, CX",
		"JGT "+l)
}

// storeTailWords returns the instructions that store the low words of X
// register x, the partial vector, at DI from CX: the inverse of
// tailWords.
func (a *asmWriter) storeTailWords(x int) []string {
	r := x16(x)
	var out []string
	if !a.generic {
		for i := range a.tail {
			out = append(out, fmt.Sprintf("VPEXTRW $%d, %s, %d(DI)(CX*1)", i, r, 2*i))
		}
		return out
	}
	l := a.pass + "_st"
	return append(out,
		"MOVQ CX, DX",
		l+":",
		fmt.Sprintf("VPEXTRW $0, %s, (DI)(DX*1)", r),
		fmt.Sprintf("VPSRLDQ $2, %s, %s", r, r),
		"ADDQ $2, DX",
		"CMPQ DX, R9",
		"JLT "+l)
}

// narrow returns the instructions that round the float32s of register p
// to 16 bits and store them as vector u at DI (masked: the partial
// vector), through registers x and t and, on Y registers, t2, which it
// clobbers; p too for bf16 on Y registers.
func (a *asmWriter) narrow(u, p, x, t, t2 int, masked bool) []string {
	addr := a.at("DI", u)
	if masked && a.zmm {
		addr = "K1, " + addr
	}
	vp, vx, vt := a.v(p), a.v(x), a.v(t)
	if a.half16() == dtype.F16 {
		if masked && !a.zmm {
			return append([]string{fmt.Sprintf("VCVTPS2PH $0, %s, %s", vp, x16(x))}, a.storeTailWords(x)...)
		}
		return []string{fmt.Sprintf("VCVTPS2PH $0, %s, %s", vp, addr)}
	}
	out := []string{
		fmt.Sprintf("VPSRLD $16, %s, %s", vp, vt),
	}
	if a.zmm {
		nan := fmt.Sprintf("K%d", 2+u) // a mask register a vector: the unroll interleaves
		return append(out,
			fmt.Sprintf("VPANDD %s, %s, %s", a.bf16Const(0), vt, vt),
			fmt.Sprintf("VPADDD %s, %s, %s", a.bf16Const(1), vp, vx),
			fmt.Sprintf("VPADDD %s, %s, %s", vt, vx, vx),
			fmt.Sprintf("VPSRLD $16, %s, %s", vx, vx),
			fmt.Sprintf("VCMPPS $3, %s, %s, %s", vp, vp, nan), // unordered: NaN
			fmt.Sprintf("VPSRLD $16, %s, %s", vp, vt),
			fmt.Sprintf("VPORD %s, %s, %s, %s", a.bf16Const(2), vt, nan, vx),
			fmt.Sprintf("VPMOVDW %s, %s", vx, addr))
	}
	vt2 := a.v(t2)
	out = append(out,
		fmt.Sprintf("VPAND %s, %s, %s", a.bf16Const(0), vt, vt2),
		fmt.Sprintf("VPADDD %s, %s, %s", a.bf16Const(1), vp, vx),
		fmt.Sprintf("VPADDD %s, %s, %s", vt2, vx, vx),
		fmt.Sprintf("VPSRLD $16, %s, %s", vx, vx),
		fmt.Sprintf("VCMPPS $3, %s, %s, %s", vp, vp, vt2), // unordered: all ones where NaN
		fmt.Sprintf("VPOR %s, %s, %s", a.bf16Const(2), vt, vt),
		fmt.Sprintf("VBLENDVPS %s, %s, %s, %s", vt2, vt, vx, vx),
		fmt.Sprintf("VEXTRACTI128 $1, %s, %s", vx, x16(t2)),
		fmt.Sprintf("VPACKUSDW %s, %s, %s", x16(t2), x16(x), x16(x))) // words ≤ 0xffff: no saturation
	if masked {
		return append(out, a.storeTailWords(x)...)
	}
	return append(out, fmt.Sprintf("VMOVDQU %s, %s", x16(x), addr))
}

// maxHalf is maxPass's body for convert=reg.
func (a *asmWriter) maxHalf(u int, masked bool) []string {
	r := a.r
	x, acc := a.v(r.x+u), a.v(r.acc+u)
	out := a.widen(u, r.x+u, masked)
	switch {
	case !masked:
		return append(out, fmt.Sprintf("VMAXPS %s, %s, %s", x, acc, acc))
	case a.zmm:
		return append(out, fmt.Sprintf("VMAXPS %s, %s, K1, %s", x, acc, acc))
	}
	m := a.v(r.k + u)
	return append(out,
		fmt.Sprintf("VMOVUPS %s, %s", a.mask(), m),
		fmt.Sprintf("VMAXPS %s, %s, %s", x, acc, x),
		fmt.Sprintf("VBLENDVPS %s, %s, %s, %s", m, x, acc, acc))
}

// tmpAt returns the address in tmp (BX) of float32 vector u from the
// offset CX of the 16-bit row.
func (a *asmWriter) tmpAt(u int) string { return fmt.Sprintf("%d(BX)(CX*2)", 4*a.lanes*u) }

// sumHalf is sumPass's body for convert=reg: e^(x-max) into tmp, whole
// vectors even at the row's end (tmp has a vector to spare), and its sum.
func (a *asmWriter) sumHalf(u int, masked bool) []string {
	r := a.r
	x, p, acc := a.v(r.x+u), a.v(r.p+u), a.v(r.acc+u)
	out := append(a.widen(u, r.x+u, masked), fmt.Sprintf("VSUBPS %s, %s, %s", a.v(r.max), x, x))
	if a.prefetch && !masked {
		out = append(out, fmt.Sprintf("PREFETCHT0 %s", a.at("R12", u)))
	}
	out = append(out, r.exp.Emit(x, a.v(r.k+u), p)...)
	out = append(out, fmt.Sprintf("VMOVUPS %s, %s", p, a.tmpAt(u)))
	switch {
	case !masked:
		return append(out, fmt.Sprintf("VADDPS %s, %s, %s", p, acc, acc))
	case a.zmm:
		return append(out, fmt.Sprintf("VADDPS %s, %s, K1, %s", p, acc, acc))
	}
	return append(out,
		fmt.Sprintf("VMOVUPS %s, %s", a.mask(), x),
		fmt.Sprintf("VANDPS %s, %s, %s", x, p, p),
		fmt.Sprintf("VADDPS %s, %s, %s", p, acc, acc))
}

// scaleHalf is scalePass's body for convert=reg: tmp·(1/sum), narrowed
// into dst.
func (a *asmWriter) scaleHalf(u int, masked bool) []string {
	r := a.r
	p := a.v(r.p + u)
	out := []string{fmt.Sprintf("VMULPS %s, %s, %s", a.tmpAt(u), a.v(r.scale), p)}
	return append(out, a.narrow(u, r.p+u, r.x+u, r.k+u, r.acc+u, masked)...)
}

// scaleHalfSetup writes what the scaling needs before its loops: on Z
// registers, bf16's constants in acc to acc+2, free after the sums.
func (a *asmWriter) scaleHalfSetup() {
	if a.half16() != dtype.BF16 || !a.zmm {
		return
	}
	for i, c := range bf16Consts {
		reg := a.r.acc + i
		a.w("MOVL $0x%x, AX // %s", c.val, c.what)
		a.w("VMOVD AX, X%d", reg)
		a.w("VPBROADCASTD X%d, %s", reg, a.v(reg))
	}
}
