package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// An epilogue is what the kernel does to each tile of C in registers after
// its last slice of K, before storing it.
type epilogue int

const (
	noEpilogue       epilogue = iota // C = A·B
	biasEpilogue                     // C = A·B + bias
	biasReLUEpilogue                 // C = max(0, A·B + bias)
)

func (e epilogue) String() string {
	switch e {
	case biasEpilogue:
		return "bias"
	case biasReLUEpilogue:
		return "bias+relu"
	}
	return "none"
}

// formula is what the kernel computes, in the words of generated comments.
func (e epilogue) formula() string {
	switch e {
	case biasEpilogue:
		return "c = a·b + bias"
	case biasReLUEpilogue:
		return "c = max(0, a·b + bias)"
	}
	return "c = a·b"
}

// The revisions of the epilogue templates, bumped by hand like revision
// when their emitted code changes (see the package doc). Changing the
// emitter of plain GEMM changes theirs too, so bump them with it.
const (
	biasRevision     = "gemm-bias-3"
	biasReLURevision = "gemm-bias-relu-3"
)

// BiasTemplate is the float32 matrix product with a bias, C = A·B + bias:
// for a shape [M, N, K], A (in0) is a row-major M×K matrix, B (in1) a
// row-major K×N matrix and bias (in2) a vector of N elements added to every
// row of the product, and the kernel writes the row-major M×N matrix C
// (out). The bias is added in registers, as each tile of C is stored after
// its last slice of K.
var BiasTemplate = epilogueTemplate(biasEpilogue, kernels.Op{
	Name: "gemm_bias", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
	Summary: "C = A·B + bias for row-major M×K and K×N matrices and an N-vector bias added to every row",
}, biasRevision)

// BiasReLUTemplate is BiasTemplate followed by a ReLU, C = max(0, A·B +
// bias), also applied in registers.
var BiasReLUTemplate = epilogueTemplate(biasReLUEpilogue, kernels.Op{
	Name: "gemm_bias_relu", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
	Summary: "C = max(0, A·B + bias) for row-major M×K and K×N matrices and an N-vector bias",
}, biasReLURevision)

// epilogueTemplate returns the template of GEMM with the epilogue e: the
// knobs, constraints and tolerance of Template, the epilogue's reference,
// work and baselines. The op is built here rather than looked up, so that
// the package does not depend on kernels' list of ops having it.
func epilogueTemplate(e epilogue, op kernels.Op, rev string) kernels.Template {
	return kernels.Template{
		Op:      op,
		Version: versionOf(rev, space),
		Space:   space,
		Args: func(shape []int) (ins []int, out int) {
			m, n, k := checkShape(shape)
			return []int{m * k, k * n, n}, m * n
		},
		Reference: func(shape []int, ins [][]float32, out []float64) { referenceEpilogue(shape, ins, out, e) },
		Tolerance: tolerance,
		FLOPs: func(shape []int) float64 {
			m, n, k := checkShape(shape)
			f := 2*float64(m)*float64(n)*float64(k) + float64(m)*float64(n)
			if e == biasReLUEpilogue {
				f += float64(m) * float64(n)
			}
			return f
		},
		Bytes: func(shape []int) float64 {
			m, n, k := checkShape(shape)
			return 4 * (float64(m)*float64(k) + float64(k)*float64(n) + float64(n) + float64(m)*float64(n))
		},
		EmitGo: func(f *jen.File, name string, shape []int, cfg schedule.Config) {
			emitEpilogue(f, name, shape, cfg, e)
		},
		Features:  features,
		EmitAsm:   func(name string, shape []int, cfg schedule.Config) []byte { return emitAsm(name, shape, cfg, e) },
		Inputs:    inputs,
		Baselines: epilogueBaselines(e),
	}
}

// referenceEpilogue computes the product in float64 as reference does, then
// adds bias (ins[2]) to every row and, for ReLU, takes the maximum with 0.
func referenceEpilogue(shape []int, ins [][]float32, out []float64, e epilogue) {
	m, n, _ := checkShape(shape)
	reference(shape, ins, out)
	bias := ins[2][:n]
	for i := range m {
		c := out[i*n : (i+1)*n]
		for j, x := range bias {
			c[j] += float64(x)
			if e == biasReLUEpilogue {
				c[j] = max(c[j], 0)
			}
		}
	}
}

// epilogueBaselines are naive and gonum as for Template, each followed by a
// plain Go loop that applies the epilogue to c.
func epilogueBaselines(e epilogue) []kernels.Baseline {
	out := make([]kernels.Baseline, len(baselines))
	for i, b := range baselines {
		emit := b.EmitGo
		b.Doc += fmt.Sprintf(", then a Go loop for the %s epilogue", e)
		b.EmitGo = func(f *jen.File, name string, shape []int) {
			emit(f, name+"Product", shape)
			f.Line()
			emitEpilogueLoop(f, name, name+"Product", shape, e)
		}
		out[i] = b
	}
	return out
}

// emitEpilogueLoop emits the kernel called name: it calls product, the
// kernel c = a·b, then adds bias to every row of c in a plain Go loop and,
// for ReLU, takes the maximum with 0.
func emitEpilogueLoop(f *jen.File, name, product string, shape []int, e epilogue) {
	m, n, k := checkShape(shape)
	id := jen.Id
	val := id("ci").Index(id("j")).Op("+").Id("x")
	if e == biasReLUEpilogue {
		val = jen.Max(val, jen.Lit(0))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes %s for the row-major %d×%d matrix a, %d×%d matrix b and "+
		"%d-vector bias: %s, then a loop over c; autotune bench compares tuned kernels with it.",
		name, e.formula(), m, k, k, n, n, product)))
	f.Func().Id(name).Params(jen.List(id("c"), id("a"), id("b"), id("bias")).Index().Float32()).Block(
		jen.Const().List(id("m"), id("n")).Op("=").List(jen.Lit(m), jen.Lit(n)),
		id(product).Call(id("c"), id("a"), id("b")),
		id("bias").Op("=").Id("bias").Index(jen.Empty(), id("n")),
		jen.For(id("i").Op(":=").Range().Id("m")).Block(
			id("ci").Op(":=").Id("c").Index(id("i").Op("*").Id("n"), jen.Parens(id("i").Op("+").Lit(1)).Op("*").Id("n")),
			jen.For(jen.List(id("j"), id("x")).Op(":=").Range().Id("bias")).Block(
				id("ci").Index(id("j")).Op("=").Add(val),
			),
		),
	)
}
