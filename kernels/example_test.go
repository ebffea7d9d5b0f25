package kernels_test

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// scale is the Go emitter of a CPU template for an op out = 2·in, whose
// kernels call no assembly: one function serves the specialised and the
// shape-generic form, as the Kernel asks.
func scale(f *jen.File, k kernels.Kernel) []byte {
	params := []jen.Code{jen.List(jen.Id("out"), jen.Id("in0")).Index().Float32()}
	var n jen.Code = jen.Id("n")
	if k.Shape == nil {
		params = append(params, jen.Id("n").Int())
	} else {
		n = jen.Lit(k.Shape[0])
	}
	f.Func().Id(k.Name).Params(params...).Block(
		jen.For(jen.Id("i").Op(":=").Range().Add(n)).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Lit(k.Config.Int("factor")).Op("*").Id("in0").Index(jen.Id("i"))))
	return nil
}

// A template's Go emitter is asked for one Kernel at a time; a nil Shape
// asks for the shape-generic form.
func ExampleGoFunc() {
	var emitter kernels.GoEmitter = kernels.GoFunc(scale)
	cfg, err := schedule.ParseConfig("factor=2")
	if err != nil {
		panic(err)
	}
	f := jen.NewFile("k")
	emitter.EmitGo(f, kernels.Kernel{Name: "Scale8", Shape: []int{8}, Config: cfg, Arch: kernels.AMD64})
	emitter.EmitGo(f, kernels.Kernel{Name: "Scale", Config: cfg, Arch: kernels.AMD64})
	fmt.Printf("%#v", f)
	// Output:
	// package k
	//
	// func Scale8(out, in0 []float32) {
	// 	for i := range 8 {
	// 		out[i] = 2 * in0[i]
	// 	}
	// }
	// func Scale(out, in0 []float32, n int) {
	// 	for i := range n {
	// 		out[i] = 2 * in0[i]
	// 	}
	// }
}
