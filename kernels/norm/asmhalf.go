package norm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// With convert=reg a bf16 or f16 kernel's assembly reads x and writes y
// as 16-bit elements itself, widened to float32 in registers as they are
// loaded and narrowed to nearest even as they are stored (goasm.Reg16),
// and gamma (and LayerNorm's beta) widened once a call of the rows
// function, a goroutine's chunk of rows (widenVecs): the same float32
// operations as the float32 assembly, so the same bits as convert=block's
// result. On Z registers gamma's vector u is Z17+u, the
// rounding's scratch the accumulator u and its NaN mask K2+u, its
// constants Z25 to Z27; on Y registers gamma is Y12+u, the scratch the
// accumulator u and Y14+u, the constants a table (bf16Sym). Hence
// regMaxUnroll: the unroll interleaves the vectors' bodies, each on
// registers of its own.

// With convert=cvtne a bf16 kernel on Z registers (AVX512-BF16) rounds
// each output vector with VCVTNEPS2BF16, one instruction for convert=reg's
// nine, and the same bits: the vectors of a group, one of which holds a
// subnormal float32 that the instruction flushes to zero, are stored
// again with convert=reg's rounding (goasm.Reg16.NarrowNE and CheckNE,
// checkNE after each sweep's group). An f16 kernel of convert=cvtne, which the space
// offers since it does not see the dtype, is convert=reg's; an f16
// search leaves the value out (kernels.Template.SearchSpace).
const cvtne = kernels.ConvertCVTNE

// The assembly of convert=reg and cvtne reads gamma (and beta) as
// float32s: the rows function widens them at each call, a chunk of rows
// (widenVecs), into scratch padded with zeros to whole vectors, so that
// the output sweep loads them as the float32 kernel does, partial vector
// included, where widening them for every row took two instructions each
// a vector (of LayerNorm's nineteen).

// widened names the float32 copy of the 16-bit vector v.
func widened(v string) string { return v + "32" }

func (k kernel) widenPool() string { return k.name + "Widened" }

// widenVecs returns the statements of the rows function that widen vecs
// into widened(v), float32 scratch from widenPool of cols rounded up to
// whole vectors (and a vector more with store=stream, streamPad), zero
// past cols.
func (k kernel) widenVecs(vecs []string) []jen.Code {
	id := jen.Id
	padded := jen.Lit(roundUp(k.cols, k.lanes) + k.streamPad())
	if k.generic {
		padded = jen.Parens(id("cols").Op("+").Lit(k.lanes - 1)).Op("/").Lit(k.lanes).Op("*").Lit(k.lanes)
		if k.streamPad() > 0 {
			padded.Op("+").Lit(k.streamPad())
		}
	}
	out := []jen.Code{
		id("padded").Op(":=").Add(padded),
		id("buf").Op(":=").Id(k.widenPool()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		jen.If(jen.Cap(jen.Op("*").Id("buf")).Op("<").Lit(len(vecs)).Op("*").Id("padded")).Block(
			jen.Op("*").Id("buf").Op("=").Make(jen.Index().Float32(), jen.Lit(len(vecs)).Op("*").Id("padded")),
		),
		jen.Defer().Id(k.widenPool()).Dot("Put").Call(id("buf")),
	}
	for i, v := range vecs {
		w := widened(v)
		out = append(out,
			id(w).Op(":=").Parens(jen.Op("*").Id("buf")).Index(jen.Lit(i).Op("*").Id("padded"), jen.Lit(i+1).Op("*").Id("padded")),
			id(k.half.Decode()).Call(id(w).Index(jen.Empty(), id("cols")), id(v).Index(jen.Empty(), id("cols"))),
			jen.Clear(id(w).Index(id("cols"), jen.Empty())),
		)
	}
	return out
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// elemBytes is the size of an element of x and y in memory.
func (k kernel) elemBytes() int {
	if k.reg {
		return 2
	}
	return 4
}

// streamPad is the scratch past the whole vectors of a widened row that
// store=stream reads: its vectors start after the row's head, up to a
// vector short of an alignment, so the last reaches that far past them.
func (k kernel) streamPad() int {
	if k.stream {
		return k.lanes
	}
	return 0
}

// regMaxUnroll is the most vectors in flight of convert=reg, by lanes.
var regMaxUnroll = map[int]int{asmLanes: 4, asmLanesAVX2: 2}

// regConsts are the Z registers of the bf16 rounding's constants.
var regConsts = [3]int{25, 26, 27}

func (k kernel) bf16Sym() string { return k.asmFn() + "BF16<>" }

// reg16 returns the conversions of a convert=reg kernel.
func (k kernel) reg16() goasm.Reg16 {
	h := goasm.Reg16{DType: k.half.DType, Lanes: k.lanes}
	if k.lanes == asmLanes {
		for i, r := range regConsts {
			h.Consts[i] = fmt.Sprintf("Z%d", r)
		}
		return h
	}
	h.Consts = goasm.TableConsts(k.bf16Sym())
	return h
}

// regData returns the tables of a convert=reg kernel: bf16Sym on Y
// registers.
func (k kernel) regData() []string {
	if !k.reg || k.half.DType != dtype.BF16 || k.lanes == asmLanes {
		return nil
	}
	return k.reg16().Data(k.bf16Sym())
}

// regSetup returns what the output sweep of a convert=reg kernel needs
// before its loops: bf16's constants in registers on Z registers.
func (k kernel) regSetup() []string {
	if !k.reg || k.half.DType != dtype.BF16 || k.lanes != asmLanes {
		return nil
	}
	return goasm.SetConsts(regConsts)
}

// regGamma is the register of gamma's vector u.
func (k kernel) regGamma(u int) int {
	if k.lanes == asmLanes {
		return 17 + u
	}
	return 12 + u
}

// xOf returns the X register under vector register v.
func xOf(v string) string { return "X" + v[1:] }

// regStore returns the end of an output body for convert=reg: y in
// vector register x narrowed, clobbering g, and stored; the partial vector
// under km on Z registers and a word at a time on Y registers; whole
// vectors past the caches when a.h.Stream is set (the middle of a
// streamed row).
func (a *asmWriter) regStore(u int, masked bool, km, x, g string) []string {
	addr, mask := a.at("DI", u), ""
	switch {
	case masked && a.zmm:
		mask = km
	case masked:
		addr = ""
	}
	// The NaN masks: K2+u, or with store=stream, whose head and tail
	// masks are K2 and K3, K4+u (unroll 4 at most on Z registers).
	nan := fmt.Sprintf("K%d", 2+u)
	if a.stream {
		nan = fmt.Sprintf("K%d", 4+u)
	}
	if a.cvtne && addr != "" {
		v := goasm.NE{P: x, X: g, T: a.vr(u), Nan: nan, Addr: addr, Mask: mask}
		a.ne = append(a.ne, v)
		return a.h.NarrowNE(v)
	}
	out := a.h.Narrow(x, g, a.vr(u), a.vr(14+u), nan, addr, mask)
	switch {
	case addr != "":
		return out
	case a.generic:
		return append(out, goasm.StoreWordsTo(xOf(g), "DI", "R9", "AX", "out_st")...)
	}
	return append(out, goasm.StoreWords(xOf(g), "DI", a.cols%a.lanes)...)
}

// slowLoad returns the instructions that set X1 to the float64 of the
// element at CX of the row of x, for the float64 sum of squares.
func (k kernel) slowLoad() []string {
	if !k.reg {
		return []string{"VCVTSS2SD (SI)(CX*1), X1, X1"}
	}
	return append(k.elem16("(SI)(CX*1)", "X1"), "VCVTSS2SD X1, X1, X1")
}

// elem16 returns the instructions that set X register x to the float32
// of the 16-bit element at addr, through AX.
func (k kernel) elem16(addr, x string) []string {
	if k.half.DType == dtype.F16 {
		return []string{"MOVWLZX " + addr + ", AX", "VMOVD AX, " + x, fmt.Sprintf("VCVTPH2PS %s, %s", x, x)}
	}
	return []string{"MOVWLZX " + addr + ", AX", "SHLL $16, AX", "VMOVD AX, " + x}
}
