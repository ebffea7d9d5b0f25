package goasm

import (
	"fmt"
	"strconv"

	"github.com/autotune-dev/autotune/dtype"
)

// Reg16 writes the instructions of rows kept in memory as bf16 or f16
// and computed in float32 registers (the convert=reg forms of softmax's
// and RMSNorm's assembly): a vector of 16-bit elements widened as it is
// loaded (bf16: VPMOVZXWD then VPSLLD $16; f16: VCVTPH2PS), and narrowed
// to nearest even as it is stored (f16: VCVTPS2PH with rounding control
// 0, not MXCSR's mode; bf16: package dtype's integer rounding, x + 0x7fff
// + the kept half's last bit, shifted right by 16, a NaN by its top half
// made quiet, as Half does). VCVTNEPS2BF16 (AVX512-BF16) would round in
// one instruction but flushes subnormal inputs and results to zero, which
// package dtype does not: it is not used.
//
// On Z registers a partial vector is loaded and stored under a mask
// register (VPMOVZXWD, VCVTPH2PS and VPMOVDW suppress faults in masked
// lanes); on Y registers AVX2 has no masked 16-bit moves, so a partial
// vector is moved a word at a time (VPINSRW, VPEXTRW).
type Reg16 struct {
	DType dtype.DType
	Lanes int // 8: Y registers; 16: Z registers
	// Consts are the operands of the bf16 rounding's constants, 1, 0x7fff
	// and 0x40 in every lane (Reg16Consts): registers on Z registers,
	// vectors of a table (Data) on Y registers, where registers are short.
	Consts [3]string
	// Stream stores whole vectors (an address and no mask) with
	// VMOVNTDQ, past the caches, so that a store does not first read
	// its line: the address must be aligned to the vector's words (32
	// bytes on Z registers, 16 on Y), and the function ends with SFENCE
	// to order the stores before the caller's. Partial vectors, under a
	// mask or a word at a time, are stored through the caches.
	Stream bool
}

// Reg16Consts are the constants of the bf16 rounding, in Consts' order.
var Reg16Consts = []uint32{1, 0x7fff, 0x40}

// Data returns the definition of table sym holding Reg16Consts as
// vectors of h.Lanes lanes (8 when unset), whose operands Reg16.Consts
// then names (TableConsts for 8 lanes, h16Consts for any).
func (h Reg16) Data(sym string) []string {
	lanes := max(h.Lanes, 8)
	var out []string
	for i, c := range Reg16Consts {
		for l := range lanes {
			out = append(out, fmt.Sprintf("DATA %s+%d(SB)/4, $0x%08x", sym, 4*(lanes*i+l), c))
		}
	}
	return append(out, fmt.Sprintf("GLOBL %s(SB), RODATA|NOPTR, $%d // 1, 0x7fff, 0x40: the bf16 rounding", sym, 4*lanes*len(Reg16Consts)))
}

// TableConsts returns the operands of Data(sym)'s vectors of 8 lanes.
func TableConsts(sym string) [3]string { return h16Consts(sym, 8) }

// h16Consts returns the operands of the vectors of lanes of Data(sym).
func h16Consts(sym string, lanes int) [3]string {
	var c [3]string
	for i := range c {
		c[i] = fmt.Sprintf("%s+%d(SB)", sym, 4*lanes*i)
	}
	return c
}

// Load returns the instructions that set vector register v to the
// float32s of the 16-bit vector at addr; with mask (a K register, Z
// registers only) the lanes it clears are zero and not read.
func (h Reg16) Load(addr, v, mask string) []string {
	z := ""
	if mask != "" {
		z, addr = ".Z", addr+", "+mask
	}
	if h.DType == dtype.F16 {
		return []string{fmt.Sprintf("VCVTPH2PS%s %s, %s", z, addr, v)}
	}
	return []string{fmt.Sprintf("VPMOVZXWD%s %s, %s", z, addr, v), fmt.Sprintf("VPSLLD $16, %s, %s", v, v)}
}

// Widen returns the instructions that set Y register v to the float32s
// of the 8 words of X register x.
func (h Reg16) Widen(x, v string) []string {
	if h.DType == dtype.F16 {
		return []string{fmt.Sprintf("VCVTPH2PS %s, %s", x, v)}
	}
	return []string{fmt.Sprintf("VPMOVZXWD %s, %s", x, v), fmt.Sprintf("VPSLLD $16, %s, %s", v, v)}
}

// Words returns the instructions that set X register x to the n words at
// off(base)(CX*1), n below 8, the others zero.
func Words(x, base string, n int) []string {
	out := []string{fmt.Sprintf("VPXOR %s, %s, %s", x, x, x)}
	for i := range n {
		out = append(out, fmt.Sprintf("VPINSRW $%d, %d(%s)(CX*1), %s, %s", i, 2*i, base, x, x))
	}
	return out
}

// WordsTo returns the instructions that set X register x to the words
// from CX to end (a register of a byte offset, above CX and less than 16
// bytes on) of the row at base, the others zero: from the last down, each
// shifted in at the bottom, through gp (clobbered), with label l.
func WordsTo(x, base, end, gp, l string) []string {
	return []string{
		fmt.Sprintf("VPXOR %s, %s, %s", x, x, x),
		fmt.Sprintf("MOVQ %s, %s", end, gp),
		l + ":",
		fmt.Sprintf("SUBQ $2, %s", gp),
		fmt.Sprintf("VPSLLDQ $2, %s, %s", x, x),
		fmt.Sprintf("VPINSRW $0, (%s)(%s*1), %s, %s", base, gp, x, x),
		fmt.Sprintf("CMPQ %s, CX", gp),
		"JGT " + l,
	}
}

// StoreWords returns the instructions that store the n low words of X
// register x at off(base)(CX*1), n below 8.
func StoreWords(x, base string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("VPEXTRW $%d, %s, %d(%s)(CX*1)", i, x, 2*i, base))
	}
	return out
}

// StoreWordsTo is the inverse of WordsTo: it stores the low words of X
// register x from CX to end, clobbering x and gp.
func StoreWordsTo(x, base, end, gp, l string) []string {
	return []string{
		fmt.Sprintf("MOVQ CX, %s", gp),
		l + ":",
		fmt.Sprintf("VPEXTRW $0, %s, (%s)(%s*1)", x, base, gp),
		fmt.Sprintf("VPSRLDQ $2, %s, %s", x, x),
		fmt.Sprintf("ADDQ $2, %s", gp),
		fmt.Sprintf("CMPQ %s, %s", gp, end),
		"JLT " + l,
	}
}

// x16 returns the X register under vector register v ("Y3", "Z3": "X3").
func x16(v string) string { return "X" + v[1:] }

// Narrow returns the instructions that round the float32s of vector
// register p to 16 bits, clobbering x, t and (Y registers) t2, and
// nan, a K register, on Z registers. With addr, they store the vector
// there, under mask when it is set (Z registers); without, the words are
// left in x's X register (Y registers only), for StoreWords.
func (h Reg16) Narrow(p, x, t, t2, nan, addr, mask string) []string {
	// nt: the words go to the half of x's register that holds them, and
	// from there past the caches.
	nt := h.Stream && addr != "" && mask == ""
	ntStore := fmt.Sprintf("VMOVNTDQ %s, %s", halfOf(x), addr)
	if mask != "" {
		addr = mask + ", " + addr
	}
	if h.DType == dtype.F16 {
		switch {
		case addr == "":
			return []string{fmt.Sprintf("VCVTPS2PH $0, %s, %s", p, x16(x))}
		case nt:
			return []string{fmt.Sprintf("VCVTPS2PH $0, %s, %s", p, halfOf(x)), ntStore}
		}
		return []string{fmt.Sprintf("VCVTPS2PH $0, %s, %s", p, addr)}
	}
	c := h.Consts
	if h.Lanes == 16 {
		out := []string{
			fmt.Sprintf("VPSRLD $16, %s, %s", p, t),
			fmt.Sprintf("VPANDD %s, %s, %s", c[0], t, t),
			fmt.Sprintf("VPADDD %s, %s, %s", c[1], p, x),
			fmt.Sprintf("VPADDD %s, %s, %s", t, x, x),
			fmt.Sprintf("VPSRLD $16, %s, %s", x, x),
			fmt.Sprintf("VCMPPS $3, %s, %s, %s", p, p, nan), // unordered: NaN
			fmt.Sprintf("VPSRLD $16, %s, %s", p, t),
			fmt.Sprintf("VPORD %s, %s, %s, %s", c[2], t, nan, x),
		}
		if nt {
			return append(out, fmt.Sprintf("VPMOVDW %s, %s", x, halfOf(x)), ntStore)
		}
		return append(out, fmt.Sprintf("VPMOVDW %s, %s", x, addr))
	}
	out := []string{
		fmt.Sprintf("VPSRLD $16, %s, %s", p, t),
		fmt.Sprintf("VPAND %s, %s, %s", c[0], t, t2),
		fmt.Sprintf("VPADDD %s, %s, %s", c[1], p, x),
		fmt.Sprintf("VPADDD %s, %s, %s", t2, x, x),
		fmt.Sprintf("VPSRLD $16, %s, %s", x, x),
		fmt.Sprintf("VCMPPS $3, %s, %s, %s", p, p, t2), // unordered: all ones where NaN
		fmt.Sprintf("VPOR %s, %s, %s", c[2], t, t),
		fmt.Sprintf("VBLENDVPS %s, %s, %s, %s", t2, t, x, x),
		fmt.Sprintf("VEXTRACTI128 $1, %s, %s", x, x16(t2)),
		fmt.Sprintf("VPACKUSDW %s, %s, %s", x16(t2), x16(x), x16(x)), // words ≤ 0xffff: no saturation
	}
	switch {
	case addr == "":
		return out
	case nt:
		return append(out, ntStore)
	}
	return append(out, fmt.Sprintf("VMOVDQU %s, %s", x16(x), addr))
}

// halfOf returns the register of half the width of vector register v,
// which holds v's elements narrowed to 16 bits: Y for Z, X for Y.
func halfOf(v string) string {
	if v[0] == 'Z' {
		return "Y" + v[1:]
	}
	return x16(v)
}

// SetConsts returns the instructions that broadcast Reg16Consts into the
// Z registers regs, through AX, for Consts on Z registers.
func SetConsts(regs [3]int) []string {
	var out []string
	for i, c := range Reg16Consts {
		out = append(out,
			fmt.Sprintf("MOVL $0x%x, AX", c),
			fmt.Sprintf("VMOVD AX, X%d", regs[i]),
			fmt.Sprintf("VPBROADCASTD X%d, Z%d", regs[i], regs[i]))
	}
	return out
}

// NarrowNE is Narrow for bf16 on Z registers of a CPU with AVX512-BF16:
// VCVTNEPS2BF16 rounds vector p to nearest even in one instruction into
// x's Y register, which is stored at addr (under mask when it is set),
// with the bits of Narrow (a NaN's top half made quiet) except for
// subnormal inputs, which it reads as zero. So it also sets the K
// register nan to p's subnormal lanes, and a group of such vectors ends
// with CheckNE, which stores them again with Narrow's instructions when
// one holds a subnormal. NarrowNE leaves p as it was and sets no flags,
// so that an unrolled loop may interleave the vectors' instructions.
func (h Reg16) NarrowNE(v NE) []string {
	if h.DType != dtype.BF16 || h.Lanes != 16 || v.Addr == "" {
		panic(fmt.Sprintf("goasm: NarrowNE of %s on %d lanes, address %q: bf16 on Z registers, stored", h.DType, h.Lanes, v.Addr))
	}
	y := "Y" + v.X[1:]
	store := fmt.Sprintf("VMOVDQU16 %s, %s", y, v.Addr)
	switch {
	case v.Mask != "":
		store = fmt.Sprintf("VMOVDQU16 %s, %s, %s", y, v.Mask, v.Addr)
	case h.Stream:
		store = fmt.Sprintf("VMOVNTDQ %s, %s", y, v.Addr)
	}
	return []string{
		fmt.Sprintf("VFPCLASSPSZ $0x20, %s, %s", v.P, v.Nan), // subnormal lanes
		cvtneps2bf16(regNum(v.X), regNum(v.P)),
		store,
	}
}

// NE is a vector NarrowNE rounds: the float32s in P, the words in X's Y
// register, stored at Addr (under Mask when set), P's subnormal lanes in
// the K register Nan; T is scratch for CheckNE's Narrow. Each vector of
// a group has registers of its own.
type NE struct{ P, X, T, Nan, Addr, Mask string }

// CheckNE returns what ends a group of vectors that NarrowNE stored: if
// any holds a subnormal (their Nan registers, which it clobbers), a jump
// to slow, which the caller places out of the way (after the function's
// RET), where Narrow's instructions store every vector of the group again
// before jumping back to the label label+"_done" that ends inline.
func (h Reg16) CheckNE(vs []NE, label string) (inline, slow []string) {
	if len(vs) == 0 {
		return nil, nil
	}
	any := vs[0].Nan
	for _, v := range vs[1:] {
		inline = append(inline, fmt.Sprintf("KORW %s, %s, %s", v.Nan, any, any))
	}
	inline = append(inline, fmt.Sprintf("KORTESTW %s, %s", any, any), "JNZ "+label+"_slow", label+"_done:")
	slow = []string{label + "_slow:"}
	if h.Stream {
		// The streamed stores are weakly ordered: SFENCE makes them
		// visible before the stores through the caches that replace
		// them.
		slow = append(slow, "SFENCE")
		h.Stream = false
	}
	for _, v := range vs {
		slow = append(slow, h.Narrow(v.P, v.X, v.T, "", v.Nan, v.Addr, v.Mask)...)
	}
	return inline, append(slow, "JMP "+label+"_done")
}

// regNum returns the number of vector register v ("Z17": 17).
func regNum(v string) int {
	n, err := strconv.Atoi(v[1:])
	if err != nil {
		panic(fmt.Sprintf("goasm: %q is not a vector register", v))
	}
	return n
}

// cvtneps2bf16 returns VCVTNEPS2BF16 Zsrc, Ydst (the 16 float32s of src
// rounded to bf16, nearest even, into dst) as BYTE directives, since
// the Go assembler has no name for it: EVEX.512.F3.0F38.W0 72 /r,
// register operands only.
func cvtneps2bf16(dst, src int) string {
	inv := func(reg, bit int) int { return ^reg >> bit & 1 }                       // EVEX stores register bits inverted
	p0 := inv(dst, 3)<<7 | inv(src, 4)<<6 | inv(src, 3)<<5 | inv(dst, 4)<<4 | 0b10 // R X B R' 0 0 mm=0F38
	p1 := 0b1111<<3 | 1<<2 | 0b10                                                  // W=0 vvvv unused 1 pp=F3
	p2 := 0b10<<5 | 1<<3                                                           // z=0 L'L=512 b=0 V' aaa=0
	modrm := 0b11<<6 | (dst&7)<<3 | src&7
	return fmt.Sprintf("BYTE $0x62; BYTE $%#02x; BYTE $%#02x; BYTE $%#02x; BYTE $0x72; BYTE $%#02x // VCVTNEPS2BF16 Z%d, Y%d",
		p0, p1, p2, modrm, src, dst)
}
