package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// An epilogue is what the kernel does to each tile of C in registers after
// its last slice of K, before storing it: nothing, or add bias (an N-vector,
// the argument after b) to every row and then apply act, when there is
// one, to every element. Its values are noEpilogue, biasEpilogue and
// biasReLUEpilogue; a fused activation (GELU, SiLU) is one more type that
// implements activation, for every code the package writes, and one more
// value here with its op and templates.
type epilogue struct {
	name string // in docs and template versions: "none", "bias", "bias+relu"
	bias bool
	act  activation // nil: none
}

var (
	noEpilogue       = epilogue{name: "none"}                               // C = A·B
	biasEpilogue     = epilogue{name: "bias", bias: true}                   // C = A·B + bias
	biasReLUEpilogue = epilogue{name: "bias+relu", bias: true, act: relu{}} // C = max(0, A·B + bias)
)

func (e epilogue) String() string { return e.name }

// formula is what the kernel computes, in the words of generated comments.
func (e epilogue) formula() string {
	switch {
	case !e.bias:
		return "c = a·b"
	case e.act == nil:
		return "c = a·b + bias"
	}
	return "c = " + e.act.formula("a·b + bias")
}

// An activation is an element-wise function an epilogue applies after the
// bias, in each form of code the package writes and in float64 for the
// reference.
type activation interface {
	// formula is the activation of x in the words of generated comments.
	formula(x string) string
	// reference is the activation of x in float64; flops its work per
	// element, for Op.FLOPs.
	reference(x float64) float64
	flops() float64
	// goScalar is the Go expression of the activation of x, a float32,
	// or a float64 when f64 is set (the emitted reference).
	goScalar(x jen.Code, f64 bool) jen.Code
	// goPrelude returns the statements an archsimd (or, for one lane,
	// scalar) tile runs once before goVector's; they may set x, the
	// register of A, which the epilogue leaves free. goVector returns the
	// statement that applies the activation to the accumulator acc.
	goPrelude(v golang.F32) []jen.Code
	goVector(v golang.F32, acc func() jen.Code) jen.Code
	// asm has an assembly tile (goasm) apply the activation after its
	// bias; it panics for an activation the assembly does not have.
	asm(t *goasm.Tile)
	// cuda is the CUDA C expression of the activation of the float x.
	cuda(x string) string
	// onednn says how the onednn baseline fuses the activation: the end
	// of its doc and the C that appends it to the primitive's attr as a
	// post-op.
	onednn() (doc, postOps string)
}

// relu is max(0, x).
type relu struct{}

func (relu) formula(x string) string { return "max(0, " + x + ")" }

func (relu) reference(x float64) float64 { return max(x, 0) }

func (relu) flops() float64 { return 1 }

func (relu) goScalar(x jen.Code, f64 bool) jen.Code {
	if f64 {
		return jen.Max(x, jen.Lit(0.0))
	}
	return jen.Max(x, jen.Lit(0))
}

// goPrelude holds zero in x, for goVector's maximum.
func (relu) goPrelude(v golang.F32) []jen.Code {
	if v.Scalar() {
		return []jen.Code{jen.Id("x").Op("=").Lit(0)}
	}
	return []jen.Code{jen.Id("x").Op("=").Add(v.Type()).Values()}
}

func (relu) goVector(v golang.F32, acc func() jen.Code) jen.Code {
	return jen.Add(acc()).Op("=").Add(v.Max(acc(), jen.Id("x")))
}

func (relu) asm(t *goasm.Tile) { t.ReLU = true }

func (relu) cuda(x string) string { return "fmaxf(" + x + ", 0.f)" }

func (relu) onednn() (doc, postOps string) {
	return "ReLU as an eltwise post-op", `
		dnnl_post_ops_t po;
		P_ok(dnnl_post_ops_create(&po), "post-ops");
		P_ok(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f), "relu post-op");
		P_ok(dnnl_primitive_attr_set_post_ops(attr, po), "setting post-ops");
		P_ok(dnnl_post_ops_destroy(po), "destroying post-ops");`
}

// The revisions of the epilogue templates, bumped by hand like revision
// when their emitted code changes (see the package doc). Changing the
// emitter of plain GEMM changes theirs too, so bump them with it.
const (
	biasRevision     = "gemm-bias-9"
	biasReLURevision = "gemm-bias-relu-9"
)

// BiasTemplate is the CPU template of BiasOp. The bias is added in
// registers, as each tile of C is stored after its last slice of K.
var BiasTemplate = epilogueTemplate(biasEpilogue, BiasOp, biasRevision, "gemm-bias-4")

// BiasReLUTemplate is the CPU template of BiasReLUOp; the ReLU is also
// applied in registers.
var BiasReLUTemplate = epilogueTemplate(biasReLUEpilogue, BiasReLUOp, biasReLURevision, "gemm-bias-relu-4")

// epilogueTemplate returns the CPU template of GEMM with the epilogue e: the
// knobs and constraints of Template, the epilogue's emitters and baselines;
// rev4 is its revision before the chunks knob (revision4).
func epilogueTemplate(e epilogue, op kernels.Op, rev, rev4 string) kernels.Template {
	return kernels.Template{
		Op:        op,
		Backend:   kernels.CPU,
		Version:   versionOf(rev, space),
		Earlier:   []kernels.Template{revision4(op, rev4)},
		Space:     space,
		Default:   defaultConfig,
		Dominated: kernels.ScalarDominated,
		Features:  features,
		Estimate:  estimate,
		Go:        newPackedEmitter(op, e),
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
	var val jen.Code = id("ci").Index(id("j")).Op("+").Id("x")
	if e.act != nil {
		val = e.act.goScalar(val, false)
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
