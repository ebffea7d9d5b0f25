package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/halfcopy"
	"github.com/autotune-dev/autotune/schedule"
)

// The 16-bit forms that convert while packing (convert=pack and
// convert=dot, specialised kernels): a, b, c and the bias hold bf16 or
// f16, and no argument is copied whole. Each run of rows [lo, hi) and
// columns [jlo, jhi) loops as the float32 kernel does (panels of nc
// columns, slices of kc of K, blocks of mc rows), but:
//
//   - the packing functions read 16-bit elements: with pack they decode
//     them into the float32 strips and tiles of pack_b and pack_a; with
//     dot (bf16) they pack pairs of K, element 2t in the low half of a
//     32-bit word and 2t+1 in the high one, the layout VDPBF16PS reads
//     (goasm.Tile.Dot), a K slice of odd depth ending in a pair whose
//     high half is zero;
//   - the last tile of a block is packed with zero rows, and the last
//     strip with zero columns, so every tile is a full assembly tile;
//   - the tiles accumulate into a float32 block of the run's rows × nc
//     columns (rows rounded up to whole tiles), the bias decoded once per
//     panel and added, with the activation, by the tile of the last slice
//     of K, as in the float32 kernel;
//   - on the last slice of K a full tile stores into c itself, rounded
//     to nearest even as it leaves the registers (goasm.Tile.Out); after
//     the slices the rows and columns of partial tiles are narrowed from
//     the block into c (golang.Half's Encode), the same rounding.
//
// A shape-generic kernel of such a config is the copying form
// (halfcopy), which serves every shape.

// packedEmitter is the Go emitter of the CPU templates: the forms above
// where packed says, the copying emitter (halfcopy, around goEmitter)
// for everything else.
type packedEmitter struct {
	copying halfcopy.Emitter
	e       epilogue
}

func newPackedEmitter(op kernels.Op, e epilogue) packedEmitter {
	return packedEmitter{copying: halfcopy.Emitter{Op: op, F32: goEmitter{e}, Vector: vectorConfig}, e: e}
}

func (p packedEmitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if !packed(k) {
		return p.copying.EmitGo(f, k)
	}
	k.Want(kernels.AMD64.ISA, dtype.BF16, dtype.F16)
	kr := newKernel(k.Name, k.Shape, k.Config, p.e)
	kr.plain = true // no archsimd: the same code with and without GOEXPERIMENT=simd
	kr.half = golang.Half{Prefix: k.Name + "Half", DType: k.DType, Asm: true}
	// VDPBF16PS multiplies bf16 in Z registers: an f16 kernel of
	// convert=dot (the space does not see the dtype; an f16 search leaves
	// the value out) is the pack form.
	kr.dot = k.Config.Str(kernels.ConvertKnob) == kernels.ConvertDot && k.DType == dtype.BF16 && kr.lanes == 16
	kr.half.Emit(f)
	kr.emitHalfEntry(f)
	kr.emitRuns(f)
	kr.emitHalfRows(f)
	kr.emitHalfPackB(f)
	kr.emitHalfPackA(f)
	tiles := kr.asmTiles()
	for _, t := range tiles {
		f.Add(t.Decl())
	}
	asm := goasm.WithHalf(goasm.File(tiles...), kr.half)
	if kr.dot {
		f.Add(golang.Comment(fmt.Sprintf("%s packs steps steps of a strip of %d columns of the row-major src, rows ld elements apart: "+
			"for t < steps and j < %d, the bits of dst[t·%d+j] are src[2t·ld+j] in the low half and src[(2t+1)·ld+j] in the high one."+
			"\n\nIt is Go assembly for AVX-512, in the kernel's .s file; the caller checks the bounds.",
			kr.pairsFn(), kr.nr, kr.nr, kr.nr)))
		f.Comment("//go:noescape")
		f.Func().Id(kr.pairsFn()).Params(jen.Id("dst").Op("*").Float32(), jen.Id("src").Op("*").Uint16(), jen.List(jen.Id("ld"), jen.Id("steps")).Int())
		asm = append(asm, goasm.PairStrip{Name: kr.pairsFn(), Cols: kr.nr, Swapped: swapPairs}.Text()...)
	}
	return asm
}

// pairsFn names the assembly that packs B's strips of pairs (goasm.PairStrip).
func (k kernel) pairsFn() string { return k.name + "Pairs" }

func (p packedEmitter) Asm(cfg schedule.Config) bool { return p.copying.Asm(cfg) }

// packed reports whether k is a packed 16-bit form: a specialised bf16
// or f16 kernel of convert=pack or convert=dot, whose tiles the space
// makes assembly on packed A and B (micro=asm, pack_a, pack_b). A
// shape-generic kernel of those values is the copying form of the config.
func packed(k kernels.Kernel) bool {
	c := k.Config
	return k.DType.Size() == 2 && k.Shape != nil && c.Str(kernels.ConvertKnob) != "copy" &&
		c.Str("micro") == "asm" && c.Bool("pack_a") && c.Bool("pack_b")
}

// swapPairs, set by a test only, packs B's pairs high half first, in Go
// and in assembly, a wrong layout the reference check must catch.
var swapPairs = false

// halfStride is the column stride of a packed 16-bit kernel's float32
// block: nc rounded up to whole strips.
func (k kernel) halfStride() int { return roundUp(k.nc, k.nr) }

// steps returns the code of the tile steps of a K slice of depth: depth,
// or with dot its pairs.
func (k kernel) steps(depth jen.Code) *jen.Statement {
	if k.dot {
		return jen.Parens(jen.Add(depth).Op("+").Lit(1)).Op("/").Lit(2)
	}
	return jen.Add(depth)
}

// maxSteps is the most tile steps a K slice has.
func (k kernel) maxSteps() int {
	if k.dot {
		return (k.kc + 1) / 2
	}
	return k.kc
}

// emitHalfEntry emits the exported function of a packed 16-bit kernel.
func (k kernel) emitHalfEntry(f *jen.File) {
	what, vectorOf := "c = a·b", ""
	if k.epi.bias {
		what, vectorOf = k.epi.formula(), fmt.Sprintf(", with bias the %d elements added to every row,", k.n)
	}
	how := "A and B decoded to float32 as they are packed"
	if k.dot {
		how = "A and B packed as bf16 pairs of K for VDPBF16PS (AVX512-BF16)"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes %s for the row-major %d×%d matrix a and %d×%d matrix b%s "+
		"into the row-major %d×%d matrix c, all %s held as their 16 bits, summing in float32 and rounding c to nearest even. "+
		"It overwrites c.\n\nGenerated by autotune's gemm template (%s) for %s: %s; its tiles are Go assembly for AVX-512.",
		k.name, what, k.m, k.k, k.k, k.n, vectorOf, k.m, k.n, k.half.DType, k.epi, k.cfg, how)))
	k.emitEntryFunc(f, jen.Uint16())
}

func (k kernel) halfPool() string { return k.name + "Buffers" }

// emitHalfRows emits the rows function of a packed 16-bit kernel (see
// above) and the pool of its buffers.
func (k kernel) emitHalfRows(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s holds %s's buffers: the packed panel of B, block of A, float32 block of c and decoded bias.",
		k.halfPool(), k.rowsFn())))
	f.Var().Id(k.halfPool()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	carve := func(name string, n jen.Code) []jen.Code {
		return []jen.Code{
			id(name).Op(":=").Id("rest").Index(jen.Empty(), n),
			id("rest").Op("=").Id("rest").Index(n, jen.Empty()),
		}
	}
	body := []jen.Code{
		jen.Const().List(id("n"), id("k")).Op("=").List(jen.Lit(k.n), jen.Lit(k.k)),
		jen.Const().List(id("mc"), id("nc"), id("kc"), id("mr"), id("nr"), id("ldc"), id("steps")).Op("=").
			List(jen.Lit(k.mc), jen.Lit(k.nc), jen.Lit(k.kc), jen.Lit(k.mr), jen.Lit(k.nr), jen.Lit(k.halfStride()), jen.Lit(k.maxSteps())),
		id("rows").Op(":=").Parens(id("hi").Op("-").Id("lo").Op("+").Id("mr").Op("-").Lit(1)).Op("/").Id("mr").Op("*").Id("mr"),
		id("need").Op(":=").Id("steps").Op("*").Id("ldc").Op("+").Id("mc").Op("*").Id("steps").Op("+").Id("rows").Op("*").Id("ldc").Op("+").Id("ldc"),
		id("buf").Op(":=").Id(k.halfPool()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		jen.If(jen.Cap(jen.Op("*").Id("buf")).Op("<").Id("need")).Block(
			jen.Op("*").Id("buf").Op("=").Make(jen.Index().Float32(), id("need")),
		),
		jen.Defer().Id(k.halfPool()).Dot("Put").Call(id("buf")),
		id("rest").Op(":=").Parens(jen.Op("*").Id("buf")).Index(jen.Empty(), id("need")),
	}
	body = append(body, carve("panel", id("steps").Op("*").Id("ldc"))...)
	body = append(body, carve("ap", id("mc").Op("*").Id("steps"))...)
	body = append(body, carve("block", id("rows").Op("*").Id("ldc"))...)
	if k.epi.bias {
		body = append(body, id("bf").Op(":=").Id("rest").Comment("the panel's bias, decoded, zero past its width"))
	}

	// The tiles of one strip of a block: tile (i-ic)/mr of the packed
	// block (depth·mr apart) into the float32 block.
	call := func(first, last bool) jen.Code {
		args := []jen.Code{
			jen.Op("&").Id("t").Index(jen.Lit(0)), jen.Op("&").Id("at").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0)),
		}
		if last {
			args = append(args, jen.Op("&").Id("bf").Index(id("jr")))
		}
		return id(k.asmTile(first, last)).Call(append(args, id("ns"))...)
	}
	// On the last slice of K a full tile stores into c itself, rounded
	// (narrowTile): only the partial tiles' rows and columns are left in
	// the float32 block for the pass after the slices.
	narrow := func(first bool) jen.Code {
		args := []jen.Code{jen.Op("&").Id("t").Index(jen.Lit(0)), jen.Op("&").Id("at").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0))}
		if k.epi.bias {
			args = append(args, jen.Op("&").Id("bf").Index(id("jr")))
		}
		args = append(args, jen.Op("&").Id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr")), id("ns"))
		return id(k.narrowTile(first)).Call(args...)
	}
	pick := jen.If(id("pc").Op("+").Id("depth").Op("==").Id("k").Op("&&").Id("i").Op("+").Id("mr").Op("<=").Id("hi").Op("&&").Id("jr").Op("+").Id("nr").Op("<=").Id("width")).Block(
		jen.Id("_").Op("=").Id("c").Index(jen.Parens(id("i").Op("+").Id("mr").Op("-").Lit(1)).Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr").Op("+").Id("nr").Op("-").Lit(1)).
			Comment("the tile writes unchecked"),
		jen.If(id("pc").Op("==").Lit(0)).Block(narrow(true)).Else().Block(narrow(false)),
	).Else().Block(k.pickTile(call))
	aStride := id("ns") // the packed block's rows: a tile's steps, or with dot its rows of steps (emitDotPackA)
	if k.dot {
		aStride = id("steps")
	}
	checks := []jen.Code{
		id("t").Op(":=").Id("block").Index(jen.Parens(id("i").Op("-").Id("lo")).Op("*").Id("ldc").Op("+").Id("jr"), jen.Empty()),
		id("at").Op(":=").Id("ap").Index(jen.Parens(id("i").Op("-").Id("ic")).Op("*").Add(aStride), jen.Empty()),
		jen.Id("_").Op("=").Id("t").Index(jen.Parens(id("mr").Op("-").Lit(1)).Op("*").Id("ldc").Op("+").Id("nr").Op("-").Lit(1)).
			Comment("the tile reads and writes unchecked"),
		jen.Id("_").Op("=").Id("at").Index(jen.Parens(id("mr").Op("-").Lit(1)).Op("*").Add(aStride).Op("+").Id("ns").Op("-").Lit(1)),
		jen.Id("_").Op("=").Id("s").Index(id("ns").Op("*").Id("nr").Op("-").Lit(1)),
	}
	if k.epi.bias {
		checks = append(checks, jen.Id("_").Op("=").Id("bf").Index(id("jr").Op("+").Id("nr").Op("-").Lit(1)))
	}
	strip := jen.For(id("jr").Op(":=").Lit(0), id("jr").Op("<").Id("width"), id("jr").Op("+=").Id("nr")).Block(
		id("s").Op(":=").Id("panel").Index(id("jr").Op("*").Id("ns"), jen.Empty()),
		jen.For(id("i").Op(":=").Id("ic"), id("i").Op("<").Id("end"), id("i").Op("+=").Id("mr")).Block(append(checks, pick)...),
	)
	slice := []jen.Code{
		id("depth").Op(":=").Min(id("kc"), id("k").Op("-").Id("pc")),
		id("ns").Op(":=").Add(k.steps(id("depth"))),
		id(k.packFn()).Call(id("panel"), id("b"), id("jc"), id("width"), id("pc"), id("depth")),
		jen.For(id("ic").Op(":=").Id("lo"), id("ic").Op("<").Id("hi"), id("ic").Op("+=").Id("mc")).Block(
			id("end").Op(":=").Min(id("ic").Op("+").Id("mc"), id("hi")),
			id(k.packAFn()).Call(id("ap"), id("a"), id("ic"), id("end"), id("pc"), id("depth")),
			strip,
		),
	}
	panel := []jen.Code{id("width").Op(":=").Min(id("nc"), id("jhi").Op("-").Id("jc"))}
	if k.epi.bias {
		panel = append(panel,
			id(k.half.Decode()).Call(id("bf").Index(jen.Empty(), id("width")), id("bias").Index(id("jc"), id("jc").Op("+").Id("width"))),
			jen.Clear(id("bf").Index(id("width"), jen.Empty())),
		)
	}
	// What the full tiles did not store: the columns of a partial last
	// strip in the rows of full tiles, and every column of a partial
	// last tile's rows.
	panel = append(panel,
		jen.For(id("pc").Op(":=").Lit(0), id("pc").Op("<").Id("k"), id("pc").Op("+=").Id("kc")).Block(slice...),
		jen.List(id("fullRows"), id("fullCols")).Op(":=").List(id("lo").Op("+").Parens(id("hi").Op("-").Id("lo")).Op("/").Id("mr").Op("*").Id("mr"), id("width").Op("/").Id("nr").Op("*").Id("nr")),
		jen.For(id("i").Op(":=").Id("lo"), id("i").Op("<").Id("hi"), id("i").Op("++")).Block(
			id("from").Op(":=").Lit(0),
			jen.If(id("i").Op("<").Id("fullRows")).Block(id("from").Op("=").Id("fullCols")),
			jen.If(id("from").Op("<").Id("width")).Block(
				id(k.half.Encode()).Call(
					id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("from"), id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("width")),
					id("block").Index(jen.Parens(id("i").Op("-").Id("lo")).Op("*").Id("ldc").Op("+").Id("from"), jen.Empty()).Index(jen.Empty(), id("width").Op("-").Id("from")),
				),
			),
		),
	)
	body = append(body, jen.For(id("jc").Op(":=").Id("jlo"), id("jc").Op("<").Id("jhi"), id("jc").Op("+=").Id("nc")).Block(panel...))
	f.Add(golang.Comment(fmt.Sprintf("%s computes rows lo to hi-1 and columns jlo to jhi-1 of c, lo a multiple of %d and jlo of %d, "+
		"in blocks of %d columns × %d of K × %d rows with %d×%d tiles, accumulating in a float32 block of the rows × %d columns; "+
		"the last slice of K stores full tiles into c rounded, and what partial tiles leave in the block is narrowed into c after it.",
		k.rowsFn(), k.mr, k.nr, k.nc, k.kc, k.mc, k.mr, k.nr, k.nc)))
	f.Func().Id(k.rowsFn()).Params(jen.List(k.slices()...).Index().Uint16(), jen.List(id("lo"), id("hi"), id("jlo"), id("jhi")).Int()).Block(body...)
}

// pair returns the float32 whose bits hold the bf16 pair lo, hi: lo in
// the low half, where VDPBF16PS reads element 2t (hi first with swap).
func pair(lo, hi jen.Code, swap bool) jen.Code {
	if swap {
		lo, hi = hi, lo
	}
	return jen.Qual("math", "Float32frombits").Call(jen.Uint32().Call(lo).Op("|").Uint32().Call(hi).Op("<<").Lit(16))
}

// emitHalfPackB emits the function that packs a depth×width block of the
// 16-bit b into strips of nr columns, as emitPack does: decoded to
// float32, or as pairs of K (dot).
func (k kernel) emitHalfPackB(f *jen.File) {
	id := jen.Id
	row := func(p jen.Code) *jen.Statement {
		return id("b").Index(jen.Parens(id("pc").Op("+").Add(p)).Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty()).Index(jen.Empty(), id("w"))
	}
	var perStep []jen.Code
	what := "decoded to float32"
	if k.dot {
		what = "as pairs of rows: step t of a strip holds rows 2t and 2t+1, element by element, in the low and high halves of a float32's bits (the second zero past depth)"
		// A full strip's steps of two rows in assembly, the rest (an
		// odd depth's last step, the last strip when narrower) in Go.
		perStep = []jen.Code{
			id("dst").Op(":=").Id("s").Index(id("t").Op("*").Id("nr"), jen.Parens(id("t").Op("+").Lit(1)).Op("*").Id("nr")),
			id("r0").Op(":=").Add(row(jen.Lit(2).Op("*").Id("t"))),
			jen.If(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1).Op("<").Id("depth")).Block(
				id("r1").Op(":=").Add(row(jen.Lit(2).Op("*").Id("t").Op("+").Lit(1))),
				jen.For(id("j").Op(":=").Range().Id("r0")).Block(
					id("dst").Index(id("j")).Op("=").Add(pair(id("r0").Index(id("j")), id("r1").Index(id("j")), swapPairs)),
				),
			).Else().Block(
				jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("r0")).Block(
					id("dst").Index(id("j")).Op("=").Add(pair(id("x"), jen.Lit(0), swapPairs)),
				),
			),
			jen.Clear(id("dst").Index(id("w"), jen.Empty())),
		}
	} else {
		perStep = []jen.Code{
			id("dst").Op(":=").Id("s").Index(id("t").Op("*").Id("nr"), jen.Parens(id("t").Op("+").Lit(1)).Op("*").Id("nr")),
			id(k.half.Decode()).Call(id("dst").Index(jen.Empty(), id("w")), row(id("t"))),
			jen.Clear(id("dst").Index(id("w"), jen.Empty())),
		}
	}
	// With dot, the steps of two whole rows of a full strip go to the
	// assembly first, and the loop in Go starts after them.
	start, steps := jen.Null(), jen.For(id("t").Op(":=").Range().Id("ns"))
	if k.dot {
		full := id("full")
		start = jen.Id("full").Op(":=").Lit(0).Line().If(id("w").Op("==").Id("nr")).Block(
			full.Clone().Op("=").Id("depth").Op("/").Lit(2),
			jen.If(full.Clone().Op(">").Lit(0)).Block(
				id("src").Op(":=").Id("b").Index(id("pc").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty()),
				jen.Id("_").Op("=").Id("src").Index(jen.Parens(jen.Lit(2).Op("*").Add(full.Clone()).Op("-").Lit(1)).Op("*").Id("n").Op("+").Id("nr").Op("-").Lit(1)).
					Comment("the assembly reads and writes unchecked"),
				jen.Id("_").Op("=").Id("s").Index(full.Clone().Op("*").Id("nr").Op("-").Lit(1)),
				id(k.pairsFn()).Call(jen.Op("&").Id("s").Index(jen.Lit(0)), jen.Op("&").Id("src").Index(jen.Lit(0)), id("n"), full.Clone()),
			),
		)
		steps = jen.For(id("t").Op(":=").Add(full), id("t").Op("<").Id("ns"), id("t").Op("++"))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s copies rows pc to pc+depth-1 and columns jc to jc+width-1 of b into panel as strips of %d columns, "+
		"%s; the last strip is padded with zeros.", k.packFn(), k.nr, what)))
	f.Func().Id(k.packFn()).Params(jen.Id("panel").Index().Float32(), id("b").Index().Uint16(), jen.List(id("jc"), id("width"), id("pc"), id("depth")).Int()).Block(
		jen.Const().List(id("n"), id("nr")).Op("=").List(jen.Lit(k.n), jen.Lit(k.nr)),
		id("ns").Op(":=").Add(k.steps(id("depth"))),
		jen.For(id("jr").Op(":=").Lit(0), id("jr").Op("<").Id("width"), id("jr").Op("+=").Id("nr")).Block(
			id("w").Op(":=").Min(id("nr"), id("width").Op("-").Id("jr")),
			id("s").Op(":=").Id("panel").Index(id("jr").Op("*").Id("ns"), jen.Parens(id("jr").Op("+").Id("nr")).Op("*").Id("ns")),
			jen.Add(start),
			steps.Block(perStep...),
		),
	)
}

// emitHalfPackA emits the function that packs rows ic to end-1 of the
// 16-bit a as emitPackA does, decoded to float32, the last tile padded
// with zero rows; with dot, emitDotPackA's.
func (k kernel) emitHalfPackA(f *jen.File) {
	if k.dot {
		k.emitDotPackA(f)
		return
	}
	id := jen.Id
	src := id("a").Index(jen.Parens(id("i").Op("+").Id("r")).Op("*").Id("k").Op("+").Id("pc"), jen.Empty()).Index(jen.Empty(), id("depth"))
	// A row decoded whole (whole vectors in assembly), then spread.
	perRow := jen.If(id("i").Op("+").Id("r").Op("<").Id("end")).Block(
		id(k.half.Decode()).Call(id("row").Index(jen.Empty(), id("depth")), src),
		jen.For(jen.List(id("p"), id("x")).Op(":=").Range().Id("row").Index(jen.Empty(), id("depth"))).Block(
			id("t").Index(id("p").Op("*").Id("mr").Op("+").Id("r")).Op("=").Id("x"),
		),
	).Else().Block(
		jen.For(id("p").Op(":=").Range().Id("ns")).Block(id("t").Index(id("p").Op("*").Id("mr").Op("+").Id("r")).Op("=").Lit(0)),
	)
	f.Add(golang.Comment(fmt.Sprintf("%s copies rows ic to end-1 of a, columns pc to pc+depth-1, into ap in tiles of %d rows, "+
		"the steps of a tile's rows interleaved, decoded to float32; rows past end are zeros.", k.packAFn(), k.mr)))
	f.Func().Id(k.packAFn()).Params(jen.Id("ap").Index().Float32(), id("a").Index().Uint16(), jen.List(id("ic"), id("end"), id("pc"), id("depth")).Int()).Block(
		jen.Const().List(id("k"), id("mr"), id("kc")).Op("=").List(jen.Lit(k.k), jen.Lit(k.mr), jen.Lit(k.kc)),
		id("ns").Op(":=").Add(k.steps(id("depth"))),
		jen.Var().Id("row").Index(id("kc")).Float32(),
		jen.For(id("i").Op(":=").Id("ic"), id("i").Op("<").Id("end"), id("i").Op("+=").Id("mr")).Block(
			id("t").Op(":=").Id("ap").Index(jen.Parens(id("i").Op("-").Id("ic")).Op("*").Id("ns"), jen.Parens(id("i").Op("-").Id("ic").Op("+").Id("mr")).Op("*").Id("ns")),
			jen.For(id("r").Op(":=").Range().Id("mr")).Block(perRow),
		),
	)
}

// emitDotPackA emits the dot form's packing of A. A row of a already holds
// the pairs of K VDPBF16PS reads, element 2t in the low half of the 32-bit
// word t, so a tile of the packed block is its mr rows copied whole (a
// memmove each), row r at r·steps words, steps the most a K slice has:
// the tile broadcasts a(r, t) from r·4·steps + 4·t bytes (asmTiles). An
// odd depth ends in a pair whose high half is zero; rows past end are
// zeros. The float32 buffer is written through a uint16 view of it.
func (k kernel) emitDotPackA(f *jen.File) {
	id := jen.Id
	view := jen.Qual("unsafe", "Slice").Call(
		jen.Parens(jen.Op("*").Uint16()).Parens(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id("dst").Index(jen.Lit(0)))),
		jen.Lit(2).Op("*").Id("ns"))
	perRow := jen.If(id("i").Op("+").Id("r").Op("<").Id("end")).Block(
		id("d").Op(":=").Add(view),
		jen.Copy(id("d"), id("a").Index(jen.Parens(id("i").Op("+").Id("r")).Op("*").Id("k").Op("+").Id("pc"), jen.Empty()).Index(jen.Empty(), id("depth"))),
		jen.If(id("depth").Op("%").Lit(2).Op("==").Lit(1)).Block(id("d").Index(id("depth")).Op("=").Lit(0)),
	).Else().Block(jen.Clear(id("dst")))
	f.Add(golang.Comment(fmt.Sprintf("%s copies rows ic to end-1 of a, columns pc to pc+depth-1, into ap in tiles of %d rows, "+
		"row r of a tile at r·%d floats, each float32's bits a pair of columns: step t holds columns 2t and 2t+1 "+
		"in its low and high halves (the second zero past depth); rows past end are zeros.", k.packAFn(), k.mr, k.maxSteps())))
	f.Func().Id(k.packAFn()).Params(jen.Id("ap").Index().Float32(), id("a").Index().Uint16(), jen.List(id("ic"), id("end"), id("pc"), id("depth")).Int()).Block(
		jen.Const().List(id("k"), id("mr"), id("steps")).Op("=").List(jen.Lit(k.k), jen.Lit(k.mr), jen.Lit(k.maxSteps())),
		id("ns").Op(":=").Add(k.steps(id("depth"))),
		jen.For(id("i").Op(":=").Id("ic"), id("i").Op("<").Id("end"), id("i").Op("+=").Id("mr")).Block(
			jen.For(id("r").Op(":=").Range().Id("mr")).Block(
				id("dst").Op(":=").Id("ap").Index(jen.Parens(id("i").Op("-").Id("ic").Op("+").Id("r")).Op("*").Id("steps"), jen.Empty()).Index(jen.Empty(), id("ns")),
				perRow,
			),
		),
	)
}
