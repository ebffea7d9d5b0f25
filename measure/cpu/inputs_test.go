package cpu

import (
	"context"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// emitNoMaxSoftmax emits a softmax that does not subtract the row's max
// before exp: right for moderate logits, NaN once exp overflows.
func emitNoMaxSoftmax(f *jen.File, name string, shape []int, _ schedule.Config) {
	f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("in0")).Index().Float32()).Block(
		jen.Const().Id("cols").Op("=").Lit(shape[1]),
		jen.For(jen.Id("r").Op(":=").Range().Lit(shape[0])).Block(
			jen.List(jen.Id("x"), jen.Id("y")).Op(":=").List(
				jen.Id("in0").Index(jen.Id("r").Op("*").Id("cols").Op(":").Parens(jen.Id("r").Op("+").Lit(1)).Op("*").Id("cols")),
				jen.Id("out").Index(jen.Id("r").Op("*").Id("cols").Op(":").Parens(jen.Id("r").Op("+").Lit(1)).Op("*").Id("cols"))),
			jen.Var().Id("sum").Float32(),
			jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id("x")).Block(
				jen.Id("y").Index(jen.Id("i")).Op("=").Float32().Call(jen.Qual("math", "Exp").Call(jen.Float64().Call(jen.Id("v")))),
				jen.Id("sum").Op("+=").Id("y").Index(jen.Id("i")),
			),
			jen.For(jen.Id("i").Op(":=").Range().Id("y")).Block(jen.Id("y").Index(jen.Id("i")).Op("/=").Id("sum")),
		),
	)
}

// A softmax without max-subtraction passes on logits in ±[0.125, 4], so a
// check on that one input set lets it through; softmax's large set (logits
// in the hundreds) catches it as wrong_answer. A correct softmax kernel
// passes every set.
func TestInputSetsCatchNoMaxSoftmax(t *testing.T) {
	needGo(t)
	shape := []int{8, 33}
	wrong := softmax.Template
	wrong.Space, wrong.Go = nil, kernels.GoFunc(func(f *jen.File, k kernels.Kernel) []byte {
		emitNoMaxSoftmax(f, k.Name, k.Shape, k.Config)
		return nil
	})
	uniformOnly := wrong
	uniformOnly.Inputs = softmax.Template.Inputs[:1]
	cfg := validConfig(t, softmax.Template, shape, "vec=1,unroll=1,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached")

	m := New(fastOptions(t))
	for _, tt := range []struct {
		name string
		tmpl kernels.Template
		want want
	}{
		{"no max-subtraction, every set", wrong, want{measure.StatusWrongAnswer, []string{"input set large: ", "want "}}},
		{"no max-subtraction, uniform set only", uniformOnly, want{measure.StatusOK, nil}},
		{"correct", softmax.Template, want{measure.StatusOK, nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := measure.Batch{Template: tt.tmpl, Shape: shape, Target: batchOf(nil).Target, Configs: []schedule.Config{cfg}}
			got, err := m.Measure(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			check(t, b, got, []want{tt.want})
		})
	}
}
