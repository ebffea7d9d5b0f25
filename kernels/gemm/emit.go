package gemm

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/schedule"
)

// kernel is one config of the template for one shape, ready to emit.
type kernel struct {
	name       string
	cfg        schedule.Config
	m, n, k    int
	v          golang.F32 // the archsimd Go's vectors; none for NEON (lanes 4), which only the assembly tiles use
	lanes      int        // float32s a vector: the vec knob
	mr, nv, nr int        // tile rows, vectors per tile row, tile columns (nv·lanes)
	kc, mc, nc int        // cache blocks, capped at the matrix
	pack       bool       // B packed into strips (pack_b)
	packA      bool       // A's full tiles packed per block (pack_a, packa.go)
	unroll     int
	threads    int
	epi        epilogue
	asm        bool // the full micro-kernel in Go assembly (asm.go)
	splitN     bool // threads split the columns of c, not its rows
	// generic kernels take m, n and k at run time (emitGeneric): m, n and
	// k above are then 0, and the blocks are the config's, uncapped.
	generic bool
	// plain kernels (micro=asm only) have plain Go around the assembly
	// tiles (emitPlain, kernels.AMD64Plain): the edge tiles are scalar
	// loops (emitEdge) and nothing imports archsimd, so that they build
	// without GOEXPERIMENT=simd. v stays the tiles' vector width.
	plain bool
	// half is set for the packed 16-bit forms (packhalf.go): the
	// conversions of the dtype; dot packs bf16 pairs for VDPBF16PS.
	half golang.Half
	dot  bool
}

// packed16 reports whether k is a packed 16-bit form (packhalf.go).
func (k kernel) packed16() bool { return k.half.Prefix != "" }

// elem is the element type of k's slices of a, b, c and the bias.
func (k kernel) elem() jen.Code {
	if k.packed16() {
		return jen.Uint16()
	}
	return jen.Float32()
}

// emitEpilogue emits the kernel of cfg for shape with the epilogue e
// applied to each tile of c in registers, after its last slice of K.
func emitEpilogue(f *jen.File, name string, shape []int, cfg schedule.Config, e epilogue) {
	kr := newKernel(name, shape, cfg, e)
	kr.emitEntry(f)
	kr.emitRuns(f)
	kr.emitRows(f)
	kr.emitPacks(f)
	if kr.asm {
		for _, t := range kr.asmTiles() {
			f.Add(t.Decl())
		}
	} else {
		kr.emitTile(f, kr.tileFn(false, false), kr.mr, kr.nr)
	}
	if kr.m%kr.mr != 0 {
		kr.emitTile(f, kr.tileFn(true, false), kr.m%kr.mr, kr.nr)
	}
	if kr.n%kr.nr != 0 {
		kr.emitTile(f, kr.tileFn(false, true), kr.mr, kr.n%kr.nr)
		if kr.m%kr.mr != 0 {
			kr.emitTile(f, kr.tileFn(true, true), kr.m%kr.mr, kr.n%kr.nr)
		}
	}
}

// emitPlain emits the kernel of cfg (micro=asm) with the epilogue e as
// emitEpilogue does, or the shape-generic one as emitGeneric does when
// shape is nil, with plain Go around the assembly tiles
// (kernels.AMD64Plain): the full tiles are the same assembly (emitAsm,
// emitAsmGeneric), and every tile short in rows or columns is one scalar
// loop nest (emitEdge).
func emitPlain(f *jen.File, name string, shape []int, cfg schedule.Config, e epilogue) {
	if cfg.Str("micro") != "asm" {
		panic(fmt.Sprintf("gemm: no plain form of %s: its micro-kernel is not assembly", cfg))
	}
	var kr kernel
	if shape == nil {
		kr = newGenericKernel(name, cfg, e)
	} else {
		kr = newKernel(name, shape, cfg, e)
	}
	kr.plain = true
	kr.emitEntry(f)
	kr.emitRuns(f)
	kr.emitRows(f)
	kr.emitPacks(f)
	for _, t := range kr.asmTiles() {
		f.Add(t.Decl())
	}
	if kr.generic || kr.m%kr.mr != 0 || kr.n%kr.nr != 0 {
		kr.emitEdge(f)
	}
}

// emitGeneric emits the shape-generic kernel of cfg with the epilogue e
// (a kernels.Kernel without a Shape): m, n and k are arguments. The tails are tiles
// of their own, picked at run time: the last M%mr rows one row at a time
// with a 1×nr tile, and the last N%nr columns with a tile of as many
// vectors as they need, the last one partial (its length an argument).
func emitGeneric(f *jen.File, name string, cfg schedule.Config, e epilogue) {
	kr := newGenericKernel(name, cfg, e)
	kr.emitEntry(f)
	kr.emitRuns(f)
	kr.emitRows(f)
	kr.emitPacks(f)
	if kr.asm {
		for _, t := range kr.asmTiles() {
			f.Add(t.Decl())
		}
	} else {
		kr.emitTile(f, kr.tileFn(false, false), kr.mr, kr.nr)
	}
	if kr.mr > 1 {
		kr.emitTileCols(f, kr.tileFn(true, false), 1, tileCols{nv: kr.nv})
	}
	if kr.nr > 1 {
		for nv := 1; nv <= kr.nv; nv++ {
			kr.emitTileCols(f, kr.shortNFn(false, nv), kr.mr, tileCols{nv: nv, runtime: true})
			if kr.mr > 1 {
				kr.emitTileCols(f, kr.shortNFn(true, nv), 1, tileCols{nv: nv, runtime: true})
			}
		}
	}
}

// shortNFn names the generic kernel's tile of the last N%nr columns that
// holds nv vectors per row, of mr rows or (shortM) one.
func (k kernel) shortNFn(shortM bool, nv int) string {
	return k.tileFn(shortM, true) + strconv.Itoa(nv)
}

// newGenericKernel returns the shape-generic kernel of cfg, named name.
func newGenericKernel(name string, cfg schedule.Config, e epilogue) kernel {
	kr := newKernelOf(name, cfg, e)
	kr.generic = true
	kr.kc, kr.mc, kr.nc = cfg.Int("kc"), cfg.Int("mc"), cfg.Int("nc")
	return kr
}

// newKernel returns the kernel of cfg for shape, named name.
func newKernel(name string, shape []int, cfg schedule.Config, e epilogue) kernel {
	m, n, k := checkShape(shape)
	kr := newKernelOf(name, cfg, e)
	kr.m, kr.n, kr.k = m, n, k
	kr.kc = min(cfg.Int("kc"), k)
	kr.mc = min(cfg.Int("mc"), roundUp(m, kr.mr))
	kr.nc = min(cfg.Int("nc"), roundUp(n, kr.nr))
	return kr
}

// newKernelOf returns the kernel of cfg with no shape and no blocks yet.
func newKernelOf(name string, cfg schedule.Config, e epilogue) kernel {
	lanes := cfg.Int("vec")
	var v golang.F32 // none for NEON, whose vectors are the assembly tiles' only
	if lanes != neon.Lanes {
		v = golang.Float32(lanes)
	}
	kr := kernel{
		name: name, cfg: cfg, epi: e,
		v: v, lanes: lanes,
		mr: cfg.Int("mr"), nv: cfg.Int("nr_vecs"),
		pack:    cfg.Bool("pack_b"),
		packA:   cfg.Bool("pack_a"),
		unroll:  cfg.Int("unroll"),
		threads: cfg.Int("threads"),
		asm:     cfg.Str("micro") == "asm",
		splitN:  cfg.Str("split") == "n",
	}
	kr.nr = kr.nv * lanes
	return kr
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// plural returns "row" for 1 and "3 rows" for 3.
func plural(n int, what string) string {
	if n == 1 {
		return what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (k kernel) rowsFn() string    { return k.name + "Rows" }
func (k kernel) packFn() string    { return k.name + "Pack" }
func (k kernel) panelsVar() string { return k.name + "Panels" }

// tileFn names the micro-kernel for a tile that is short in rows (the last
// M%mr rows), in columns (the last N%nr columns), or neither.
func (k kernel) tileFn(shortM, shortN bool) string {
	s := k.name + "Tile"
	if shortM {
		s += "M"
	}
	if shortN {
		s += "N"
	}
	return s
}

// panelLen is the length of the packed panel: kc rows of the nc columns of
// B, rounded up to whole strips of nr columns.
func (k kernel) panelLen() int { return k.kc * roundUp(k.nc, k.nr) }

// emitEntry emits the exported function: it checks the slices once, then
// computes all of c on the calling goroutine, or splits it among threads
// goroutines, the caller being one of them: into runs of whole tiles of
// rows, or with split=n of whole strips of columns.
func (k kernel) emitEntry(f *jen.File) {
	need := ""
	switch {
	case k.plain && k.lanes == neon.Lanes:
		need = " Its full tiles are Go assembly for arm64's NEON, the code around them plain Go."
	case k.plain && k.lanes == 8:
		need = " Its full tiles are Go assembly for AVX2 and FMA, the code around them plain Go."
	case k.plain:
		need = " Its full tiles are Go assembly for AVX-512, the code around them plain Go."
	case k.lanes == 8:
		need = " It uses archsimd.Float32x8 and needs AVX2 and FMA."
	case k.lanes == 16:
		need = " It uses archsimd.Float32x16 and needs AVX-512."
	}
	what, vectorOf := "c = a·b", ""
	if k.epi.bias {
		what, vectorOf = k.epi.formula(), fmt.Sprintf(", with bias the %d elements added to every row,", k.n)
	}
	gen := "gemm template"
	if k.epi.bias {
		gen = "gemm template with the " + k.epi.String() + " epilogue"
	}
	if k.generic {
		k.emitGenericEntry(f, gen, need)
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes %s for the row-major %d×%d matrix a and %d×%d matrix b%s "+
		"into the row-major %d×%d matrix c, in float32. It overwrites c.\n\n"+
		"Generated by autotune's %s for %s.%s", k.name, what, k.m, k.k, k.k, k.n, vectorOf, k.m, k.n, gen, k.cfg, need)))
	k.emitEntryFunc(f, jen.Float32())
}

// emitEntryFunc emits the specialised exported function on slices of elem:
// one bounds check of every argument, then all of c on this goroutine or
// split among threads goroutines.
func (k kernel) emitEntryFunc(f *jen.File, elem *jen.Statement) {
	c, a, b := jen.Id("c"), jen.Id("a"), jen.Id("b")
	lhs := []jen.Code{c, a, b}
	rhs := []jen.Code{
		jen.Add(c).Index(jen.Empty(), jen.Id("m").Op("*").Id("n")),
		jen.Add(a).Index(jen.Empty(), jen.Id("m").Op("*").Id("k")),
		jen.Add(b).Index(jen.Empty(), jen.Id("k").Op("*").Id("n")),
	}
	if k.epi.bias {
		lhs = append(lhs, jen.Id("bias"))
		rhs = append(rhs, jen.Id("bias").Index(jen.Empty(), jen.Id("n")))
	}
	body := []jen.Code{
		jen.Const().List(jen.Id("m"), jen.Id("n"), jen.Id("k")).Op("=").List(jen.Lit(k.m), jen.Lit(k.n), jen.Lit(k.k)),
		jen.List(lhs...).Op("=").List(rhs...).Comment("one bounds check, here rather than in a goroutine"),
	}
	if k.threads == 1 {
		body = append(body, jen.Id(k.rowsFn()).Call(k.operands(jen.Lit(0), jen.Id("m"), jen.Lit(0), jen.Id("n"))...))
	} else {
		body = append(body, k.split()...)
	}
	f.Func().Id(k.name).Params(jen.List(lhs...).Index().Add(elem)).Block(body...)
}

// emitGenericEntry is emitEntry for a generic kernel: m, n and k are
// arguments, and the goroutines get runs of whole tiles (or strips) as
// in the specialised kernel, computed at run time; a shape with fewer
// tiles than threads starts one goroutine per run, so none is idle.
func (k kernel) emitGenericEntry(f *jen.File, gen, need string) {
	what, vectorOf := "c = a·b", ""
	if k.epi.bias {
		what, vectorOf = k.epi.formula(), ", with bias the n elements added to every row,"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes %s for the row-major m×k matrix a and k×n matrix b%s "+
		"into the row-major m×n matrix c, in float32. It overwrites c, and panics if a slice is shorter than the shape needs.\n\n"+
		"Generated by autotune's %s, shape-generic, for %s.%s", k.name, what, vectorOf, gen, k.cfg, need)))
	id := jen.Id
	c, a, b := id("c"), id("a"), id("b")
	lhs := []jen.Code{c, a, b}
	rhs := []jen.Code{
		jen.Add(c).Index(jen.Empty(), id("m").Op("*").Id("n")),
		jen.Add(a).Index(jen.Empty(), id("m").Op("*").Id("k")),
		jen.Add(b).Index(jen.Empty(), id("k").Op("*").Id("n")),
	}
	if k.epi.bias {
		lhs = append(lhs, id("bias"))
		rhs = append(rhs, id("bias").Index(jen.Empty(), id("n")))
	}
	body := []jen.Code{
		jen.List(lhs...).Op("=").List(rhs...).Comment("one bounds check, here rather than in a goroutine"),
	}
	if k.threads == 1 {
		body = append(body, id(k.rowsFn()).Call(k.operands(jen.Lit(0), id("m"), jen.Lit(0), id("n"))...))
	} else {
		body = append(body, k.split()...)
	}
	params := []jen.Code{jen.List(lhs...).Index().Float32(), jen.List(id("m"), id("n"), id("k")).Int()}
	f.Func().Id(k.name).Params(params...).Block(body...)
}

// goroutine returns the function a goroutine of the kernel runs
// (golang.F32.Goroutine): in a plain kernel it clears no vector registers,
// since only the assembly tiles use them and they end in VZEROUPPER.
func (k kernel) goroutine(body ...jen.Code) *jen.Statement {
	if k.plain {
		return golang.Float32(1).Goroutine(body...)
	}
	return k.v.Goroutine(body...)
}

// slices returns the slice parameters of the kernel and of its rows
// function: c, a, b, and bias with an epilogue.
func (k kernel) slices() []jen.Code {
	s := []jen.Code{jen.Id("c"), jen.Id("a"), jen.Id("b")}
	if k.epi.bias {
		s = append(s, jen.Id("bias"))
	}
	return s
}

// operands returns the arguments of a call of the rows function: the
// slices, the rows [lo, hi) and the columns [jlo, jhi).
func (k kernel) operands(lo, hi, jlo, jhi jen.Code) []jen.Code {
	if k.generic {
		return append(k.slices(), jen.Id("n"), jen.Id("k"), lo, hi, jlo, jhi)
	}
	return append(k.slices(), lo, hi, jlo, jhi)
}

// emitRows emits the function that computes rows [lo, hi) and columns
// [jlo, jhi) of c, lo a multiple of mr and jlo of nr: the loops around the micro-kernel, outermost first, are
// nc-column panels of B, kc-deep slices of K (B's panel packed once per
// slice), mc-row blocks of A, nr-column strips of the panel and mr-row
// tiles, so that a strip of B stays in L1 while the tiles of a block of A
// stream past it from L2.
func (k kernel) emitRows(f *jen.File) {
	id := jen.Id
	body := []jen.Code{
		jen.Const().List(id("m"), id("n"), id("k")).Op("=").List(jen.Lit(k.m), jen.Lit(k.n), jen.Lit(k.k)),
		jen.Const().List(id("mc"), id("nc"), id("kc"), id("mr"), id("nr")).Op("=").
			List(jen.Lit(k.mc), jen.Lit(k.nc), jen.Lit(k.kc), jen.Lit(k.mr), jen.Lit(k.nr)),
	}
	if k.generic {
		body = body[1:]
	}
	switch {
	case k.pack && k.generic:
		// A buffer as large as this call's panels, from the pool: the
		// config's blocks may be far larger than the matrices.
		body = append(body,
			id("need").Op(":=").Min(id("kc"), id("k")).Op("*").Parens(
				jen.Parens(jen.Min(id("nc"), id("jhi").Op("-").Id("jlo")).Op("+").Id("nr").Op("-").Lit(1)).Op("/").Id("nr").Op("*").Id("nr")),
			id("buf").Op(":=").Id(k.panelsVar()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
			jen.If(jen.Cap(jen.Op("*").Id("buf")).Op("<").Id("need")).Block(
				jen.Op("*").Id("buf").Op("=").Make(jen.Index().Float32(), id("need")),
			),
			jen.Defer().Id(k.panelsVar()).Dot("Put").Call(id("buf")),
			id("panel").Op(":=").Parens(jen.Op("*").Id("buf")).Index(jen.Empty(), id("need")),
		)
	case k.pack:
		body = append(body,
			id("panel").Op(":=").Id(k.panelsVar()).Dot("Get").Call().Assert(jen.Op("*").Index(jen.Lit(k.panelLen())).Float32()),
			jen.Defer().Id(k.panelsVar()).Dot("Put").Call(id("panel")),
		)
	}
	if k.packA {
		body = append(body, k.aBuffer()...)
	}
	// tileArgs returns the int arguments of a generic Go tile before its
	// depth: the strides, and the run-time columns of a short-N tile.
	tileArgs := func(shortN bool) []jen.Code {
		if !k.generic {
			return nil
		}
		if shortN {
			return []jen.Code{id("n"), id("k"), id("cols")}
		}
		return []jen.Code{id("n"), id("k")}
	}

	// strip returns the B operand of the tiles of strip jr: a strip of the
	// packed panel, or B itself at row pc and column jc+jr.
	strip := func() jen.Code {
		if k.pack {
			return id("panel").Index(id("jr").Op("*").Id("depth"), jen.Empty())
		}
		return id("b").Index(id("pc").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty())
	}
	// tiles returns the loop over the tiles of one strip of a block.
	tiles := func(shortN bool) []jen.Code {
		call := func(shortM bool) jen.Code {
			args := []jen.Code{
				id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty()),
				id("a").Index(id("i").Op("*").Id("k").Op("+").Id("pc"), jen.Empty()),
				id("s"),
			}
			if k.epi.bias {
				args = append(args, id("bias").Index(id("jc").Op("+").Id("jr"), jen.Empty()))
			}
			args = append(args, tileArgs(shortN)...)
			args = append(args, id("depth"), id("pc").Op("==").Lit(0))
			if k.epi.bias {
				args = append(args, id("pc").Op("+").Id("depth").Op("==").Id("k"))
			}
			if k.asm && !shortM && !shortN {
				return k.asmCall()
			}
			if k.plain {
				return k.edgeCall(shortM, shortN)
			}
			if k.generic && shortN {
				return k.shortNCall(shortM, args)
			}
			return id(k.tileFn(shortM, shortN)).Call(args...)
		}
		out := []jen.Code{
			id("s").Op(":=").Add(strip()),
			id("i").Op(":=").Id("ic"),
		}
		if k.asmColumn() && !shortN {
			out = append(out, k.asmCall()) // every full tile in one call
		} else {
			out = append(out, jen.For(jen.Op(";").Id("i").Op("+").Id("mr").Op("<=").Id("end"), jen.Id("i").Op("+=").Id("mr")).Block(call(false)))
		}
		switch {
		case k.generic && k.mr > 1:
			out = append(out, jen.For(jen.Op(";").Id("i").Op("<").Id("end"), jen.Id("i").Op("++")).Block(
				jen.Comment("the last rows of c, one at a time"),
				call(true),
			))
		case !k.generic && k.m%k.mr != 0:
			out = append(out, jen.If(id("i").Op("<").Id("end")).Block(
				jen.Comment("the last "+plural(k.m%k.mr, "row")+" of c"),
				call(true),
			))
		}
		return out
	}
	block := []jen.Code{id("end").Op(":=").Min(id("ic").Op("+").Id("mc"), id("hi"))}
	if k.packA {
		block = append(block, k.packACall())
	}
	block = append(block,
		id("jr").Op(":=").Lit(0),
		jen.For(jen.Op(";").Id("jr").Op("+").Id("nr").Op("<=").Id("width"), id("jr").Op("+=").Id("nr")).Block(tiles(false)...),
	)
	switch {
	case k.generic && k.nr > 1:
		block = append(block, jen.If(id("jr").Op("<").Id("width")).Block(
			append([]jen.Code{jen.Comment("the last columns of c"), id("cols").Op(":=").Id("width").Op("-").Id("jr")}, tiles(true)...)...,
		))
	case !k.generic && k.n%k.nr != 0:
		block = append(block, jen.If(id("jr").Op("<").Id("width")).Block(
			append([]jen.Code{jen.Comment("the last " + plural(k.n%k.nr, "column") + " of c")}, tiles(true)...)...,
		))
	}
	slice := []jen.Code{id("depth").Op(":=").Min(id("kc"), id("k").Op("-").Id("pc"))}
	switch {
	case k.pack && k.generic:
		slice = append(slice, id(k.packFn()).Call(id("panel"), id("b"), id("n"), id("jc"), id("width"), id("pc"), id("depth")))
	case k.pack:
		slice = append(slice, id(k.packFn()).Call(id("panel").Index(jen.Empty(), jen.Empty()), id("b"), id("jc"), id("width"), id("pc"), id("depth")))
	}
	slice = append(slice, jen.For(id("ic").Op(":=").Id("lo"), id("ic").Op("<").Id("hi"), id("ic").Op("+=").Id("mc")).Block(block...))
	body = append(body,
		jen.For(id("jc").Op(":=").Id("jlo"), id("jc").Op("<").Id("jhi"), id("jc").Op("+=").Id("nc")).Block(
			id("width").Op(":=").Min(id("nc"), id("jhi").Op("-").Id("jc")),
			jen.For(id("pc").Op(":=").Lit(0), id("pc").Op("<").Id("k"), id("pc").Op("+=").Id("kc")).Block(slice...),
		),
	)
	what := "B in place"
	if k.pack {
		what = "B packed into strips"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes rows lo to hi-1 and columns jlo to jhi-1 of c, lo a multiple of %d "+
		"and jlo of %d, in blocks of %d columns × %d of K × %d rows, with %d×%d tiles and %s.",
		k.rowsFn(), k.mr, k.nr, k.nc, k.kc, k.mc, k.mr, k.nr, what)))
	ints := []jen.Code{id("lo"), id("hi"), id("jlo"), id("jhi")}
	if k.generic {
		ints = append([]jen.Code{id("n"), id("k")}, ints...)
	}
	f.Func().Id(k.rowsFn()).Params(jen.List(k.slices()...).Index().Float32(), jen.List(ints...).Int()).Block(body...)
}

// shortNCall returns the call of the generic kernel's tile for the last
// cols columns of a strip (shortM: of one row), with args: the tile of as
// many vectors as the columns need.
func (k kernel) shortNCall(shortM bool, args []jen.Code) jen.Code {
	if k.nv == 1 {
		return jen.Id(k.shortNFn(shortM, 1)).Call(args...)
	}
	var cases []jen.Code
	for nv := 1; nv < k.nv; nv++ {
		cases = append(cases, jen.Case(jen.Lit(nv)).Block(jen.Id(k.shortNFn(shortM, nv)).Call(args...)))
	}
	cases = append(cases, jen.Default().Block(jen.Id(k.shortNFn(shortM, k.nv)).Call(args...)))
	return jen.Switch(jen.Parens(jen.Id("cols").Op("+").Lit(k.lanes - 1)).Op("/").Lit(k.lanes)).Block(cases...)
}

// emitPacks emits the pools of packing buffers and the functions that
// pack B and, with pack_a, A.
func (k kernel) emitPacks(f *jen.File) {
	if k.pack {
		k.emitPanels(f)
		k.emitPack(f)
	}
	if k.packA {
		k.emitAPanels(f)
		k.emitPackA(f)
	}
}

// emitPanels emits the pool of packing buffers. A goroutine takes one for a
// call, so the packed panel costs no allocation once the pool is warm and
// goroutines never share one.
func (k kernel) emitPanels(f *jen.File) {
	if k.generic {
		f.Add(golang.Comment(fmt.Sprintf("%s holds buffers for %s's packed panels of B, each grown to the largest a call has needed.",
			k.panelsVar(), k.rowsFn())))
		f.Var().Id(k.panelsVar()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
			jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
		})
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s holds buffers for %s's packed panels of B, %d KiB each.",
		k.panelsVar(), k.rowsFn(), (4*k.panelLen()+1023)/1024)))
	f.Var().Id(k.panelsVar()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index(jen.Lit(k.panelLen())).Float32()))),
	})
}

// emitPack emits the function that packs a depth×width block of B into
// strips of nr columns, each depth×nr and contiguous, the last one padded
// with zeros, so that a micro-kernel reads its B operand sequentially and
// always in whole vectors.
func (k kernel) emitPack(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s copies rows pc to pc+depth-1 and columns jc to jc+width-1 of b into panel "+
		"as strips of %d columns, each depth×%d and contiguous; the last strip is padded with zeros.", k.packFn(), k.nr, k.nr)))
	ints := []jen.Code{id("jc"), id("width"), id("pc"), id("depth")}
	consts := jen.Const().List(id("n"), id("nr")).Op("=").List(jen.Lit(k.n), jen.Lit(k.nr))
	if k.generic {
		ints = append([]jen.Code{id("n")}, ints...)
		consts = jen.Const().Id("nr").Op("=").Lit(k.nr)
	}
	f.Func().Id(k.packFn()).Params(
		jen.List(id("panel"), id("b")).Index().Float32(), jen.List(ints...).Int(),
	).Block(
		consts,
		jen.For(id("jr").Op(":=").Lit(0), id("jr").Op("<").Id("width"), id("jr").Op("+=").Id("nr")).Block(
			id("w").Op(":=").Min(id("nr"), id("width").Op("-").Id("jr")),
			id("s").Op(":=").Id("panel").Index(id("jr").Op("*").Id("depth"), jen.Parens(id("jr").Op("+").Id("nr")).Op("*").Id("depth")),
			jen.For(id("p").Op(":=").Range().Id("depth")).Block(
				id("dst").Op(":=").Id("s").Index(id("p").Op("*").Id("nr"), jen.Parens(id("p").Op("+").Lit(1)).Op("*").Id("nr")),
				jen.Copy(id("dst"), id("b").Index(jen.Parens(id("pc").Op("+").Id("p")).Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty()).Index(jen.Empty(), id("w"))),
				jen.Clear(id("dst").Index(id("w"), jen.Empty())),
			),
		),
	)
}

// emitTile emits a micro-kernel for a rows×cols tile of c (rows ≤ mr,
// cols ≤ nr): it keeps the tile in rows·⌈cols/lanes⌉ accumulators and adds
// the outer product of a column of A and a row of B to them for each of
// depth steps of K, one FMA per accumulator. Columns past cols exist only
// in the last vector of a row: B's is loaded partially (or read from the
// zero padding of the packed panel) and c's is stored partially.
func (k kernel) emitTile(f *jen.File, name string, rows, cols int) {
	lanes := k.lanes
	k.emitTileCols(f, name, rows, tileCols{nv: (cols + lanes - 1) / lanes, cols: cols})
}

// tileCols are the columns of a micro-kernel's tile: nv vectors per row,
// the last holding what is left of cols (a constant), or with runtime
// (generic kernels, vector code) of the argument cols, 1 to lanes floats.
// A generic tile of neither has nv whole vectors.
type tileCols struct {
	nv      int
	cols    int
	runtime bool
}

// emitTileCols is emitTile for the columns tc.
func (k kernel) emitTileCols(f *jen.File, name string, rows int, tc tileCols) {
	v, id := k.v, jen.Id
	lanes := v.Lanes()
	nv := tc.nv
	cols := tc.cols
	part := cols % lanes // elements of the last vector of a row, 0 if whole
	stride := k.n        // of B in place
	if k.pack {
		stride = k.nr
	}
	// colsEnd is where the columns of a partial vector end.
	colsEnd := func() jen.Code {
		if tc.runtime {
			return id("cols")
		}
		return jen.Lit(cols)
	}
	acc := func(i, j int) *jen.Statement { return id("c" + strconv.Itoa(i) + strconv.Itoa(j)) }
	bv := func(j int) *jen.Statement { return id("b" + strconv.Itoa(j)) }
	arow := func(i int) *jen.Statement { return id("a" + strconv.Itoa(i)) }
	// off returns base + c, omitting zeros.
	off := func(base jen.Code, c int) *jen.Statement {
		switch {
		case base == nil:
			return jen.Lit(c)
		case c == 0:
			return jen.Add(base)
		}
		return jen.Add(base).Op("+").Lit(c)
	}
	partial := func(j int) bool { return part != 0 && j == nv-1 }
	if k.generic {
		partial = func(j int) bool { return tc.runtime && !v.Scalar() && j == nv-1 }
	}

	body := []jen.Code{jen.Const().List(id("n"), id("k")).Op("=").List(jen.Lit(k.n), jen.Lit(k.k))}
	if k.generic {
		body = nil // arguments
	}
	for i := range rows {
		var row *jen.Statement
		if i == 0 {
			row = id("a").Index(jen.Empty(), id("depth"))
		} else {
			row = id("a").Index(jen.Lit(i).Op("*").Id("k"), jen.Empty()).Index(jen.Empty(), id("depth"))
		}
		body = append(body, jen.Add(arow(i)).Op(":=").Add(row))
	}
	var accs []jen.Code
	for i := range rows {
		for j := range nv {
			accs = append(accs, acc(i, j))
		}
	}
	var bs []jen.Code
	for j := range nv {
		bs = append(bs, bv(j))
	}
	body = append(body,
		jen.Var().List(accs...).Add(v.Type()),
		jen.Var().List(append(bs, id("x"))...).Add(v.Type()),
	)

	// cAt returns the slice of c holding row i's vector j: c[i·n+j·lanes:],
	// or exactly its valid elements when it is partial.
	cAt := func(i, j int) (s jen.Code, at jen.Code) {
		if i == 0 && j == 0 && !partial(j) && !v.Scalar() {
			return id("c"), nil // the vector at the start of c
		}
		base := off(nil, j*lanes)
		if i > 0 {
			base = jen.Lit(i).Op("*").Id("n")
			if j > 0 {
				base = jen.Lit(i).Op("*").Id("n").Op("+").Lit(j * lanes)
			}
		}
		if partial(j) {
			end := colsEnd()
			if i > 0 {
				end = jen.Lit(i).Op("*").Id("n").Op("+").Add(colsEnd())
			}
			return id("c").Index(base, end), nil
		}
		return id("c"), base
	}
	var loads []jen.Code
	for i := range rows {
		for j := range nv {
			s, at := cAt(i, j)
			if partial(j) {
				loads = append(loads, jen.Add(acc(i, j)).Op("=").Add(v.LoadPart(s, nil)))
			} else {
				loads = append(loads, jen.Add(acc(i, j)).Op("=").Add(k.load(s, at)))
			}
		}
	}
	body = append(body, jen.If(jen.Op("!").Id("first")).Block(loads...))

	// step returns the outer product of step p+u.
	step := func(u int) []jen.Code {
		var out []jen.Code
		p := id("p")
		if u > 0 {
			p = id("p").Op("+").Lit(u)
		}
		base := id("p").Op("*").Lit(stride)
		if k.generic && !k.pack {
			// B in place: step p+u is row p+u of b, n floats apart.
			row := id("p").Op("*").Id("n")
			if u > 0 {
				row = jen.Parens(id("p").Op("+").Lit(u)).Op("*").Id("n")
			}
			for j := range nv {
				at := off(row, j*lanes)
				if partial(j) {
					out = append(out, jen.Add(bv(j)).Op("=").Add(v.LoadPart(id("b").Index(at, jen.Add(row).Op("+").Id("cols")), nil)))
				} else {
					out = append(out, jen.Add(bv(j)).Op("=").Add(v.Load(id("b"), at)))
				}
			}
		}
		for j := range nv {
			if k.generic && !k.pack {
				break
			}
			at := off(base, u*stride+j*lanes)
			switch {
			case partial(j) && !k.pack:
				out = append(out, jen.Add(bv(j)).Op("=").Add(v.LoadPart(id("b").Index(at, off(base, u*stride+cols)), nil)))
			default:
				out = append(out, jen.Add(bv(j)).Op("=").Add(v.Load(id("b"), at)))
			}
		}
		for i := range rows {
			out = append(out, jen.Id("x").Op("=").Add(v.Splat(jen.Add(arow(i)).Index(p))))
			for j := range nv {
				out = append(out, jen.Add(acc(i, j)).Op("=").Add(v.MulAdd(bv(j), id("x"), acc(i, j))))
			}
		}
		return out
	}
	body = append(body, id("p").Op(":=").Lit(0))
	if k.unroll > 1 {
		var unrolled []jen.Code
		for u := range k.unroll {
			unrolled = append(unrolled, step(u)...)
		}
		body = append(body, jen.For(jen.Op(";").Id("p").Op("+").Lit(k.unroll).Op("<=").Id("depth"), id("p").Op("+=").Lit(k.unroll)).Block(unrolled...))
	}
	body = append(body, jen.For(jen.Op(";").Id("p").Op("<").Id("depth"), id("p").Op("++")).Block(step(0)...))
	if k.epi.bias {
		body = append(body, jen.If(id("last")).Block(k.epilogue(rows, nv, partial, colsEnd, acc, bv)...))
	}

	for i := range rows {
		for j := range nv {
			s, at := cAt(i, j)
			if partial(j) {
				body = append(body, jen.Add(acc(i, j)).Dot("StoreSlicePart").Call(s))
			} else {
				body = append(body, k.store(acc(i, j), s, at))
			}
		}
	}

	if k.generic {
		k.declareGenericTile(f, name, rows, tc, body)
		return
	}
	bWhat := fmt.Sprintf("b, row-major with stride %d (B in place)", k.n)
	if k.pack {
		bWhat = fmt.Sprintf("b, a packed strip with stride %d", k.nr)
	}
	if !k.epi.bias {
		f.Add(golang.Comment(fmt.Sprintf("%s computes the %d×%d tile of c at c (row stride %d) from %s of a "+
			"(row stride %d) and depth rows of %s: c = a·b when first, c += a·b otherwise.",
			name, rows, cols, k.n, plural(rows, "row"), k.k, bWhat)))
		f.Func().Id(name).Params(
			jen.List(id("c"), id("a"), id("b")).Index().Float32(), id("depth").Int(), id("first").Bool(),
		).Block(body...)
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes the %d×%d tile of c at c (row stride %d) from %s of a "+
		"(row stride %d) and depth rows of %s: c = a·b when first, c += a·b otherwise; when last, the "+
		"slice of K is the last one and the tile is stored as %s, bias holding its columns' biases.",
		name, rows, cols, k.n, plural(rows, "row"), k.k, bWhat, k.epi.formula())))
	f.Func().Id(name).Params(
		jen.List(id("c"), id("a"), id("b"), id("bias")).Index().Float32(), id("depth").Int(), jen.List(id("first"), id("last")).Bool(),
	).Block(body...)
}

// declareGenericTile declares the generic kernel's tile name with body:
// the strides n and k are arguments, and so are the columns of a tile
// whose last vector is partial at run time.
func (k kernel) declareGenericTile(f *jen.File, name string, rows int, tc tileCols, body []jen.Code) {
	id := jen.Id
	bWhat := "b, row-major with stride n (B in place)"
	if k.pack {
		bWhat = fmt.Sprintf("b, a packed strip with stride %d", k.nr)
	}
	width := fmt.Sprintf("%d columns", tc.nv*k.lanes)
	ints := []jen.Code{id("n"), id("k")}
	if tc.runtime {
		width = fmt.Sprintf("cols columns (%d to %d)", (tc.nv-1)*k.lanes+1, tc.nv*k.lanes)
		ints = append(ints, id("cols"))
	}
	ints = append(ints, id("depth"))
	epi, flags := "", []jen.Code{id("first")}
	params := []jen.Code{jen.List(id("c"), id("a"), id("b")).Index().Float32()}
	if k.epi.bias {
		epi = fmt.Sprintf("; when last, the slice of K is the last one and the tile is stored as %s, bias holding its columns' biases", k.epi.formula())
		flags = append(flags, id("last"))
		params[0] = jen.List(id("c"), id("a"), id("b"), id("bias")).Index().Float32()
	}
	params = append(params, jen.List(ints...).Int(), jen.List(flags...).Bool())
	rowsText := "one row"
	if rows > 1 {
		rowsText = fmt.Sprintf("%d rows", rows)
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes the tile of %s × %s of c at c (row stride n) from %s of a "+
		"(row stride k) and depth rows of %s: c = a·b when first, c += a·b otherwise%s.",
		name, rowsText, width, rowsText, bWhat, epi)))
	f.Func().Id(name).Params(params...).Block(body...)
}

// load returns the vector s[at:at+lanes], or the one at the start of s for
// a nil at.
func (k kernel) load(s, at jen.Code) jen.Code {
	if at == nil {
		return jen.Qual(golang.ArchSIMD, "Load"+k.v.Name()+"Slice").Call(s)
	}
	return k.v.Load(s, at)
}

// store returns the statement that writes x to s[at:at+lanes], or to the
// start of s for a nil at.
func (k kernel) store(x, s, at jen.Code) jen.Code {
	if at == nil {
		return jen.Add(x).Dot("StoreSlice").Call(s)
	}
	return k.v.Store(x, s, at)
}

// epilogue returns the statements that apply k's epilogue to the rows×cols
// tile in the accumulators acc(i, j) before they are stored: the bias of
// the tile's columns is loaded once into the registers of B, bv(j) (the
// short vector of a short-N tile with LoadSlicePart), and added to every
// row; the activation, if any, then runs, with x, the register of A, free
// for its use (ReLU holds zero there).
// The tile needs no register beyond those of its loop.
func (k kernel) epilogue(rows, nv int, partial func(j int) bool, colsEnd func() jen.Code,
	acc func(i, j int) *jen.Statement, bv func(j int) *jen.Statement) []jen.Code {
	v, id := k.v, jen.Id
	lanes := v.Lanes()
	var out []jen.Code
	for j := range nv {
		switch {
		case v.Scalar():
			out = append(out, jen.Add(bv(j)).Op("=").Id("bias").Index(jen.Lit(j)))
		case partial(j):
			out = append(out, jen.Add(bv(j)).Op("=").Add(v.LoadPart(id("bias").Index(lit0(j*lanes), colsEnd()), nil)))
		case j == 0:
			out = append(out, jen.Add(bv(j)).Op("=").Add(k.load(id("bias"), nil)))
		default:
			out = append(out, jen.Add(bv(j)).Op("=").Add(v.Load(id("bias"), jen.Lit(j*lanes))))
		}
	}
	act := k.epi.act
	if act != nil {
		out = append(out, act.goPrelude(v)...)
	}
	for i := range rows {
		for j := range nv {
			out = append(out, jen.Add(acc(i, j)).Op("=").Add(v.Add(acc(i, j), bv(j))))
			if act != nil {
				out = append(out, act.goVector(v, func() jen.Code { return acc(i, j) }))
			}
		}
	}
	return out
}

// lit0 returns the literal x, or nothing for 0, as the low bound of a slice.
func lit0(x int) jen.Code {
	if x == 0 {
		return jen.Empty()
	}
	return jen.Lit(x)
}
