package softmax

import (
	"fmt"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// With convert=reg a bf16 or f16 kernel's assembly reads and writes the
// 16-bit elements itself, widened to float32 in registers as they are
// loaded and narrowed to nearest even as they are stored (goasm.Reg16);
// the passes compute in float32 exactly as the float32 assembly does. dst
// has no room for float32 between the sums and the scaling: the sums
// store e^(x-max) into tmp, a float32 row (and a vector) of scratch that
// stays in the caches, and the scaling reads it there, the same bits as
// the float32 kernel's dst before its scaling, hence a result bit for bit
// that of convert=block. (Computing e^(x-max) again from src instead
// measured 1.6× slower at 4096×1024 bf16 on two cores: the exp, not
// memory, bounds these rows there.)

// With convert=cvtne a bf16 kernel on Z registers (AVX512-BF16) rounds
// the scaling's vectors with VCVTNEPS2BF16, one instruction for
// convert=reg's nine, and the same bits: the vectors of a group that hold
// a subnormal, which the instruction flushes to zero, are stored again
// with reg's rounding, out of line, when the check that ends the group
// finds one (goasm.Reg16.NarrowNE, CheckNE). An f16 kernel of
// convert=cvtne, which the space offers since it does not see the dtype,
// is convert=reg's; an f16 search leaves the value out
// (kernels.Template.SearchSpace).
const cvtne = kernels.ConvertCVTNE

// reg16 returns the conversions of a convert=reg kernel: on Z registers
// bf16's constants in acc to acc+2, free during the scaling; on Y
// registers in a table (bf16Sym).
func (a *asmWriter) reg16() goasm.Reg16 {
	h := goasm.Reg16{DType: a.half.DType, Lanes: a.lanes, Stream: a.nt}
	if a.zmm {
		for i := range h.Consts {
			h.Consts[i] = a.v(a.r.acc + i)
		}
		return h
	}
	h.Consts = goasm.TableConsts(a.bf16Sym())
	return h
}

// bf16Sym is the table of the constants of the bf16 rounding on Y
// registers.
func (a *asmWriter) bf16Sym() string { return a.asmFn() + "BF16<>" }

// halfData writes the tables the conversions read: bf16Sym on Y
// registers.
func (a *asmWriter) halfData() {
	if !a.reg || a.half.DType != dtype.BF16 || a.zmm {
		return
	}
	a.b.WriteString("\n")
	for _, l := range a.reg16().Data(a.bf16Sym()) {
		fmt.Fprintf(&a.b, "%s\n", l)
	}
}

// widen returns the instructions that load vector u of 16-bit elements
// at SI into register x as float32s; masked, the partial vector, the
// lanes past the row's end zero.
func (a *asmWriter) widen(u, x int, masked bool) []string {
	h, v := a.reg16(), a.v(x)
	switch {
	case !masked:
		return h.Load(a.at("SI", u), v, "")
	case a.zmm:
		return h.Load(a.at("SI", u), v, "K1")
	}
	words := goasm.WordsTo(x16(x), "SI", "R9", "DX", a.pass+"_ld")
	if !a.generic {
		words = goasm.Words(x16(x), "SI", a.tail)
	}
	return append(words, h.Widen(x16(x), v)...)
}

// x16 returns the 128-bit register under vector register n.
func x16(n int) string { return fmt.Sprintf("X%d", n) }

// tmpAt returns the address in tmp (BX) of float32 vector u from the
// offset CX of the 16-bit row.
func (a *asmWriter) tmpAt(u int) string { return fmt.Sprintf("%d(BX)(CX*2)", 4*a.lanes*u) }

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
// into dst; a mask register a vector for NaNs, since the unroll
// interleaves the bodies.
func (a *asmWriter) scaleHalf(u int, masked bool) []string {
	r := a.r
	p := a.v(r.p + u)
	out := []string{fmt.Sprintf("VMULPS %s, %s, %s", a.tmpAt(u), a.v(r.scale), p)}
	addr, mask := a.at("DI", u), ""
	switch {
	case masked && a.zmm:
		mask = "K1"
	case masked:
		addr = ""
	}
	if a.cvtne {
		v := goasm.NE{P: p, X: a.v(r.x + u), T: a.v(r.k + u), Nan: fmt.Sprintf("K%d", 2+u), Addr: addr, Mask: mask}
		a.ne = append(a.ne, v)
		return append(out, a.reg16().NarrowNE(v)...)
	}
	out = append(out, a.reg16().Narrow(p, a.v(r.x+u), a.v(r.k+u), a.v(r.acc+u), fmt.Sprintf("K%d", 2+u), addr, mask)...)
	if addr != "" {
		return out
	}
	if a.generic {
		return append(out, goasm.StoreWordsTo(x16(r.x+u), "DI", "R9", "DX", a.pass+"_st")...)
	}
	return append(out, goasm.StoreWords(x16(r.x+u), "DI", a.tail)...)
}

// checkNE ends the vectors convert=cvtne stored since the last call: those
// holding a subnormal are stored again (goasm.Reg16.CheckNE), out of
// line, after RET.
func (a *asmWriter) checkNE() {
	if len(a.ne) == 0 {
		return
	}
	a.labels++
	inline, slow := a.reg16().CheckNE(a.ne, fmt.Sprintf("%s_ne%d", a.pass, a.labels))
	for _, l := range inline {
		a.w("%s", l)
	}
	a.slow, a.ne = append(a.slow, slow...), nil
}

// scaleHalfSetup writes what the scaling needs before its loops: on Z
// registers, bf16's constants in acc to acc+2, free after the sums.
func (a *asmWriter) scaleHalfSetup() {
	if a.half.DType != dtype.BF16 || !a.zmm {
		return
	}
	for _, l := range goasm.SetConsts([3]int{a.r.acc, a.r.acc + 1, a.r.acc + 2}) {
		a.w("%s", l)
	}
}
