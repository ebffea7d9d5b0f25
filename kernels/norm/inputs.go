package norm

import (
	"math/rand/v2"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// A dist is how an input set draws x: every row r gets a base value b_r,
// from ±[baseLo, baseHi] (0 when baseHi is 0), and each element is
// b_r + d, d from ±[lo, hi]; with constant, each row is one value, from
// ±[lo, hi] in odd rows and ±[evenLo, evenHi] in even ones. gamma and
// beta come from ±[0.5, 2], but at every tinyEvery-th element (when set)
// from ±[tinyLo, tinyHi]. No set draws a zero: |b_r| is far above hi
// where a set has a base.
type dist struct {
	name           string
	lo, hi         float64
	baseLo, baseHi float64
	constant       bool
	evenLo, evenHi float64
	tinyEvery      int
	tinyLo, tinyHi float64
	dtypes         []dtype.DType // kernels.InputSet.DTypes: nil for every dtype
}

// dists are the input sets of an op (kernels.Op.Inputs), the first the one
// candidates are timed on:
//
//	uniform   x from ±[0.125, 4]
//	large     x from ±[5e17, 2e18]: x² reaches 4e36 and a float32 sum
//	          of x² overflows beyond 85 columns; a kernel must still
//	          give x/rms(x)·γ (see the package doc)
//	tiny      x from ±[5e-19, 2e-18]: mean(x²) near 1e-36, far below
//	          eps, which alone then sets the scale
//	constant  constant rows, of magnitudes up to 4 and up to 1e18:
//	          LayerNorm's variance is 0, its output exactly beta
//	lowvar    RMSNorm: x from ±[1e-5, 1e-4], mean(x²) far below eps;
//	          LayerNorm: x = b_r + d with |b_r| in [0.5, 1] and |d| in
//	          [1e-5, 1e-4], a variance near 1e-9, far below eps, that
//	          a kernel computing x-mean naively in float32 gets wrong
//	          (in f16, which cannot hold b_r + d, the rows are constant)
//	subnormal x from ±[0.125, 4], gamma and beta as everywhere but at
//	          one column in 23, from ±[1e-39, 1e-38] there: outputs
//	          below float32's smallest normal (1.2e-38) in a few lanes
//	          of some vectors, which a conversion that flushes
//	          subnormals to zero gets wrong in bits (VCVTNEPS2BF16 reads
//	          them as zero: convert=cvtne)
//
// large, tiny and constant are drawn for f32 and bf16 (which has
// float32's range); f16, which would store them as Inf and 0, has its
// own, at the edges of its range:
//
//	large16     x from ±[1e4, 6e4]: x² overflows f16's 65504, so a kernel
//	            that sums squares in f16 rather than float32 fails
//	tiny16      x from ±[6e-8, 6e-6], f16 subnormals: mean(x²) far
//	            below eps
//	constant16  constant rows, of magnitudes up to 4 and up to 6e4
//
// subnormal is last, so that the sets before it keep their seeds.
func (k kind) dists() []dist {
	low := dist{name: "lowvar", lo: 1e-5, hi: 1e-4}
	if k.layer {
		low.baseLo, low.baseHi = 0.5, 1
	}
	wide := []dtype.DType{dtype.F32, dtype.BF16}
	f16 := []dtype.DType{dtype.F16}
	return []dist{
		{name: "uniform", lo: 0.125, hi: 4},
		{name: "large", lo: 5e17, hi: 2e18, dtypes: wide},
		{name: "tiny", lo: 5e-19, hi: 2e-18, dtypes: wide},
		{name: "constant", lo: 0.125, hi: 4, constant: true, evenLo: 1e17, evenHi: 1e18, dtypes: wide},
		low,
		{name: "large16", lo: 1e4, hi: 6e4, dtypes: f16},
		{name: "tiny16", lo: 6e-8, hi: 6e-6, dtypes: f16},
		{name: "constant16", lo: 0.125, hi: 4, constant: true, evenLo: 1e4, evenHi: 6e4, dtypes: f16},
		{name: "subnormal", lo: 0.125, hi: 4, tinyEvery: 23, tinyLo: 1e-39, tinyHi: 1e-38, dtypes: wide},
	}
}

// inputs returns the op's input sets, each with its emitted twin.
func (k kind) inputs() []kernels.InputSet {
	var sets []kernels.InputSet
	for _, d := range k.dists() {
		sets = append(sets, kernels.InputSet{Name: d.name, Fill: d.fill, EmitFill: d.emitFill, DTypes: d.dtypes})
	}
	return sets
}

// fill draws x row by row, then gamma and beta (when the op has it).
func (d dist) fill(shape []int, r *rand.Rand, ins [][]float32) {
	rows, cols := checkShape(shape)
	x := ins[0]
	for row := range rows {
		var base float32
		if d.baseHi > 0 {
			base = kernels.SignedUniform(r, d.baseLo, d.baseHi)
		}
		if d.constant {
			base = kernels.SignedUniform(r, d.lo, d.hi)
			if row%2 == 0 {
				base = kernels.SignedUniform(r, d.evenLo, d.evenHi)
			}
		}
		for c := range cols {
			if d.constant {
				x[row*cols+c] = base
			} else {
				x[row*cols+c] = base + kernels.SignedUniform(r, d.lo, d.hi)
			}
		}
	}
	for _, in := range ins[1:] {
		for i := range in {
			if d.tinyEvery > 0 && i%d.tinyEvery == 0 {
				in[i] = kernels.SignedUniform(r, d.tinyLo, d.tinyHi)
			} else {
				in[i] = kernels.SignedUniform(r, 0.5, 2)
			}
		}
	}
}

// emitFill writes fill as plain Go (kernels.InputSet.EmitFill), with d's
// bounds as literals and only the branches d takes.
func (d dist) emitFill(f *jen.File, name string) {
	id, lit := jen.Id, jen.Lit
	r := id("r")
	var row []jen.Code
	at := id("x").Index(id("row").Op("*").Id("cols").Op("+").Id("c"))
	switch {
	case d.constant:
		row = []jen.Code{
			id("base").Op(":=").Add(kernels.EmitSignedUniform(r, d.lo, d.hi)),
			jen.If(id("row").Op("%").Lit(2).Op("==").Lit(0)).Block(
				id("base").Op("=").Add(kernels.EmitSignedUniform(r, d.evenLo, d.evenHi))),
			jen.For(id("c").Op(":=").Range().Id("cols")).Block(jen.Add(at).Op("=").Id("base")),
		}
	case d.baseHi > 0:
		row = []jen.Code{
			id("base").Op(":=").Add(kernels.EmitSignedUniform(r, d.baseLo, d.baseHi)),
			jen.For(id("c").Op(":=").Range().Id("cols")).Block(
				jen.Add(at).Op("=").Id("base").Op("+").Add(kernels.EmitSignedUniform(r, d.lo, d.hi))),
		}
	default:
		row = []jen.Code{
			jen.For(id("c").Op(":=").Range().Id("cols")).Block(
				jen.Add(at).Op("=").Add(kernels.EmitSignedUniform(r, d.lo, d.hi))),
		}
	}
	vec := []jen.Code{id("in").Index(id("i")).Op("=").Add(kernels.EmitSignedUniform(r, 0.5, 2))}
	if d.tinyEvery > 0 {
		vec = []jen.Code{jen.If(id("i").Op("%").Lit(d.tinyEvery).Op("==").Lit(0)).Block(
			id("in").Index(id("i")).Op("=").Add(kernels.EmitSignedUniform(r, d.tinyLo, d.tinyHi)),
		).Else().Block(vec...)}
	}
	f.Func().Id(name).Params(id("shape").Index().Int(), r.Clone().Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
		jen.List(id("rows"), id("cols"), id("x")).Op(":=").List(id("shape").Index(lit(0)), id("shape").Index(lit(1)), id("ins").Index(lit(0))),
		jen.For(id("row").Op(":=").Range().Id("rows")).Block(row...),
		jen.For(jen.List(id("_"), id("in")).Op(":=").Range().Id("ins").Index(lit(1), jen.Empty())).Block(
			jen.For(id("i").Op(":=").Range().Id("in")).Block(
				vec...)),
	)
}

// emitReference writes reference as plain Go (kernels.Op.EmitReference).
func (k kind) emitReference(f *jen.File, name string) {
	id, lit := jen.Id, jen.Lit
	f64 := func(c jen.Code) *jen.Statement { return jen.Float64().Call(c) }
	row := []jen.Code{
		jen.List(id("s"), id("d")).Op(":=").List(
			id("x").Index(id("r").Op("*").Id("cols").Op(":").Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols")),
			id("out").Index(id("r").Op("*").Id("cols").Op(":").Parens(id("r").Op("+").Lit(1)).Op("*").Id("cols"))),
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
		y = y.Op("+").Add(f64(id("ins").Index(lit(2)).Index(id("i"))))
	}
	row = append(row,
		id("ss").Op(":=").Lit(0.0),
		jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(id("ss").Op("+=").Add(dev).Op("*").Add(dev)),
		id("inv").Op(":=").Lit(1).Op("/").Qual("math", "Sqrt").Call(id("ss").Op("/").Add(f64(id("cols"))).Op("+").Lit(k.eps)),
		jen.For(jen.List(id("i"), id("v")).Op(":=").Range().Id("s")).Block(id("d").Index(id("i")).Op("=").Add(y)),
	)
	f.Func().Id(name).Params(id("shape").Index().Int(), id("ins").Index().Index().Float32(), id("out").Index().Float64()).Block(
		jen.List(id("rows"), id("cols")).Op(":=").List(id("shape").Index(lit(0)), id("shape").Index(lit(1))),
		jen.List(id("x"), id("gamma")).Op(":=").List(id("ins").Index(lit(0)), id("ins").Index(lit(1))),
		jen.For(id("r").Op(":=").Range().Id("rows")).Block(row...),
	)
}
