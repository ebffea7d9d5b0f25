package attention

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/kernels"
)

// emitReference returns a kernels.Op.EmitReference that writes reference
// (causal or not) in plain Go.
func emitReference(causal bool) func(f *jen.File, name string) {
	return func(f *jen.File, name string) {
		id := jen.Id
		slice := func(x string, base, row jen.Code) jen.Code {
			return id(x).Index(jen.Add(base).Op("+").Add(row).Op("*").Id("d").Op(":").Add(base).Op("+").Parens(jen.Add(row).Op("+").Lit(1)).Op("*").Id("d"))
		}
		keys := id("w").Op(":=").Id("w").Index(jen.Op(":").Id("s"))
		var mask jen.Code = jen.Null()
		if causal {
			mask = id("w").Op("=").Id("w").Index(jen.Op(":").Id("i").Op("+").Lit(1))
		}
		f.Func().Id(name).Params(id("shape").Index().Int(), id("ins").Index().Index().Float32(), id("out").Index().Float64()).Block(
			jen.List(id("b"), id("h"), id("s"), id("d")).Op(":=").List(id("shape").Index(jen.Lit(0)), id("shape").Index(jen.Lit(1)), id("shape").Index(jen.Lit(2)), id("shape").Index(jen.Lit(3))),
			jen.List(id("q"), id("k"), id("v")).Op(":=").List(id("ins").Index(jen.Lit(0)), id("ins").Index(jen.Lit(1)), id("ins").Index(jen.Lit(2))),
			id("scale").Op(":=").Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Float64().Call(id("d"))),
			id("w").Op(":=").Make(jen.Index().Float64(), id("s")),
			jen.For(id("bh").Op(":=").Range().Id("b").Op("*").Id("h")).Block(
				id("base").Op(":=").Id("bh").Op("*").Id("s").Op("*").Id("d"),
				jen.For(id("i").Op(":=").Range().Id("s")).Block(
					id("qi").Op(":=").Add(slice("q", id("base"), id("i"))),
					keys,
					mask,
					id("m").Op(":=").Qual("math", "Inf").Call(jen.Lit(-1)),
					jen.For(id("j").Op(":=").Range().Id("w")).Block(
						id("kj").Op(":=").Add(slice("k", id("base"), id("j"))),
						id("dot").Op(":=").Lit(0.0),
						jen.For(id("x").Op(":=").Range().Id("qi")).Block(
							id("dot").Op("+=").Float64().Call(id("qi").Index(id("x"))).Op("*").Float64().Call(id("kj").Index(id("x")))),
						id("w").Index(id("j")).Op("=").Id("dot").Op("*").Id("scale"),
						id("m").Op("=").Max(id("m"), id("w").Index(id("j"))),
					),
					id("sum").Op(":=").Lit(0.0),
					jen.For(id("j").Op(":=").Range().Id("w")).Block(
						id("w").Index(id("j")).Op("=").Qual("math", "Exp").Call(id("w").Index(id("j")).Op("-").Id("m")),
						id("sum").Op("+=").Id("w").Index(id("j"))),
					id("o").Op(":=").Add(slice("out", id("base"), id("i"))),
					jen.Clear(id("o")),
					jen.For(jen.List(id("j"), id("wj")).Op(":=").Range().Id("w")).Block(
						id("vj").Op(":=").Add(slice("v", id("base"), id("j"))),
						jen.For(id("x").Op(":=").Range().Id("o")).Block(
							id("o").Index(id("x")).Op("+=").Id("wj").Op("*").Float64().Call(id("vj").Index(id("x"))))),
					jen.For(id("x").Op(":=").Range().Id("o")).Block(id("o").Index(id("x")).Op("/=").Id("sum")),
				),
			),
		)
	}
}

// emitFillLarge writes fillLarge as plain Go (kernels.InputSet.EmitFill).
func emitFillLarge(f *jen.File, name string) {
	id := jen.Id
	f.Func().Id(name).Params(id("shape").Index().Int(), id("r").Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
		id("d").Op(":=").Id("shape").Index(jen.Lit(3)),
		jen.List(id("q"), id("k"), id("v")).Op(":=").List(id("ins").Index(jen.Lit(0)), id("ins").Index(jen.Lit(1)), id("ins").Index(jen.Lit(2))),
		jen.Var().Id("rowSign").Float32(),
		jen.For(id("i").Op(":=").Range().Id("q")).Block(
			jen.If(id("i").Op("%").Id("d").Op("==").Lit(0)).Block(
				id("rowSign").Op("=").Add(kernels.EmitSignedUniform(id("r"), 1, 1))),
			id("q").Index(id("i")).Op("=").Float32().Call(jen.Lit(2.0).Op("+").Lit(2.0).Op("*").Id("r").Dot("Float64").Call()),
			id("k").Index(id("i")).Op("=").Id("rowSign").Op("*").Float32().Call(jen.Lit(0.125).Op("+").Lit(float64(inputBound)-0.125).Op("*").Id("r").Dot("Float64").Call()),
			id("v").Index(id("i")).Op("=").Add(kernels.EmitSignedUniform(id("r"), 0.125, inputBound)),
		),
	)
}
