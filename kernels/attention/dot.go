package attention

import (
	"fmt"
	"math"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/halfcopy"
	"github.com/autotune-dev/autotune/schedule"
)

// The bf16 form of convert=dot (specialised kernels of the lanes layout
// with 16-lane assembly tiles): Q·Kᵀ on bf16 pairs of D with VDPBF16PS
// (goasm.Tile.Dot), half the multiply-add instructions of the float32
// tiles. The entry decodes q and v into pooled float32 copies, as the
// copying form does, but packs k as pairs: word t of a key's row holds
// element 2t in its low half and 2t+1 in its high one, an odd D's last
// pair zero in its high half, in the first D2 = ⌈D/2⌉ words of the row's
// D, so that k's offsets are the float32 kernel's. The float32 part is
// the lanes kernel of the config with these changes:
//
//   - Load keeps the query rows as pairs in qt (D2 rows of BR), unscaled:
//     their float32 copies hold bf16 values, so a pair is the high halves
//     of two elements' bits, exact, where rounding q/√D to bf16 would move
//     a score by up to √D·2^-9·max|q|·max|k|;
//   - the scores' tiles are VDPBF16PS over D2 steps, in float32;
//   - the softmax multiplies the exp's arguments, score minus maximum, by
//     1/√D (the maxima are of the unscaled scores, and 1/√D > 0);
//   - P·V, the rescaling and the store are the float32 kernel's.
//
// The output is encoded to nearest even. f16 has no dot product here: an
// f16 kernel of convert=dot (which an f16 search does not propose), like
// every shape-generic kernel, is the copying form (kernels/halfcopy); the
// space offers the value with the form's tiles only.

// swapPairs, set by a test only, packs k's pairs high half first, a wrong
// layout the reference check must catch.
var swapPairs = false

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
	emitDotEntry(f, k, inner.Name, h, e.causal)
	return goasm.WithHalf(asm, h)
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
// inner, the float32 part, and the function that packs k's pairs.
func emitDotEntry(f *jen.File, k kernels.Kernel, inner string, h golang.Half, causal bool) {
	id := jen.Id
	b, hh, s, d := checkShape(k.Shape)
	n := b * hh * s * d
	scratch, pairsFn := k.Name+"Scratch", k.Name+"Pairs"
	lo, hi := jen.Lit(2).Op("*").Id("t"), jen.Lit(2).Op("*").Id("t").Op("+").Lit(1)
	if swapPairs {
		lo, hi = hi, lo
	}
	pair := func(lo, hi jen.Code) jen.Code {
		return jen.Qual("math", "Float32frombits").Call(jen.Uint32().Call(id("row").Index(lo)).Op("|").
			Uint32().Call(id("row").Index(hi)).Op("<<").Lit(16))
	}
	row := []jen.Code{
		jen.List(id("row"), id("to")).Op(":=").List(id("src").Index(id("r"), id("r").Op("+").Id("D")), id("dst").Index(id("r"), id("r").Op("+").Id("D"))),
		jen.For(id("t").Op(":=").Lit(0), jen.Lit(2).Op("*").Id("t").Op("+").Lit(1).Op("<").Id("D"), id("t").Op("++")).Block(
			id("to").Index(id("t")).Op("=").Add(pair(lo, hi)),
		),
	}
	if d%2 == 1 {
		row = append(row, id("to").Index(jen.Lit(d/2)).Op("=").Qual("math", "Float32frombits").Call(jen.Uint32().Call(id("row").Index(jen.Lit(d-1)))).
			Comment("the last pair's high half zero"))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s sets the first %d words of every row of %d of dst to the row's bf16 pairs in src: word t holds "+
		"element 2t in its low half and 2t+1 in its high one, the layout VDPBF16PS reads.", pairsFn, pairs(d), d)))
	f.Func().Id(pairsFn).Params(id("dst").Index().Float32(), id("src").Index().Uint16()).Block(
		jen.Const().Id("D").Op("=").Lit(d),
		jen.For(id("r").Op(":=").Lit(0), id("r").Op("+").Id("D").Op("<=").Len(id("src")), id("r").Op("+=").Id("D")).Block(row...),
	)

	f.Add(golang.Comment(fmt.Sprintf("%s holds the float32 copies of %s's q, v and output and the pairs of its k, "+
		"reused from call to call so that a call allocates nothing once warm.", scratch, k.Name)))
	f.Var().Id(scratch).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	mask := "non-causal"
	if causal {
		mask = "causal (query i attends to keys j ≤ i)"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√%d)·v of the %d×%d×%d×%d [B][H][S][D] "+
		"tensors q, k and v, %s, all bf16 held as their 16 bits: q·kᵀ on bf16 pairs with VDPBF16PS, the softmax and "+
		"the weighted sum of v in float32 (%s), the output rounded to nearest even.\n\n"+
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
		jen.List(id("out32"), id("q32"), id("k2"), id("v32")).Op(":=").List(part(0), part(1), part(2), part(3)),
		id(h.Decode()).Call(id("q32"), q),
		id(h.Decode()).Call(id("v32"), v),
		id(pairsFn).Call(id("k2"), kk),
		id(inner).Call(id("out32"), id("q32"), id("k2"), id("v32")),
		id(h.Encode()).Call(out, id("out32")),
		id(scratch).Dot("Put").Call(id("pooled")),
	)
}
