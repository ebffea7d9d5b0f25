package gemm

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// baselines are what autotune bench compares the tuned kernel with:
// naive, gonum and, in builds with their tags, openblas and libxsmm
// (Template adds onednn, onednnBaselines, in builds with the onednn tag:
// the epilogue templates have their own, which fuse the epilogue). They are not
// the tuned code, so they are not part of Version: changing one changes no
// tuning record.
var baselines = append([]kernels.Baseline{{
	Name:   "naive",
	Doc:    "plain Go: i-k-j loops over the rows of c, one goroutine",
	EmitGo: emitNaive,
	Skip:   skipNaive,
}, {
	Name:     "gonum",
	Doc:      "gonum's pure-Go BLAS, blas32.Gemm (blocked, on GOMAXPROCS goroutines)",
	EmitGo:   emitGonum,
	Requires: []string{gonumModule},
}}, slices.Concat(openblasBaselines, libxsmmBaselines)...)

// gonumModule is the module of the gonum baseline; autotune's go.mod
// requires it, and the bench module requires the same version.
const gonumModule = "gonum.org/v1/gonum"

// naiveMaxFLOPs is the largest product the naive baseline is run for. At
// 0.5–1 GFLOP/s it takes 20–40 s a call at 2e10 FLOPs (about 2150³), and a
// bench times every entry some forty times, warm-up included.
const naiveMaxFLOPs = 2e10

// skipNaive leaves the naive baseline out of benches of products larger
// than naiveMaxFLOPs.
func skipNaive(shape []int) string {
	m, n, k := checkShape(shape)
	if f := 2 * float64(m) * float64(n) * float64(k); f > naiveMaxFLOPs {
		return fmt.Sprintf("%.3g FLOPs a call, more than the %.0e the naive loops are run for", f, naiveMaxFLOPs)
	}
	return ""
}

// emitGonum emits a call of gonum's blas32.Gemm on the row-major matrices
// as they are: no copies, C = 1·A·B + 0·C. blas32 uses gonum's own
// implementation (gonum.org/v1/gonum/blas/gonum) unless a program sets
// another, which the bench module does not.
func emitGonum(f *jen.File, name string, shape []int) {
	m, n, k := checkShape(shape)
	const blas32, blas = gonumModule + "/blas/blas32", gonumModule + "/blas"
	general := func(s string, rows, cols int) jen.Code {
		return jen.Qual(blas32, "General").Values(jen.Dict{
			jen.Id("Rows"): jen.Lit(rows), jen.Id("Cols"): jen.Lit(cols), jen.Id("Stride"): jen.Lit(cols), jen.Id("Data"): jen.Id(s),
		})
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes c = a·b for the row-major %d×%d matrix a and %d×%d matrix b "+
		"with gonum's blas32.Gemm; autotune bench compares tuned kernels with it.", name, m, k, k, n)))
	f.Func().Id(name).Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b")).Index().Float32()).Block(
		jen.Qual(blas32, "Gemm").Call(jen.Qual(blas, "NoTrans"), jen.Qual(blas, "NoTrans"), jen.Lit(1),
			general("a", m, k), general("b", k, n), jen.Lit(0), general("c", m, n)),
	)
}

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
