package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
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
	biasRevision     = "gemm-bias-4"
	biasReLURevision = "gemm-bias-relu-4"
)

// BiasTemplate is the CPU template of BiasOp. The bias is added in
// registers, as each tile of C is stored after its last slice of K.
var BiasTemplate = epilogueTemplate(biasEpilogue, BiasOp, biasRevision)

// BiasReLUTemplate is the CPU template of BiasReLUOp; the ReLU is also
// applied in registers.
var BiasReLUTemplate = epilogueTemplate(biasReLUEpilogue, BiasReLUOp, biasReLURevision)

// epilogueTemplate returns the CPU template of GEMM with the epilogue e: the
// knobs and constraints of Template, the epilogue's emitters and baselines.
func epilogueTemplate(e epilogue, op kernels.Op, rev string) kernels.Template {
	return kernels.Template{
		Op:        op,
		Backend:   kernels.CPU,
		Version:   versionOf(rev, space),
		Space:     space,
		Default:   defaultConfig,
		Features:  features,
		Go:        goEmitter{e},
		Baselines: epilogueBaselines(e),
	}
}

// epilogueBaselines are those of Template, each followed by a plain Go
// loop that applies the epilogue to c, but for onednn, which fuses it.
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
	return append(out, onednnBaselines(e)...)
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
