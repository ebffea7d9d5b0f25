package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// The plain form of a micro=asm config (kernels.AMD64Plain) is what a
// build without GOEXPERIMENT=simd can run at nearly the tuned speed: the
// full tiles are the config's assembly, which needs no experiment, and the
// rest is plain Go. The archsimd edge tiles of the tuned form become one
// scalar loop nest, emitEdge, for every tile short in rows or columns;
// they hold a small share of c at the shapes the tiles were tuned for.

// edgeFn names the plain kernel's scalar tile.
func (k kernel) edgeFn() string { return k.name + "Edge" }

// emitEdge emits the plain kernel's tile of rows×cols of c, both
// arguments (rows ≤ mr, cols ≤ nr): for each row, the i-k-j loops of
// plain Go, c starting at zero on the first slice of K, with the
// epilogue on the last. Each element sums its products in the order of K,
// as the tiles do.
func (k kernel) emitEdge(f *jen.File) {
	id := jen.Id
	bStride := jen.Lit(k.nr) // a packed strip
	if !k.pack {
		bStride = id("n") // B in place
	}
	var body []jen.Code
	ints := []jen.Code{id("rows"), id("cols"), id("depth")}
	if k.generic {
		ints = append([]jen.Code{id("n"), id("k")}, ints...)
	} else {
		body = append(body, jen.Const().List(id("n"), id("k")).Op("=").List(jen.Lit(k.n), jen.Lit(k.k)))
	}
	row := []jen.Code{
		id("ci").Op(":=").Id("c").Index(id("i").Op("*").Id("n"), jen.Empty()).Index(jen.Empty(), id("cols")),
		id("ai").Op(":=").Id("a").Index(id("i").Op("*").Id("k"), jen.Empty()).Index(jen.Empty(), id("depth")),
		jen.If(id("first")).Block(jen.Clear(id("ci"))),
		jen.For(jen.List(id("p"), id("x")).Op(":=").Range().Id("ai")).Block(
			id("bp").Op(":=").Id("b").Index(id("p").Op("*").Add(bStride), jen.Empty()).Index(jen.Empty(), jen.Len(id("ci"))),
			jen.For(id("j").Op(":=").Range().Id("ci")).Block(
				id("ci").Index(id("j")).Op("+=").Id("x").Op("*").Id("bp").Index(id("j")),
			),
		),
	}
	if k.epi.bias {
		var sum jen.Code = id("ci").Index(id("j")).Op("+").Id("bj").Index(id("j"))
		if k.epi.act != nil {
			sum = k.epi.act.goScalar(sum, false)
		}
		row = append(row, jen.If(id("last")).Block(
			id("bj").Op(":=").Id("bias").Index(jen.Empty(), jen.Len(id("ci"))),
			jen.For(id("j").Op(":=").Range().Id("ci")).Block(id("ci").Index(id("j")).Op("=").Add(sum)),
		))
	}
	body = append(body, jen.For(id("i").Op(":=").Range().Id("rows")).Block(row...))

	n, kk := "n", "k"
	if !k.generic {
		n, kk = fmt.Sprint(k.n), fmt.Sprint(k.k)
	}
	bWhat := fmt.Sprintf("b, row-major with stride %s (B in place)", n)
	if k.pack {
		bWhat = fmt.Sprintf("b, a packed strip with stride %d", k.nr)
	}
	slices, flags, epi := []jen.Code{id("c"), id("a"), id("b")}, []jen.Code{id("first")}, ""
	if k.epi.bias {
		slices = append(slices, id("bias"))
		flags = append(flags, id("last"))
		epi = fmt.Sprintf("; when last, the slice of K is the last one and the tile is stored as %s, bias holding its columns' biases", k.epi.formula())
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes the tile of rows×cols of c at c (row stride %s, rows ≤ %d, cols ≤ %d) from rows of a "+
		"(row stride %s) and depth rows of %s, in plain Go: c = a·b when first, c += a·b otherwise%s. "+
		"It serves the tiles short in rows or columns, which the assembly tiles do not.",
		k.edgeFn(), n, k.mr, k.nr, kk, bWhat, epi)))
	f.Func().Id(k.edgeFn()).Params(jen.List(slices...).Index().Float32(), jen.List(ints...).Int(), jen.List(flags...).Bool()).Block(body...)
}

// edgeCall returns the call of emitEdge's tile in the loop over tiles of
// emitRows, for the tile of rows i… and columns jc+jr…: mr rows, or the
// last M%mr (a generic kernel takes them one at a time); nr columns, or
// the last N%nr (in a generic kernel, cols).
func (k kernel) edgeCall(shortM, shortN bool) jen.Code {
	id := jen.Id
	rows, cols := jen.Lit(k.mr), jen.Lit(k.nr)
	switch {
	case shortM && k.generic:
		rows = jen.Lit(1)
	case shortM:
		rows = jen.Lit(k.m % k.mr)
	}
	switch {
	case shortN && k.generic:
		cols = id("cols")
	case shortN:
		cols = jen.Lit(k.n % k.nr)
	}
	args := []jen.Code{
		id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr"), jen.Empty()),
		id("a").Index(id("i").Op("*").Id("k").Op("+").Id("pc"), jen.Empty()),
		id("s"),
	}
	if k.epi.bias {
		args = append(args, id("bias").Index(id("jc").Op("+").Id("jr"), jen.Empty()))
	}
	if k.generic {
		args = append(args, id("n"), id("k"))
	}
	args = append(args, rows, cols, id("depth"), id("pc").Op("==").Lit(0))
	if k.epi.bias {
		args = append(args, id("pc").Op("+").Id("depth").Op("==").Id("k"))
	}
	return id(k.edgeFn()).Call(args...)
}
