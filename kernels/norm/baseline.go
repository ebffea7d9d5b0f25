package norm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// baselines are what autotune bench compares the tuned kernels with:
// naive and, in builds with the onednn tag, LayerNorm's onednn (oneDNN 2
// has no RMSNorm primitive). They are not the tuned code, so they are not
// part of Version.
func (k kind) baselines() []kernels.Baseline {
	naive := kernels.Baseline{
		Name: "naive",
		Doc:  "plain Go: the row's statistics in float64 in two loops (mean, then squared deviations), then y, one goroutine",
		EmitGo: func(f *jen.File, name string, shape []int) {
			k.emitNaive(f, name, shape)
		},
	}
	if !k.layer {
		naive.Doc = "plain Go: the row's sum of squares in float64, then y, one goroutine"
	}
	out := []kernels.Baseline{naive}
	if k.layer {
		out = append(out, onednnBaselines...)
	}
	return out
}

// emitNaive emits the op as a Go programmer would write it without a
// tuner: a function of the shape known at run time, the statistics in
// float64 (a careful programmer's choice: it needs no shift and cannot
// overflow for float32 inputs), no vectors, one goroutine; the kernel
// called name passes the shape to it.
func (k kind) emitNaive(f *jen.File, name string, shape []int) {
	rows, cols := checkShape(shape)
	impl := name + "Norm"
	id, lit := jen.Id, jen.Lit
	slices := []jen.Code{id("y"), id("x"), id("gamma")}
	if k.layer {
		slices = append(slices, id("beta"))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to y the %s of each row of the %d×%d row-major matrix x, "+
		"with plain Go (%s); autotune bench compares tuned kernels with it.", name, k.name, rows, cols, impl)))
	f.Func().Id(name).Params(jen.List(slices...).Index().Float32()).Block(
		id(impl).Call(append(slices, lit(rows), lit(cols))...),
	)
	f.Line()

	f64 := func(c jen.Code) *jen.Statement { return jen.Float64().Call(c) }
	row := []jen.Code{
		jen.List(id("s"), id("d")).Op(":=").List(
			id("x").Index(id("r").Op("*").Id("cols"), jen.Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols")),
			id("y").Index(id("r").Op("*").Id("cols"), jen.Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols"))),
		id("mean").Op(":=").Lit(0.0),
	}
	if k.layer {
		row = append(row,
			jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(id("mean").Op("+=").Add(f64(id("v")))),
			id("mean").Op("/=").Add(f64(id("cols"))))
	}
	dev := jen.Parens(f64(id("v")).Op("-").Id("mean"))
	y := dev.Clone().Op("*").Id("inv").Op("*").Add(f64(id("gamma").Index(id("i"))))
	if k.layer {
		y = y.Op("+").Add(f64(id("beta").Index(id("i"))))
	}
	row = append(row,
		id("ss").Op(":=").Lit(0.0),
		jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(id("ss").Op("+=").Add(dev).Op("*").Add(dev)),
		id("inv").Op(":=").Lit(1).Op("/").Qual("math", "Sqrt").Call(id("ss").Op("/").Add(f64(id("cols"))).Op("+").Lit(k.eps)),
		jen.For(jen.List(id("i"), id("v")).Op(":=").Range().Id("s")).Block(id("d").Index(id("i")).Op("=").Float32().Call(y)),
	)
	f.Add(golang.Comment(impl + " normalises each row of the rows×cols matrix x into y."))
	f.Func().Id(impl).Params(jen.List(slices...).Index().Float32(), jen.List(id("rows"), id("cols")).Int()).Block(
		jen.For(id("r").Op(":=").Range().Id("rows")).Block(row...),
	)
}
