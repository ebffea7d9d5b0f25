package softmax

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// baselines are what autotune bench compares the tuned kernel with: naive
// and, in builds with the onednn tag, onednn (and onednn-bf16, onednn-f16). They are not the tuned code, so they are not part of Version: changing one
// changes no tuning record.
var baselines = append([]kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: three loops per row, math.Exp in float64, one goroutine",
	EmitGo: emitNaive,
}}, onednnBaselines...)

// emitNaive emits softmax as a Go programmer would write it without a
// tuner, to be honest about what tuning buys: a function of the shape known
// only at run time, three loops over each row (the maximum; e^(x-max) with
// math.Exp in float64, stored and summed in float64; the scaling), no
// vectors, one goroutine. The sum is float64 because a careful programmer
// keeps it so (a float32 sum of a long row drifts past the tolerance); the
// kernel called name passes the shape to it.
func emitNaive(f *jen.File, name string, shape []int) {
	rows, cols := checkShape(shape)
	impl := name + "Softmax"
	f.Add(golang.Comment(fmt.Sprintf("%s writes to dst the softmax of each row of the %d×%d row-major matrix src, "+
		"with plain Go (%s); autotune bench compares tuned kernels with it.", name, rows, cols, impl)))
	f.Func().Id(name).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Float32()).Block(
		jen.Id(impl).Call(jen.Id("dst"), jen.Id("src"), jen.Lit(rows), jen.Lit(cols)),
	)
	f.Line()

	f.Add(golang.Comment(impl + " computes the softmax of each row of the rows×cols matrix src into dst."))
	d, s := jen.Id("d"), jen.Id("s")
	f.Func().Id(impl).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Float32(), jen.List(jen.Id("rows"), jen.Id("cols")).Int()).Block(
		jen.For(jen.Id("r").Op(":=").Range().Id("rows")).Block(
			jen.List(s, d).Op(":=").List(
				jen.Id("src").Index(jen.Id("r").Op("*").Id("cols"), jen.Parens(jen.Id("r").Op("+").Lit(1)).Op("*").Id("cols")),
				jen.Id("dst").Index(jen.Id("r").Op("*").Id("cols"), jen.Parens(jen.Id("r").Op("+").Lit(1)).Op("*").Id("cols")),
			),
			jen.Id("m").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
			jen.For(jen.List(jen.Id("_"), jen.Id("x")).Op(":=").Range().Add(s)).Block(
				jen.Id("m").Op("=").Max(jen.Id("m"), jen.Id("x")),
			),
			jen.Var().Id("sum").Float64(),
			jen.For(jen.List(jen.Id("i"), jen.Id("x")).Op(":=").Range().Add(s)).Block(
				jen.Id("e").Op(":=").Qual("math", "Exp").Call(jen.Float64().Call(jen.Id("x").Op("-").Id("m"))),
				jen.Add(d).Index(jen.Id("i")).Op("=").Float32().Call(jen.Id("e")),
				jen.Id("sum").Op("+=").Id("e"),
			),
			jen.Id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Id("sum")),
			jen.For(jen.Id("i").Op(":=").Range().Add(d)).Block(
				jen.Add(d).Index(jen.Id("i")).Op("*=").Id("scale"),
			),
		),
	)
}
