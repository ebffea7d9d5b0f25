package softmax

import (
	"math/rand/v2"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// emitReference writes reference as plain Go (kernels.Op.EmitReference).
func emitReference(f *jen.File, name string) {
	id := jen.Id
	f.Func().Id(name).Params(id("shape").Index().Int(), id("ins").Index().Index().Float32(), id("out").Index().Float64()).Block(
		jen.List(id("rows"), id("cols")).Op(":=").List(id("shape").Index(jen.Lit(0)), id("shape").Index(jen.Lit(1))),
		jen.For(id("r").Op(":=").Range().Id("rows")).Block(
			jen.List(id("s"), id("d")).Op(":=").List(
				id("ins").Index(jen.Lit(0)).Index(id("r").Op("*").Id("cols").Op(":").Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols")),
				id("out").Index(id("r").Op("*").Id("cols").Op(":").Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols"))),
			id("m").Op(":=").Qual("math", "Inf").Call(jen.Lit(-1)),
			jen.For(jen.List(id("_"), id("x")).Op(":=").Range().Id("s")).Block(
				id("m").Op("=").Max(id("m"), jen.Float64().Call(id("x")))),
			id("sum").Op(":=").Lit(0.0),
			jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("s")).Block(
				id("d").Index(id("i")).Op("=").Qual("math", "Exp").Call(jen.Float64().Call(id("x")).Op("-").Id("m")),
				id("sum").Op("+=").Id("d").Index(id("i"))),
			jen.For(id("i").Op(":=").Range().Id("d")).Block(id("d").Index(id("i")).Op("/=").Id("sum")),
		),
	)
}

// emitFillNegInf writes fillNegInf as plain Go (kernels.InputSet.EmitFill).
func emitFillNegInf(f *jen.File, name string) {
	id := jen.Id
	f.Func().Id(name).Params(id("shape").Index().Int(), id("r").Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
		jen.List(id("rows"), id("cols"), id("x")).Op(":=").List(id("shape").Index(jen.Lit(0)), id("shape").Index(jen.Lit(1)), id("ins").Index(jen.Lit(0))),
		jen.For(id("row").Op(":=").Range().Id("rows")).Block(
			id("keep").Op(":=").Id("r").Dot("IntN").Call(id("cols")),
			jen.For(id("c").Op(":=").Range().Id("cols")).Block(
				id("x").Index(id("row").Op("*").Id("cols").Op("+").Id("c")).Op("=").Add(kernels.EmitSignedUniform(id("r"), 0.125, 4)),
				jen.If(id("c").Op("!=").Id("keep").Op("&&").Id("r").Dot("IntN").Call(jen.Lit(4)).Op("==").Lit(0)).Block(
					id("x").Index(id("row").Op("*").Id("cols").Op("+").Id("c")).Op("=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1)))),
			),
		),
	)
}

// fillSubnormal draws logits from ±[0.125, 4] but makes one in 23 -84,
// whose outputs, e^(-84-max)/sum, fall among float32's subnormals (below
// 1.2e-38) in rows of more than a few elements: a few lanes of some
// vectors, which a conversion that flushes subnormals to zero
// (VCVTNEPS2BF16, convert=cvtne) gets wrong in bits.
func fillSubnormal(_ []int, r *rand.Rand, ins [][]float32) {
	x := ins[0]
	for i := range x {
		x[i] = kernels.SignedUniform(r, 0.125, 4)
		if i%subnormalEvery == 0 {
			x[i] = subnormalLogit
		}
	}
}

const (
	subnormalEvery = 23
	subnormalLogit = -84
)

// emitFillSubnormal writes fillSubnormal as plain Go.
func emitFillSubnormal(f *jen.File, name string) {
	id := jen.Id
	x := id("x").Index(id("i"))
	f.Func().Id(name).Params(id("_").Index().Int(), id("r").Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
		id("x").Op(":=").Id("ins").Index(jen.Lit(0)),
		jen.For(id("i").Op(":=").Range().Id("x")).Block(
			x.Clone().Op("=").Add(kernels.EmitSignedUniform(id("r"), 0.125, 4)),
			jen.If(id("i").Op("%").Lit(subnormalEvery).Op("==").Lit(0)).Block(x.Clone().Op("=").Lit(subnormalLogit)),
		),
	)
}

// constantBound is the largest magnitude of the constant set: a row of
// one huge value must give 1/cols, as x-max is 0 whatever x.
const constantBound = 1e30

// constantRows is a set of constant rows, drawn for dts: odd rows from
// ±[0.125, 4], even rows from ±[lo, hi].
func constantRows(name string, lo, hi float64, dts ...dtype.DType) kernels.InputSet {
	fill := func(shape []int, r *rand.Rand, ins [][]float32) {
		rows, cols := checkShape(shape)
		x := ins[0]
		for row := range rows {
			v := kernels.SignedUniform(r, 0.125, 4)
			if row%2 == 0 {
				v = kernels.SignedUniform(r, lo, hi)
			}
			for c := range cols {
				x[row*cols+c] = v
			}
		}
	}
	// emit writes fill as plain Go.
	emit := func(f *jen.File, name string) {
		id := jen.Id
		f.Func().Id(name).Params(id("shape").Index().Int(), id("r").Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
			jen.List(id("rows"), id("cols"), id("x")).Op(":=").List(id("shape").Index(jen.Lit(0)), id("shape").Index(jen.Lit(1)), id("ins").Index(jen.Lit(0))),
			jen.For(id("row").Op(":=").Range().Id("rows")).Block(
				id("v").Op(":=").Add(kernels.EmitSignedUniform(id("r"), 0.125, 4)),
				jen.If(id("row").Op("%").Lit(2).Op("==").Lit(0)).Block(
					id("v").Op("=").Add(kernels.EmitSignedUniform(id("r"), lo, hi))),
				jen.For(id("c").Op(":=").Range().Id("cols")).Block(
					id("x").Index(id("row").Op("*").Id("cols").Op("+").Id("c")).Op("=").Id("v")),
			),
		)
	}
	return kernels.InputSet{Name: name, Fill: fill, EmitFill: emit, DTypes: dts}
}
