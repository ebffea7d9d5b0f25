package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/schedule"
)

// With micro=asm the full mr×nr micro-kernel is Go assembly from
// codegen/goasm (see the package doc); the edge tiles of M%mr rows and
// N%nr columns stay archsimd Go. The assembly has no first/last flags: a
// tile starts at zero or from c, and applies the epilogue or not, so
// there is one function per combination the loop nest calls, chosen in Go
// per call.

// emitAsm returns the assembly of the kernel of cfg, or nil for micro=go.
func emitAsm(name string, shape []int, cfg schedule.Config, e epilogue) []byte {
	return goasm.File(newKernel(name, shape, cfg, e).asmTiles()...)
}

// asmTile returns the name of the full tile starting at zero (first) or
// from c, with the epilogue (last) or not.
func (k kernel) asmTile(first, last bool) string {
	s := k.tileFn(false, false)
	if first {
		s += "Zero"
	} else {
		s += "Acc"
	}
	if last {
		s += "Epilogue"
	}
	return s
}

// asmTiles returns the assembly tiles of k: the full tile from zero and
// from c, each also with the epilogue when k has one. Nil for micro=go.
func (k kernel) asmTiles() []goasm.Tile {
	if !k.asm {
		return nil
	}
	bStep := 4 * k.n // B read in place: a step is a row of b
	if k.pack {
		bStep = 4 * k.nr // a step is a row of the packed strip
	}
	aRow, aStep := 4*k.k, 4 // A read in place: rows k apart, a step is the next column
	if k.packA {
		aRow, aStep = 4, 4*k.mr // a packed sliver: a step is the next mr-element column
	}
	var tiles []goasm.Tile
	lasts := []bool{false}
	if k.epi != noEpilogue {
		lasts = append(lasts, true)
	}
	for _, last := range lasts {
		for _, first := range []bool{true, false} {
			t := goasm.Tile{
				Name: k.asmTile(first, last), Lanes: k.v.Lanes(), MR: k.mr, NV: k.nv,
				ARow: aRow, AStep: aStep, BStep: bStep, CRow: 4 * k.n, Init: goasm.Load,
				Bias: last, ReLU: last && k.epi == biasReLUEpilogue,
			}
			if first {
				t.Init = goasm.Zero
			}
			tiles = append(tiles, t)
		}
	}
	return tiles
}

// asmCall returns the code in the loop over tiles that calls the full
// assembly tile for the tile of rows i… and columns jc+jr…: the bounds the
// assembly does not check, checked here, then the tile for the first slice
// of K (from zero) or a later one (from c), with the epilogue on the last.
func (k kernel) asmCall() jen.Code {
	id := jen.Id
	bStride := id("n") // B in place
	if k.pack {
		bStride = id("nr")
	}
	// The A operand: the tile's rows of a in place, or its packed sliver.
	aOperand := func() jen.Code { return jen.Op("&").Id("a").Index(id("i").Op("*").Id("k").Op("+").Id("pc")) }
	aCheck := jen.Id("_").Op("=").Id("a").Index(jen.Parens(id("i").Op("+").Id("mr").Op("-").Lit(1)).Op("*").Id("k").Op("+").Id("pc").Op("+").Id("depth").Op("-").Lit(1))
	if k.packA {
		sliver := func() *jen.Statement {
			return jen.Parens(id("i").Op("-").Id("ic")).Op("/").Id("mr").Op("*").Id("depth").Op("*").Id("mr")
		}
		aOperand = func() jen.Code { return jen.Op("&").Id("slivers").Index(sliver()) }
		aCheck = jen.Id("_").Op("=").Id("slivers").Index(sliver().Op("+").Id("depth").Op("*").Id("mr").Op("-").Lit(1))
	}
	args := func() []jen.Code {
		return []jen.Code{
			jen.Op("&").Id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr")),
			aOperand(),
			jen.Op("&").Id("s").Index(jen.Lit(0)),
		}
	}
	call := func(first, last bool) jen.Code {
		a := args()
		if last {
			a = append(a, jen.Op("&").Id("bias").Index(id("jc").Op("+").Id("jr")))
		}
		return id(k.asmTile(first, last)).Call(append(a, id("depth"))...)
	}
	checks := []jen.Code{
		jen.Id("_").Op("=").Id("c").Index(jen.Parens(id("i").Op("+").Id("mr").Op("-").Lit(1)).Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr").Op("+").Id("nr").Op("-").Lit(1)).
			Comment("the tile reads and writes unchecked"),
		aCheck,
		jen.Id("_").Op("=").Id("s").Index(jen.Parens(id("depth").Op("-").Lit(1)).Op("*").Add(bStride).Op("+").Id("nr").Op("-").Lit(1)),
	}
	if k.epi != noEpilogue {
		checks = append(checks, jen.Id("_").Op("=").Id("bias").Index(id("jc").Op("+").Id("jr").Op("+").Id("nr").Op("-").Lit(1)))
	}
	var pick jen.Code
	first := id("pc").Op("==").Lit(0)
	if k.epi == noEpilogue {
		pick = jen.If(first).Block(call(true, false)).Else().Block(call(false, false))
	} else {
		last := id("pc").Op("+").Id("depth").Op("==").Id("k")
		pick = jen.Switch().Block(
			jen.Case(jen.Add(first).Op("&&").Add(last)).Block(call(true, true)),
			jen.Case(first.Clone()).Block(call(true, false)),
			jen.Case(last.Clone()).Block(call(false, true)),
			jen.Default().Block(call(false, false)),
		)
	}
	return jen.Block(append(checks, pick)...)
}

func (k kernel) sliversVar() string { return k.name + "Slivers" }
func (k kernel) packAFn() string    { return k.name + "PackA" }

// sliversLen is the length of a buffer of packed A: the full mr-row
// slivers of an mc×kc block.
func (k kernel) sliversLen() int { return k.mc / k.mr * k.mr * k.kc }

// emitSlivers emits the pool of buffers for packed A, as emitPanels does
// for B.
func (k kernel) emitSlivers(f *jen.File) {
	f.Add(golang.Comment(fmt.Sprintf("%s holds buffers for %s's packed slivers of A, %d KiB each.",
		k.sliversVar(), k.rowsFn(), (4*k.sliversLen()+1023)/1024)))
	f.Var().Id(k.sliversVar()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index(jen.Lit(k.sliversLen())).Float32()))),
	})
}

// emitPackA emits the function that packs the full mr-row slivers of rows
// ic to end-1 and columns pc to pc+depth-1 of a, each depth×mr with the mr
// elements of a column contiguous, so that an assembly tile broadcasts
// from one cache line per step instead of mr rows k apart. The rows of a
// last, short tile are not packed: the archsimd edge tile reads them in
// place.
func (k kernel) emitPackA(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s copies the full %d-row slivers of rows ic to end-1 and columns pc to "+
		"pc+depth-1 of a into slivers, each depth×%d, column by column.", k.packAFn(), k.mr, k.mr)))
	f.Func().Id(k.packAFn()).Params(
		jen.List(id("slivers"), id("a")).Index().Float32(), jen.List(id("ic"), id("end"), id("pc"), id("depth")).Int(),
	).Block(
		jen.Const().List(id("k"), id("mr")).Op("=").List(jen.Lit(k.k), jen.Lit(k.mr)),
		jen.For(id("i").Op(":=").Id("ic"), id("i").Op("+").Id("mr").Op("<=").Id("end"), id("i").Op("+=").Id("mr")).Block(
			id("s").Op(":=").Id("slivers").Index(jen.Parens(id("i").Op("-").Id("ic")).Op("*").Id("depth"), jen.Empty()).Index(jen.Empty(), id("depth").Op("*").Id("mr")),
			jen.For(id("r").Op(":=").Range().Id("mr")).Block(
				id("row").Op(":=").Id("a").Index(jen.Parens(id("i").Op("+").Id("r")).Op("*").Id("k").Op("+").Id("pc"), jen.Empty()).Index(jen.Empty(), id("depth")),
				jen.For(jen.List(id("p"), id("x")).Op(":=").Range().Id("row")).Block(
					id("s").Index(id("p").Op("*").Id("mr").Op("+").Id("r")).Op("=").Id("x"),
				),
			),
		),
	)
}
