package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// With pack_a (micro=asm only) each block of A, its rows [ic, end) and
// the depth columns of the slice of K, is copied before its strips are
// multiplied: tile after tile of mr rows, each depth×mr with the mr
// elements of a step contiguous, so that the assembly tile reads A as one
// stream (ARow 4 bytes, AStep 4·mr) instead of mr rows k floats apart.
// Rows a power-of-two stride apart (K = 1024, 4096) share a set of the
// L1 cache, and a 12-row tile then has more of them live than the cache
// has ways. The copy is M·K floats per panel of B (per run, with
// split=n); the edge tiles of the last M%mr rows still read A in place.

func (k kernel) packAFn() string    { return k.name + "PackA" }
func (k kernel) aPanelsVar() string { return k.name + "APanels" }

// aBlockLen is the length of the specialised kernel's packed block of A:
// mc rows of kc columns.
func (k kernel) aBlockLen() int { return k.mc * k.kc }

// emitAPanels emits the pool of buffers for the packed blocks of A, as
// emitPanels does for B's panels.
func (k kernel) emitAPanels(f *jen.File) {
	if k.generic {
		f.Add(golang.Comment(fmt.Sprintf("%s holds buffers for %s's packed blocks of A, each grown to the largest a call has needed.",
			k.aPanelsVar(), k.rowsFn())))
		f.Var().Id(k.aPanelsVar()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
			jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
		})
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s holds buffers for %s's packed blocks of A, %d KiB each.",
		k.aPanelsVar(), k.rowsFn(), (4*k.aBlockLen()+1023)/1024)))
	f.Var().Id(k.aPanelsVar()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index(jen.Lit(k.aBlockLen())).Float32()))),
	})
}

// aBuffer returns the statements of the rows function that take the
// buffer ap for the packed blocks of A from the pool.
func (k kernel) aBuffer() []jen.Code {
	id := jen.Id
	if !k.generic {
		return []jen.Code{
			id("ap").Op(":=").Id(k.aPanelsVar()).Dot("Get").Call().Assert(jen.Op("*").Index(jen.Lit(k.aBlockLen())).Float32()),
			jen.Defer().Id(k.aPanelsVar()).Dot("Put").Call(id("ap")),
		}
	}
	// As large as this call's blocks: the config's may be far larger
	// than the matrices.
	return []jen.Code{
		id("needA").Op(":=").Min(id("mc"), id("hi").Op("-").Id("lo")).Op("*").Min(id("kc"), id("k")),
		id("abuf").Op(":=").Id(k.aPanelsVar()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		jen.If(jen.Cap(jen.Op("*").Id("abuf")).Op("<").Id("needA")).Block(
			jen.Op("*").Id("abuf").Op("=").Make(jen.Index().Float32(), id("needA")),
		),
		jen.Defer().Id(k.aPanelsVar()).Dot("Put").Call(id("abuf")),
		id("ap").Op(":=").Parens(jen.Op("*").Id("abuf")).Index(jen.Empty(), id("needA")),
	}
}

// packACall returns the call in the loop over blocks of A that packs the
// block of rows ic to end-1.
func (k kernel) packACall() jen.Code {
	id := jen.Id
	ap := jen.Code(id("ap"))
	if !k.generic {
		ap = id("ap").Index(jen.Empty(), jen.Empty())
	}
	args := []jen.Code{ap, id("a")}
	if k.generic {
		args = append(args, id("k"))
	}
	return id(k.packAFn()).Call(append(args, id("ic"), id("end"), id("pc"), id("depth"))...)
}

// emitPackA emits the function that packs the full tiles of a block of A.
func (k kernel) emitPackA(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s copies the whole %d-row tiles of rows ic to end-1 of a, columns pc to "+
		"pc+depth-1, into ap, tile after tile, each depth×%d with the %d elements of a step contiguous.",
		k.packAFn(), k.mr, k.mr, k.mr)))
	ints := []jen.Code{id("ic"), id("end"), id("pc"), id("depth")}
	consts := jen.Const().List(id("k"), id("mr")).Op("=").List(jen.Lit(k.k), jen.Lit(k.mr))
	if k.generic {
		ints = append([]jen.Code{id("k")}, ints...)
		consts = jen.Const().Id("mr").Op("=").Lit(k.mr)
	}
	f.Func().Id(k.packAFn()).Params(jen.List(id("ap"), id("a")).Index().Float32(), jen.List(ints...).Int()).Block(
		consts,
		jen.For(id("i").Op(":=").Id("ic"), id("i").Op("+").Id("mr").Op("<=").Id("end"), id("i").Op("+=").Id("mr")).Block(
			id("t").Op(":=").Id("ap").Index(jen.Parens(id("i").Op("-").Id("ic")).Op("*").Id("depth"), jen.Parens(id("i").Op("-").Id("ic").Op("+").Id("mr")).Op("*").Id("depth")),
			jen.For(id("r").Op(":=").Range().Id("mr")).Block(
				jen.For(jen.List(id("p"), id("x")).Op(":=").Range().Id("a").Index(jen.Parens(id("i").Op("+").Id("r")).Op("*").Id("k").Op("+").Id("pc"), jen.Empty()).Index(jen.Empty(), id("depth"))).Block(
					id("t").Index(id("p").Op("*").Id("mr").Op("+").Id("r")).Op("=").Id("x"),
				),
			),
		),
	)
}
