package gemm

import "github.com/dave/jennifer/jen"

// emitReference returns a kernels.Op.EmitReference that writes reference,
// followed by epilogue e as referenceEpilogue applies it, in plain Go.
func emitReference(e epilogue) func(f *jen.File, name string) {
	return func(f *jen.File, name string) {
		id := jen.Id
		body := []jen.Code{
			jen.List(id("m"), id("n"), id("k")).Op(":=").List(id("shape").Index(jen.Lit(0)), id("shape").Index(jen.Lit(1)), id("shape").Index(jen.Lit(2))),
			jen.List(id("a"), id("b")).Op(":=").List(id("ins").Index(jen.Lit(0)), id("ins").Index(jen.Lit(1))),
			jen.For(id("i").Op(":=").Range().Id("m")).Block(
				id("c").Op(":=").Id("out").Index(id("i").Op("*").Id("n").Op(":").Parens(id("i").Op("+").Lit(1)).Op("*").Id("n")),
				jen.Clear(id("c")),
				jen.For(id("p").Op(":=").Range().Id("k")).Block(
					id("aip").Op(":=").Float64().Call(id("a").Index(id("i").Op("*").Id("k").Op("+").Id("p"))),
					jen.For(jen.List(id("j"), id("bpj")).Op(":=").Range().Id("b").Index(id("p").Op("*").Id("n").Op(":").Parens(id("p").Op("+").Lit(1)).Op("*").Id("n"))).Block(
						id("c").Index(id("j")).Op("+=").Id("aip").Op("*").Float64().Call(id("bpj"))),
				),
			),
		}
		if e.bias {
			add := []jen.Code{id("c").Index(id("j")).Op("+=").Float64().Call(id("x"))}
			if e.act != nil {
				add = append(add, id("c").Index(id("j")).Op("=").Add(e.act.goScalar(id("c").Index(id("j")), true)))
			}
			body = append(body, jen.For(id("i").Op(":=").Range().Id("m")).Block(
				id("c").Op(":=").Id("out").Index(id("i").Op("*").Id("n").Op(":").Parens(id("i").Op("+").Lit(1)).Op("*").Id("n")),
				jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("ins").Index(jen.Lit(2)).Index(jen.Op(":").Id("n"))).Block(add...),
			))
		}
		f.Func().Id(name).Params(id("shape").Index().Int(), id("ins").Index().Index().Float32(), id("out").Index().Float64()).Block(body...)
	}
}
