package attention

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
	Doc:    "plain Go: the S×S scores per head, a softmax per row, then scores·V; one goroutine",
	EmitGo: func(f *jen.File, name string, shape []int) { emitNaive(f, name, shape, false) },
}}

// causalBaselines are TemplateCausal's: the naive baseline with the mask.
var causalBaselines = []kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: the lower-triangular S×S scores per head, a softmax per row, then scores·V; one goroutine",
	EmitGo: func(f *jen.File, name string, shape []int) { emitNaive(f, name, shape, true) },
}}

// emitNaive emits attention as a Go programmer would write it without a
// tuner, straight from the formula: a function of the shape known only at
// run time that, per head, materialises the S×S score matrix Q·Kᵀ/√D, takes
// the softmax of each row (math.Exp in float64, a float64 sum, as in the
// softmax baseline), and multiplies the result by V with i-j-x loops; no
// vectors, one goroutine. The kernel called name passes the shape to it.
// With causal, row i of the scores holds only keys j ≤ i, and the softmax
// and the product with V run over those alone.
func emitNaive(f *jen.File, name string, shape []int, causal bool) {
	b, h, s, d := checkShape(shape)
	impl := name + "Attention"
	id := jen.Id
	// keys is the length of row i of the scores, rowEnd where it ends.
	what, keys := "", id("s")
	rowEnd := jen.Parens(id("i").Op("+").Lit(1)).Op("*").Id("s")
	if causal {
		what, keys = ", causal (query i attends to keys j ≤ i)", id("i").Op("+").Lit(1)
		rowEnd = id("i").Op("*").Id("s").Op("+").Add(keys)
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√D)·v of the %d×%d×%d×%d [B][H][S][D] "+
		"tensors q, k and v%s, with plain Go (%s); autotune bench compares tuned kernels with it.", name, b, h, s, d, what, impl)))
	f.Func().Id(name).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32()).Block(
		id(impl).Call(id("out"), id("q"), id("k"), id("v"), jen.Lit(b), jen.Lit(h), jen.Lit(s), jen.Lit(d)),
	)
	f.Line()

	row := func(x jen.Code, i string) *jen.Statement {
		return jen.Add(x).Index(id("base").Op("+").Id(i).Op("*").Id("d"), id("base").Op("+").Parens(id(i).Op("+").Lit(1)).Op("*").Id("d"))
	}
	f.Add(golang.Comment(impl + " computes attention for b·h heads of s rows of d values, one head at a time."))
	f.Func().Id(impl).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32(), jen.List(id("b"), id("h"), id("s"), id("d")).Int()).Block(
		id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Float64().Call(id("d")))),
		id("scores").Op(":=").Make(jen.Index().Float32(), id("s").Op("*").Id("s")),
		jen.For(id("bh").Op(":=").Range().Id("b").Op("*").Id("h")).Block(
			id("base").Op(":=").Id("bh").Op("*").Id("s").Op("*").Id("d"),
			jen.Comment("scores = q·kᵀ/√d"),
			jen.For(id("i").Op(":=").Range().Id("s")).Block(
				id("qi").Op(":=").Add(row(id("q"), "i")),
				jen.For(id("j").Op(":=").Range().Add(keys)).Block(
					id("kj").Op(":=").Add(row(id("k"), "j")),
					jen.Var().Id("dot").Float32(),
					jen.For(jen.List(id("x"), id("qx")).Op(":=").Range().Id("qi")).Block(
						id("dot").Op("+=").Id("qx").Op("*").Id("kj").Index(id("x")),
					),
					id("scores").Index(id("i").Op("*").Id("s").Op("+").Id("j")).Op("=").Id("dot").Op("*").Id("scale"),
				),
			),
			jen.Comment("softmax of each row"),
			jen.For(id("i").Op(":=").Range().Id("s")).Block(
				id("r").Op(":=").Id("scores").Index(id("i").Op("*").Id("s"), rowEnd),
				id("m").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
				jen.For(jen.List(id("_"), id("x")).Op(":=").Range().Id("r")).Block(
					id("m").Op("=").Max(id("m"), id("x")),
				),
				jen.Var().Id("sum").Float64(),
				jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("r")).Block(
					id("e").Op(":=").Qual("math", "Exp").Call(jen.Float64().Call(id("x").Op("-").Id("m"))),
					id("r").Index(id("j")).Op("=").Float32().Call(id("e")),
					id("sum").Op("+=").Id("e"),
				),
				id("inv").Op(":=").Float32().Call(jen.Lit(1).Op("/").Id("sum")),
				jen.For(id("j").Op(":=").Range().Id("r")).Block(
					id("r").Index(id("j")).Op("*=").Id("inv"),
				),
			),
			jen.Comment("out = scores·v"),
			jen.For(id("i").Op(":=").Range().Id("s")).Block(
				id("o").Op(":=").Add(row(id("out"), "i")),
				jen.Clear(id("o")),
				jen.For(id("j").Op(":=").Range().Add(keys)).Block(
					id("p").Op(":=").Id("scores").Index(id("i").Op("*").Id("s").Op("+").Id("j")),
					id("vj").Op(":=").Add(row(id("v"), "j")),
					jen.For(jen.List(id("x"), id("vx")).Op(":=").Range().Id("vj")).Block(
						id("o").Index(id("x")).Op("+=").Id("p").Op("*").Id("vx"),
					),
				),
			),
		),
	)
}
