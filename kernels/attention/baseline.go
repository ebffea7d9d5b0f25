package attention

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// baselines are what autotune bench compares the tuned kernel with: naive,
// gonum and, in builds with the openblas tag, openblas (the composition
// of gonum's on OpenBLAS's sgemm), in builds with the onednn tag, onednn. They are not the tuned code, so they are not part of Version: changing one
// changes no tuning record.
var baselines = append([]kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: the S×S scores per head, a softmax per row, then scores·V; one goroutine",
	EmitGo: func(f *jen.File, name string, shape []int) { emitNaive(f, name, shape, false) },
	Skip:   func(shape []int) string { return skipNaive(shape, false) },
}, {
	Name:     "gonum",
	Doc:      "composition: per head, scores = Q·Kᵀ/√D with gonum's blas32.Gemm into an S×S buffer, a plain softmax per row, then blas32.Gemm scores·V",
	EmitGo:   func(f *jen.File, name string, shape []int) { emitComposition(f, name, shape, false, gonumGemm) },
	Requires: []string{gonumModule},
	Skip:     skipScores,
}}, append(openblasBaselines(false), onednnBaselines(false)...)...)

// causalBaselines are TemplateCausal's: the same with the mask.
var causalBaselines = append([]kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: the lower-triangular S×S scores per head, a softmax per row, then scores·V; one goroutine",
	EmitGo: func(f *jen.File, name string, shape []int) { emitNaive(f, name, shape, true) },
	Skip:   func(shape []int) string { return skipNaive(shape, true) },
}, {
	Name: "gonum",
	Doc: "composition: per head, the full S×S scores = Q·Kᵀ/√D with gonum's blas32.Gemm, masked above the diagonal, " +
		"a plain softmax per row, then blas32.Gemm scores·V",
	EmitGo:   func(f *jen.File, name string, shape []int) { emitComposition(f, name, shape, true, gonumGemm) },
	Requires: []string{gonumModule},
	Skip:     skipScores,
}}, append(openblasBaselines(true), onednnBaselines(true)...)...)

// gonumModule is the module of the gonum baseline; autotune's go.mod
// requires it, and the bench module requires the same version.
const gonumModule = "gonum.org/v1/gonum"

// naiveMaxFLOPs is the most work a call of the naive baseline is run for,
// as gemm's: at 0.7 GFLOP/s (1x8x1024x64, 2.1e9 FLOPs, takes about 3 s) a
// call of 2e10 FLOPs takes half a minute, and a bench times every entry
// some forty times, warm-up included.
const naiveMaxFLOPs = 2e10

// maxScoreBytes bounds the S×S float32 score matrix the naive and gonum
// baselines allocate for a call: 1 GiB, S = 16384.
const maxScoreBytes = 1 << 30

// skipNaive leaves the naive baseline out of benches whose scores are
// larger than maxScoreBytes or whose call does more than naiveMaxFLOPs of
// the work it does: the two products over all S² pairs of a head, or over
// the S(S+1)/2 pairs j ≤ i with causal (Template's and TemplateCausal's
// FLOPs, which this cannot call: they are initialised from these lists).
func skipNaive(shape []int, causal bool) string {
	if why := skipScores(shape); why != "" {
		return why
	}
	b, h, s, d := checkShape(shape)
	f := 4 * float64(b) * float64(h) * float64(s) * float64(s) * float64(d)
	if causal {
		f = 2 * float64(b) * float64(h) * float64(d) * float64(s) * float64(s+1)
	}
	if f > naiveMaxFLOPs {
		return fmt.Sprintf("%.3g FLOPs a call, more than the %.0e the naive loops are run for", f, naiveMaxFLOPs)
	}
	return ""
}

// skipScores leaves a baseline that materialises the S×S scores out of
// benches where they take more than maxScoreBytes.
func skipScores(shape []int) string {
	_, _, s, _ := checkShape(shape)
	if n := 4 * float64(s) * float64(s); n > maxScoreBytes {
		return fmt.Sprintf("its S×S scores take %.3g GiB, more than the 1 GiB it is run for", n/(1<<30))
	}
	return ""
}

// A blasLib is the library a composition baseline calls: its name in the
// kernel's doc, and gemm, which returns the call c = alpha·a·op(b) + 0·c
// of row-major float32 matrices, a m×k, op(b) k×n (b n×k, transposed,
// with transB), with the given leading dimensions.
type blasLib struct {
	name string
	gemm func(transB bool, m, n, k, alpha, a, lda, b, ldb, c, ldc jen.Code) jen.Code
}

// blasTrans returns gonum's blas.Trans or blas.NoTrans, the flags both
// libraries' calls take.
func blasTrans(trans bool) jen.Code {
	if trans {
		return jen.Qual(gonumModule+"/blas", "Trans")
	}
	return jen.Qual(gonumModule+"/blas", "NoTrans")
}

// gonumGemm is gonum's blas32.Gemm, on its General matrices.
var gonumGemm = blasLib{name: "gonum's blas32.Gemm", gemm: func(transB bool, m, n, k, alpha, a, lda, b, ldb, c, ldc jen.Code) jen.Code {
	const blas32 = gonumModule + "/blas/blas32"
	general := func(rows, cols, stride, data jen.Code) jen.Code {
		return jen.Qual(blas32, "General").Values(jen.Dict{
			jen.Id("Rows"): rows, jen.Id("Cols"): cols, jen.Id("Stride"): stride, jen.Id("Data"): data,
		})
	}
	bRows, bCols := k, n
	if transB {
		bRows, bCols = n, k
	}
	return jen.Qual(blas32, "Gemm").Call(blasTrans(false), blasTrans(transB), alpha,
		general(m, k, lda, a), general(bRows, bCols, ldb, b), jen.Lit(0), general(m, n, ldc, c))
}}

// emitComposition emits attention as a Go programmer with a BLAS would compose it,
// straight from the formula: a function of the shape known only at run time
// that allocates one S×S float32 score matrix per call (the composition's
// honest memory cost; it is reused for the heads of the call, not across
// calls) and, per head, computes scores = Q·Kᵀ/√D with blas32.Gemm (K
// transposed by the call, 1/√D as alpha), takes the softmax of each row in
// place (float32 maximum, math.Exp in float64, a float64 sum, then a
// multiply by the float32 reciprocal, as the naive baseline), and writes
// O = scores·V with lib's GEMM. gonum's Gemm splits its work among
// GOMAXPROCS goroutines, OpenBLAS's among its own threads; the softmax
// runs on one. blas32 uses gonum's own implementation unless a program
// sets another, which the bench module does not: the openblas baseline
// calls OpenBLAS by name instead, so that the two can share a module.
//
// With causal, it computes the full product, as a composition of library
// calls does (BLAS has no product that writes only a triangle of a general
// one), and masks it: the softmax of row i runs over keys j ≤ i alone and
// the weights above the diagonal are set to 0, so the second product adds
// nothing for them. Both products do the full S²·D work.
func emitComposition(f *jen.File, name string, shape []int, causal bool, lib blasLib) {
	b, h, s, d := checkShape(shape)
	impl := name + "Attention"
	id := jen.Id
	what := ""
	if causal {
		what = ", causal (query i attends to keys j ≤ i)"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√D)·v of the %d×%d×%d×%d [B][H][S][D] "+
		"tensors q, k and v%s, composed from %s and a plain softmax (%s); "+
		"autotune bench compares tuned kernels with it.", name, b, h, s, d, what, lib.name, impl)))
	f.Func().Id(name).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32()).Block(
		id(impl).Call(id("out"), id("q"), id("k"), id("v"), jen.Lit(b), jen.Lit(h), jen.Lit(s), jen.Lit(d)),
	)
	f.Line()

	softmax := []jen.Code{
		id("row").Op(":=").Id("scores").Index(id("i").Op("*").Id("s"), jen.Parens(id("i").Op("+").Lit(1)).Op("*").Id("s")),
	}
	if causal {
		softmax = append(softmax,
			jen.Clear(id("row").Index(id("i").Op("+").Lit(1), jen.Empty())),
			id("row").Op("=").Id("row").Index(jen.Empty(), id("i").Op("+").Lit(1)),
		)
	}
	softmax = append(softmax,
		id("m").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
		jen.For(jen.List(id("_"), id("x")).Op(":=").Range().Id("row")).Block(
			id("m").Op("=").Max(id("m"), id("x")),
		),
		jen.Var().Id("sum").Float64(),
		jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("row")).Block(
			id("e").Op(":=").Qual("math", "Exp").Call(jen.Float64().Call(id("x").Op("-").Id("m"))),
			id("row").Index(id("j")).Op("=").Float32().Call(id("e")),
			id("sum").Op("+=").Id("e"),
		),
		id("inv").Op(":=").Float32().Call(jen.Lit(1).Op("/").Id("sum")),
		jen.For(id("j").Op(":=").Range().Id("row")).Block(
			id("row").Index(id("j")).Op("*=").Id("inv"),
		),
	)
	softmaxComment := "softmax of each row, in place"
	if causal {
		softmaxComment = "softmax of each row over keys j ≤ i, in place; weights above the diagonal are 0"
	}
	f.Add(golang.Comment(impl + " computes attention for b·h heads of s rows of d values, one head at a time, " +
		"in one s×s score matrix."))
	f.Func().Id(impl).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32(), jen.List(id("b"), id("h"), id("s"), id("d")).Int()).Block(
		id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Float64().Call(id("d")))),
		id("scores").Op(":=").Make(jen.Index().Float32(), id("s").Op("*").Id("s")),
		jen.For(id("bh").Op(":=").Range().Id("b").Op("*").Id("h")).Block(
			id("head").Op(":=").Id("bh").Op("*").Id("s").Op("*").Id("d"),
			id("span").Op(":=").Func().Params(id("x").Index().Float32()).Index().Float32().Block(
				jen.Return(id("x").Index(id("head"), id("head").Op("+").Id("s").Op("*").Id("d"))),
			),
			jen.Comment("scores = q·kᵀ/√d"),
			lib.gemm(true, id("s"), id("s"), id("d"), id("scale"),
				id("span").Call(id("q")), id("d"), id("span").Call(id("k")), id("d"), id("scores"), id("s")),
			jen.Comment(softmaxComment),
			jen.For(id("i").Op(":=").Range().Id("s")).Block(softmax...),
			jen.Comment("out = scores·v"),
			lib.gemm(false, id("s"), id("d"), id("s"), jen.Lit(1),
				id("scores"), id("s"), id("span").Call(id("v")), id("d"), id("span").Call(id("out")), id("d")),
		),
	)
}

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
