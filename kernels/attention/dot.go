package attention

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/halfcopy"
	"github.com/autotune-dev/autotune/schedule"
)

// The bf16 form of convert=dot (specialised kernels of the lanes layout
// with 16-lane assembly tiles): both products on bf16 pairs with
// VDPBF16PS (goasm.Tile.Dot), half the multiply-add instructions of the
// float32 tiles. The entry decodes q into a pooled float32 copy, as the
// copying form does, and packs k and v as pairs into pooled buffers of
// v's size, so that their offsets are the float32 kernel's:
//
//   - k as pairs of D: word t of a key's row holds element 2t in its low
//     half and 2t+1 in its high one, an odd D's last pair zero in its
//     high half, in the first D2 = ⌈D/2⌉ words of the row's D;
//   - v as pairs of keys within each block of bc keys: row t of a block
//     of cols keys holds, for t < ⌈cols/2⌉, the block's rows 2t and 2t+1
//     element by element (emitValuePairs; 16 elements a step in assembly,
//     goasm.Pairs), an odd block's last pair zero in its high half.
//
// The float32 part is the lanes kernel of the config with these changes:
//
//   - Load keeps the query rows as pairs in qt (D2 rows of BR), unscaled:
//     their float32 copies hold bf16 values, so a pair is the high halves
//     of two elements' bits, exact, where rounding q/√D to bf16 would move
//     a score by up to √D·2^-9·max|q|·max|k|;
//   - the scores' tiles are VDPBF16PS over D2 steps, in float32;
//   - the softmax multiplies the exp's arguments, score minus maximum, by
//     1/√D (the maxima are of the unscaled scores, and 1/√D > 0);
//   - after the softmax, WeightPairs (assembly) rounds the block's weights
//     to bf16, nearest even, packs them in place as pairs of keys (row t
//     of p holds keys 2t and 2t+1, zero past the block) and adds to the
//     running sums l the rounded weights' sum less the float32 one;
//   - the output's tiles are VDPBF16PS over ⌈cols/2⌉ steps of pairs of
//     keys; the rescaling and the store are the float32 kernel's.
//
// l sums the rounded weights, the ones P·V multiplies by, rather than the
// float32 ones: the output is then a convex combination of v's rows (a
// constant column of v comes out exact, as the exact softmax gives it),
// and the weights' rounding moves it by at most u/(1-u)·max_c|v_c - m|
// for every m, u = 2^-8, where summing the float32 weights moves it by up
// to u·max|v| (the package doc's # Accuracy has the argument). The
// correction adds one float32 rounding of l per block, as the rescaling
// l·alpha + sum does.
//
// The output is encoded to nearest even. f16 has no dot product here: an
// f16 kernel of convert=dot (which an f16 search does not propose), like
// every shape-generic kernel, is the copying form (kernels/halfcopy); the
// space offers the value with the form's tiles only.

// swapPairs and swapValuePairs, set by tests only, pack k's or v's pairs
// high half first, a wrong layout the reference check must catch.
var swapPairs, swapValuePairs = false, false

// dotEmitter is the Go emitter of both templates: the form above where
// dotForm says, the copying emitter for everything else.
type dotEmitter struct {
	copying halfcopy.Emitter
	causal  bool
}

func (e dotEmitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if !dotForm(k) {
		return e.copying.EmitGo(f, k)
	}
	k.Want(kernels.AMD64.ISA, dtype.BF16)
	inner := k
	inner.Name, inner.DType = k.Name+"F32", dtype.F32
	asm := goEmitter{causal: e.causal, dot: true}.EmitGo(f, inner)
	h := golang.Half{Prefix: k.Name + "Half", DType: k.DType, Asm: true}
	h.Emit(f)
	pairsAsm := emitDotEntry(f, k, inner.Name, h, e.causal)
	return append(goasm.WithHalf(asm, h), pairsAsm...)
}

func (e dotEmitter) Asm(cfg schedule.Config) bool { return e.copying.Asm(cfg) }

// dotForm reports whether k is the VDPBF16PS form: a specialised bf16
// kernel of convert=dot with the lanes layout's 16-lane assembly tiles.
func dotForm(k kernels.Kernel) bool {
	c := k.Config
	return k.DType == dtype.BF16 && k.Shape != nil && c.Str(kernels.ConvertKnob) == "dot" &&
		c.Str("layout") == "lanes" && c.Str("micro") == "asm" && c.Int("vec") == 16
}

// pairs is the number of bf16 pairs of a row of d: d rounded up to even,
// halved.
func pairs(d int) int { return (d + 1) / 2 }

// scale is 1/√D as a float32.
func (k kernel) scale() float32 { return float32(1 / math.Sqrt(float64(k.d))) }

// emitDotLoad emits Load of a dot kernel: the query rows as bf16 pairs of
// D in qt (D2 rows of BR, zero past rows), unscaled, and the output,
// maxima and sums reset.
func (k kernel) emitDotLoad(f *jen.File) {
	id := jen.Id
	bits := func(x jen.Code) *jen.Statement { return jen.Qual("math", "Float32bits").Call(x) }
	at := func(t jen.Code) *jen.Statement {
		return id("st").Dot("qt").Index(jen.Add(t).Op("*").Id("BR").Op("+").Id("i"))
	}
	frombits := func(x jen.Code) *jen.Statement { return jen.Qual("math", "Float32frombits").Call(x) }
	row := []jen.Code{
		id("qi").Op(":=").Id("q").Index(id("i").Op("*").Id("D"), id("i").Op("*").Id("D").Op("+").Id("D")),
		jen.For(id("t").Op(":=").Lit(0), jen.Lit(2).Op("*").Id("t").Op("+").Lit(1).Op("<").Id("D"), id("t").Op("++")).Block(
			at(id("t")).Op("=").Add(frombits(bits(id("qi").Index(jen.Lit(2).Op("*").Id("t"))).Op(">>").Lit(16).Op("|").
				Add(bits(id("qi").Index(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1)))).Op("&").Op("0xffff0000"))),
		),
	}
	if k.d%2 == 1 {
		row = append(row, at(jen.Lit(k.d/2)).Op("=").Add(frombits(bits(id("qi").Index(jen.Lit(k.d-1))).Op(">>").Lit(16))).
			Comment("the last pair's high half zero"))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s starts a unit of the first rows query rows of q (row-major, rows×%d, bf16 values): "+
		"st.qt[t*BR+i] = the bf16 pair of q[i][2t] (low half) and q[i][2t+1] (high), unscaled, zero past rows; st.ot = 0, "+
		"the maxima at -MaxFloat32 (not -Inf: -Inf-(-Inf) would be NaN) and the sums at 0.", k.loadFn(), k.d)))
	f.Func().Id(k.loadFn()).Params(id("st").Op("*").Id(k.stateType()), id("q").Index().Float32(), id("rows").Int()).Block(
		jen.Const().Defs(id("D").Op("=").Lit(k.d), id("BR").Op("=").Lit(k.br), id("D2").Op("=").Lit(pairs(k.d))),
		jen.For(id("i").Op(":=").Range().Id("rows")).Block(row...),
		jen.For(id("i").Op(":=").Id("rows"), id("i").Op("<").Id("BR"), id("i").Op("++")).Block(
			jen.For(id("t").Op(":=").Range().Id("D2")).Block(at(id("t")).Op("=").Lit(0)),
		),
		jen.Clear(id("st").Dot("ot").Index(jen.Empty(), jen.Empty())),
		jen.For(id("i").Op(":=").Range().Id("BR")).Block(
			id("st").Dot("m").Index(id("i")).Op("=").Op("-").Qual("math", "MaxFloat32"),
			id("st").Dot("l").Index(id("i")).Op("=").Lit(0),
		),
	)
}

// emitDotEntry emits the exported function of a dot kernel k, which runs
// inner, the float32 part, and the functions that pack k's and v's pairs;
// it returns the assembly the latter calls.
func emitDotEntry(f *jen.File, k kernels.Kernel, inner string, h golang.Half, causal bool) []byte {
	id := jen.Id
	b, hh, s, d := checkShape(k.Shape)
	n := b * hh * s * d
	scratch, keyPairs, valuePairs := k.Name+"Scratch", k.Name+"KeyPairs", k.Name+"ValuePairs"
	emitKeyPairs(f, keyPairs, d)
	asm := emitValuePairs(f, valuePairs, k.Name+"Interleave", s, d, k.Config.Int("bc"))

	f.Add(golang.Comment(fmt.Sprintf("%s holds the float32 copies of %s's q and output and the pairs of its k and v, "+
		"reused from call to call so that a call allocates nothing once warm.", scratch, k.Name)))
	f.Var().Id(scratch).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	mask := "non-causal"
	if causal {
		mask = "causal (query i attends to keys j ≤ i)"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√%d)·v of the %d×%d×%d×%d [B][H][S][D] "+
		"tensors q, k and v, %s, all bf16 held as their 16 bits: q·kᵀ on bf16 pairs of D and the weighted sum of v on "+
		"bf16 pairs of keys with VDPBF16PS, the softmax in float32 (%s), the output rounded to nearest even.\n\n"+
		"Generated by autotune's attention template for %s; it needs AVX-512 and AVX512-BF16.",
		k.Name, d, b, hh, s, d, mask, inner, k.Config)))
	out, q, kk, v := id("out"), id("q"), id("k"), id("v")
	part := func(i int) jen.Code { return id("buf").Index(jen.Lit(i*n), jen.Lit((i+1)*n)) }
	f.Func().Id(k.Name).Params(jen.List(out, q, kk, v).Index().Uint16()).Block(
		jen.Const().Id("n").Op("=").Lit(n),
		jen.List(out, q, kk, v).Op("=").List(out.Clone().Index(jen.Empty(), id("n")), q.Clone().Index(jen.Empty(), id("n")),
			kk.Clone().Index(jen.Empty(), id("n")), v.Clone().Index(jen.Empty(), id("n"))),
		id("pooled").Op(":=").Id(scratch).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		jen.If(jen.Cap(jen.Op("*").Id("pooled")).Op("<").Lit(4).Op("*").Id("n")).Block(
			jen.Op("*").Id("pooled").Op("=").Make(jen.Index().Float32(), jen.Lit(4).Op("*").Id("n")),
		),
		id("buf").Op(":=").Parens(jen.Op("*").Id("pooled")).Index(jen.Empty(), jen.Lit(4).Op("*").Id("n")),
		jen.List(id("out32"), id("q32"), id("k2"), id("v2")).Op(":=").List(part(0), part(1), part(2), part(3)),
		id(h.Decode()).Call(id("q32"), q),
		id(keyPairs).Call(id("k2"), kk),
		id(valuePairs).Call(id("v2"), v),
		id(inner).Call(id("out32"), id("q32"), id("k2"), id("v2")),
		id(h.Encode()).Call(out, id("out32")),
		id(scratch).Dot("Put").Call(id("pooled")),
	)
	return asm
}

// pair returns the float32 whose bits hold the bf16 pair lo, hi: lo in
// the low half, where VDPBF16PS reads the even element (hi first with
// swap, a planted bug).
func pair(lo, hi jen.Code, swap bool) *jen.Statement {
	if swap {
		lo, hi = hi, lo
	}
	return jen.Qual("math", "Float32frombits").Call(jen.Uint32().Call(lo).Op("|").Uint32().Call(hi).Op("<<").Lit(16))
}

// single returns the float32 whose bits hold the bf16 pair x, 0 (0, x
// with swap).
func single(x jen.Code, swap bool) *jen.Statement {
	bits := jen.Uint32().Call(x)
	if swap {
		bits = bits.Op("<<").Lit(16)
	}
	return jen.Qual("math", "Float32frombits").Call(bits)
}

// emitKeyPairs emits the function name that packs k as pairs of D.
func emitKeyPairs(f *jen.File, name string, d int) {
	id := jen.Id
	row := []jen.Code{
		jen.List(id("row"), id("to")).Op(":=").List(id("src").Index(id("r"), id("r").Op("+").Id("D")), id("dst").Index(id("r"), id("r").Op("+").Id("D"))),
		jen.For(id("t").Op(":=").Lit(0), jen.Lit(2).Op("*").Id("t").Op("+").Lit(1).Op("<").Id("D"), id("t").Op("++")).Block(
			id("to").Index(id("t")).Op("=").Add(pair(id("row").Index(jen.Lit(2).Op("*").Id("t")), id("row").Index(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1)), swapPairs)),
		),
	}
	if d%2 == 1 {
		row = append(row, id("to").Index(jen.Lit(d/2)).Op("=").Qual("math", "Float32frombits").Call(jen.Uint32().Call(id("row").Index(jen.Lit(d-1)))).
			Comment("the last pair's high half zero"))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s sets the first %d words of every row of %d of dst to the row's bf16 pairs in src: word t holds "+
		"element 2t in its low half and 2t+1 in its high one, the layout VDPBF16PS reads.", name, pairs(d), d)))
	f.Func().Id(name).Params(id("dst").Index().Float32(), id("src").Index().Uint16()).Block(
		jen.Const().Id("D").Op("=").Lit(d),
		jen.For(id("r").Op(":=").Lit(0), id("r").Op("+").Id("D").Op("<=").Len(id("src")), id("r").Op("+=").Id("D")).Block(row...),
	)
}

// emitValuePairs emits the function name that packs v as pairs of keys
// within each block of bc keys of a head of s rows of d: row t of a block
// of cols keys, for t < ⌈cols/2⌉, holds in word e the block's rows 2t and
// 2t+1 at e, in the low and high halves, the last pair of an odd block
// zero in its high half; the block's other rows are left alone. Pairs
// never span two blocks, so that a block's pairs start at its first row,
// where the float32 kernel's values start (the offsets stay its own). The
// first d &^ 15 elements of a pair of rows are interleaved in assembly
// (interleave, goasm.Pairs), the rest in Go; it returns that assembly, nil
// where d < 16.
func emitValuePairs(f *jen.File, name, interleave string, s, d, bc int) []byte {
	id := jen.Id
	wide := d &^ (goasm.PairLanes - 1)
	lo, hi := id("lo"), id("hi")
	if swapValuePairs {
		lo, hi = hi, lo
	}
	var both []jen.Code
	if wide > 0 {
		both = append(both, id(interleave).Call(jen.Op("&").Id("to").Index(jen.Lit(0)), jen.Op("&").Add(lo).Index(jen.Lit(0)),
			jen.Op("&").Add(hi).Index(jen.Lit(0)), jen.Lit(wide)))
	}
	if wide < d {
		both = append(both, jen.For(id("e").Op(":=").Lit(wide), id("e").Op("<").Id("D"), id("e").Op("++")).Block(
			id("to").Index(id("e")).Op("=").Add(pair(id("lo").Index(id("e")), id("hi").Index(id("e")), swapValuePairs)),
		))
	}
	rows := func(r jen.Code) *jen.Statement {
		return id("src").Index(id("h").Op("+").Parens(jen.Id("j0").Op("+").Add(r)).Op("*").Id("D"), jen.Empty()).Index(jen.Empty(), id("D"))
	}
	step := []jen.Code{
		id("to").Op(":=").Id("dst").Index(id("h").Op("+").Parens(id("j0").Op("+").Id("t")).Op("*").Id("D"), jen.Empty()).Index(jen.Empty(), id("D")),
		id("lo").Op(":=").Add(rows(jen.Lit(2).Op("*").Id("t"))),
		jen.If(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1).Op("==").Id("cols")).Block(
			jen.For(jen.List(id("e"), id("x")).Op(":=").Range().Id("lo")).Block(
				id("to").Index(id("e")).Op("=").Add(single(id("x"), swapValuePairs)),
			),
			jen.Continue().Comment("the last pair of an odd block"),
		),
		id("hi").Op(":=").Add(rows(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1))),
	}
	step = append(step, both...)
	f.Add(golang.Comment(fmt.Sprintf("%s packs the rows of each block of %d keys of every head of src (%d rows of %d) as bf16 pairs "+
		"of keys into dst, at the block's first rows: word e of row t holds element e of the block's rows 2t and 2t+1 in its "+
		"low and high halves, the layout VDPBF16PS reads; an odd block's last pair is zero in its high half, and the "+
		"block's rows past its pairs are left alone.", name, bc, s, d)))
	f.Func().Id(name).Params(id("dst").Index().Float32(), id("src").Index().Uint16()).Block(
		jen.Const().Defs(id("S").Op("=").Lit(s), id("D").Op("=").Lit(d), id("BC").Op("=").Lit(bc)),
		jen.For(id("h").Op(":=").Lit(0), id("h").Op("+").Id("S").Op("*").Id("D").Op("<=").Len(id("src")), id("h").Op("+=").Id("S").Op("*").Id("D")).Block(
			jen.For(id("j0").Op(":=").Lit(0), id("j0").Op("<").Id("S"), id("j0").Op("+=").Id("BC")).Block(
				id("cols").Op(":=").Min(id("BC"), id("S").Op("-").Id("j0")),
				jen.For(id("t").Op(":=").Lit(0), jen.Lit(2).Op("*").Id("t").Op("<").Id("cols"), id("t").Op("++")).Block(step...),
			),
		),
	)
	if wide == 0 {
		return nil
	}
	f.Add(golang.Comment(fmt.Sprintf("%s sets the bits of dst[e] to lo[e] in the low half and hi[e] in the high one "+
		"for e < n, n a multiple of %d.\n\nIt is Go assembly for AVX-512, in the kernel's .s file; the caller checks the bounds.",
		interleave, goasm.PairLanes)))
	f.Comment("//go:noescape")
	f.Func().Id(interleave).Params(id("dst").Op("*").Float32(), jen.List(id("lo"), id("hi")).Op("*").Uint16(), id("n").Int())
	return []byte(goasm.Pairs(interleave))
}

func (k kernel) weightPairsFn() string { return k.name + "WeightPairs" }

// valuesPairs is what the comment of a dot kernel's values function adds:
// its steps are pairs of keys.
func (k kernel) valuesPairs() string {
	if !k.dot {
		return ""
	}
	return " The sum runs over pairs of keys with VDPBF16PS: row t of v holds the bf16 pairs of the block's rows 2t and " +
		"2t+1 and row t of p those of their weights (" + k.weightPairsFn() + "), the last pair of an odd block zero in its high half."
}

// weightPairsCall returns the call of the assembly that turns a block's
// weights into the pairs the values' tiles read.
func (k kernel) weightPairsCall() jen.Code {
	at := func(field string) jen.Code { return jen.Op("&").Id("st").Dot(field).Index(jen.Lit(0)) }
	return jen.Id(k.weightPairsFn()).Call(at("p"), at("l"), jen.Id("cols"))
}

// weightPairsDecl returns the Go declaration of weightPairsAsm.
func (k kernel) weightPairsDecl() jen.Code {
	id := jen.Id
	return jen.Comment(fmt.Sprintf("%s rounds the weights of a block of cols ≥ 1 keys, p[c*%d+i], to bf16 (nearest even) "+
		"and packs them in place as pairs of keys: p[t*%d+i] holds key 2t's weight in its low half and key 2t+1's "+
		"(zero past cols) in its high one, the layout VDPBF16PS reads. It adds to l[i] the rounded weights' sum less "+
		"the float32 weights' sum, so that the running sums add up the weights the output does.",
		k.weightPairsFn(), k.br, k.br)).Line().
		Comment("").Line().
		Comment("It is Go assembly for AVX-512, in the kernel's .s file; p and l are the state's arrays.").Line().
		Comment("//go:noescape").Line().
		Func().Id(k.weightPairsFn()).Params(jen.List(id("p"), id("l")).Op("*").Float32(), id("cols").Int())
}

// weightPairsAsm returns the TEXT block of weightPairsDecl, one vector of
// 16 query lanes at a time. A weight w ≥ 0 rounds to nearest even as
// golang.Half rounds bf16, on its bits: w + 0x7fff + (bit 16 of w), the
// low half cleared; no weight is NaN or Inf. The pairs overwrite the
// weights: pair t is written after weights 2t and 2t+1 are read, and
// t ≤ 2t. The differences w̃ - w are exact (w̃ is within a factor of 2
// of w). Registers: DI p, R9 l, R11 cols, BX the byte offset of the
// vector of lanes, SI the weights read, DX the pairs written, CX the
// keys left, Z4 the sum of differences, Z28–Z30 the rounding's
// constants.
func (k kernel) weightPairsAsm() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	label := func(l string) { fmt.Fprintf(&b, "%s:\n", l) }
	broadcast := func(bits uint32, z int) {
		w("MOVL $0x%08x, AX", bits)
		w("VMOVD AX, X%d", z)
		w("VPBROADCASTD X%d, Z%d", z, z)
	}
	// round sets y to x rounded to bf16, as a float32.
	round := func(x, y string) {
		w("VPSRLD $16, %s, %s", x, y)
		w("VPANDD Z29, %s, %s", y, y)
		w("VPADDD Z28, %s, %s", y, y)
		w("VPADDD %s, %s, %s", x, y, y)
		w("VPANDD Z30, %s, %s", y, y)
		w("VSUBPS %s, %s, %s", x, y, x) // x = w̃ - w
		w("VADDPS %s, Z4, Z4", x)
	}
	row := 4 * k.br // bytes between two keys' weights
	fn := k.weightPairsFn()
	fmt.Fprintf(&b, "\n// func %s(p, l *float32, cols int)\n", fn)
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $0-24\n", fn)
	w("MOVQ p+0(FP), DI")
	w("MOVQ l+8(FP), R9")
	w("MOVQ cols+16(FP), R11")
	broadcast(0x7fff, 28)
	broadcast(1, 29)
	broadcast(0xffff0000, 30)
	w("XORQ BX, BX")
	label("lanes")
	w("LEAQ (DI)(BX*1), SI")
	w("MOVQ SI, DX")
	w("MOVQ R11, CX")
	w("VPXORD Z4, Z4, Z4")
	w("CMPQ CX, $2")
	w("JLT pair_one")
	label("pair_two")
	w("VMOVUPS (SI), Z0")
	w("VMOVUPS %d(SI), Z1", row)
	round("Z0", "Z2")
	round("Z1", "Z3")
	w("VPSRLD $16, Z2, Z2")
	w("VPORD Z3, Z2, Z2")
	w("VMOVUPS Z2, (DX)")
	w("ADDQ $%d, SI", 2*row)
	w("ADDQ $%d, DX", row)
	w("SUBQ $2, CX")
	w("CMPQ CX, $2")
	w("JGE pair_two")
	label("pair_one")
	w("TESTQ CX, CX")
	w("JZ pair_sum")
	w("VMOVUPS (SI), Z0")
	round("Z0", "Z2")
	w("VPSRLD $16, Z2, Z2") // the high half zero
	w("VMOVUPS Z2, (DX)")
	label("pair_sum")
	w("VADDPS (R9)(BX*1), Z4, Z4")
	w("VMOVUPS Z4, (R9)(BX*1)")
	w("ADDQ $64, BX")
	w("CMPQ BX, $%d", row)
	w("JLT lanes")
	w("VZEROUPPER")
	w("RET")
	return b.String()
}
