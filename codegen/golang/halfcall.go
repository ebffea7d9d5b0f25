package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// HalfCall writes a kernel of bf16 or f16 that runs Inner, the float32
// kernel of the same config, on float32 copies of its arguments: every
// input decoded into pooled scratch, the output computed there and
// encoded, rounded to nearest even:
//
//	func Name(Args… []uint16, Dims… int)
//
// Inner takes the same arguments as []float32. It is the form of ops whose
// work grows faster than their data (GEMM, attention), where converting
// each element once costs little beside the arithmetic; row-wise kernels,
// bound by memory, convert a block of rows at a time instead (HalfRows).
// The conversions (Half) are the caller's to add once.
type HalfCall struct {
	Name, Inner string
	Half        Half
	Args        []string // the output, then the inputs
	Dims        []string // extents passed on to Inner; none for a specialised kernel
}

func (h HalfCall) scratch() string { return h.Name + "Scratch" }

// Emit adds the function and its pool to f.
func (h HalfCall) Emit(f *jen.File) {
	id := jen.Id
	var need *jen.Statement
	for i, a := range h.Args {
		if i == 0 {
			need = jen.Len(id(a))
		} else {
			need = need.Op("+").Len(id(a))
		}
	}
	// The locals' names are unlike any op's argument or extent names.
	body := []jen.Code{
		id("pooled").Op(":=").Id(h.scratch()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		id("total").Op(":=").Add(need),
		jen.If(jen.Cap(jen.Op("*").Id("pooled")).Op("<").Id("total")).Block(
			jen.Op("*").Id("pooled").Op("=").Make(jen.Index().Float32(), id("total")),
		),
		id("rest").Op(":=").Parens(jen.Op("*").Id("pooled")).Index(jen.Empty(), id("total")),
	}
	var call []jen.Code
	for i, a := range h.Args {
		body = append(body,
			id(a+"32").Op(":=").Id("rest").Index(jen.Empty(), jen.Len(id(a))),
			id("rest").Op("=").Id("rest").Index(jen.Len(id(a)), jen.Empty()),
		)
		if i > 0 {
			body = append(body, id(h.Half.Decode()).Call(id(a+"32"), id(a)))
		}
		call = append(call, id(a+"32"))
	}
	call = append(call, ids(h.Dims)...)
	body = append(body,
		id(h.Inner).Call(call...),
		id(h.Half.Encode()).Call(id(h.Args[0]), id(h.Args[0]+"32")),
		id(h.scratch()).Dot("Put").Call(id("pooled")),
	)
	f.Add(Comment(fmt.Sprintf("%s holds the float32 copies of %s's arguments, reused from call to call so that a call allocates nothing once warm.",
		h.scratch(), h.Name)))
	f.Var().Id(h.scratch()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	params := []jen.Code{jen.List(ids(h.Args)...).Index().Uint16()}
	if len(h.Dims) > 0 {
		params = append(params, jen.List(ids(h.Dims)...).Int())
	}
	f.Add(Comment(fmt.Sprintf("%s computes in float32 with %s on its arguments decoded from %s, and encodes the output back to nearest even. "+
		"The slices hold %s as their 16 bits.", h.Name, h.Inner, h.Half.DType, h.Half.DType)))
	f.Func().Id(h.Name).Params(params...).Block(body...)
}
