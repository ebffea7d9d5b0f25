package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// baselines are what autotune bench compares the tuned kernel with. They
// are not the tuned code, so they are not part of Version: changing one
// changes no tuning record.
var baselines = []kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: i-k-j loops over the rows of c, one goroutine",
	EmitGo: emitNaive,
}}

// emitNaive emits the product as a Go programmer would write it without a
// tuner: a function of the shape known only at run time, the i-k-j loop
// order (the inner loop runs along rows of b and c, which the compiler keeps
// in order but does not vectorise), float32 sums, one goroutine. The kernel
// called name passes the shape to it.
func emitNaive(f *jen.File, name string, shape []int) {
	m, n, k := checkShape(shape)
	impl := name + "Gemm"
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s computes c = a·b for the row-major %d×%d matrix a and %d×%d matrix b, "+
		"with plain Go (%s); autotune bench compares tuned kernels with it.", name, m, k, k, n, impl)))
	f.Func().Id(name).Params(jen.List(id("c"), id("a"), id("b")).Index().Float32()).Block(
		id(impl).Call(id("c"), id("a"), id("b"), jen.Lit(m), jen.Lit(n), jen.Lit(k)),
	)
	f.Line()

	f.Add(golang.Comment(impl + " computes c = a·b for the row-major m×k matrix a and k×n matrix b into the m×n matrix c."))
	f.Func().Id(impl).Params(jen.List(id("c"), id("a"), id("b")).Index().Float32(), jen.List(id("m"), id("n"), id("k")).Int()).Block(
		jen.For(id("i").Op(":=").Range().Id("m")).Block(
			id("ci").Op(":=").Id("c").Index(id("i").Op("*").Id("n"), jen.Parens(id("i").Op("+").Lit(1)).Op("*").Id("n")),
			jen.Clear(id("ci")),
			jen.For(id("p").Op(":=").Range().Id("k")).Block(
				id("aip").Op(":=").Id("a").Index(id("i").Op("*").Id("k").Op("+").Id("p")),
				id("bp").Op(":=").Id("b").Index(id("p").Op("*").Id("n"), jen.Parens(id("p").Op("+").Lit(1)).Op("*").Id("n")),
				jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("bp")).Block(
					id("ci").Index(id("j")).Op("+=").Id("aip").Op("*").Id("x"),
				),
			),
		),
	)
}
