package norm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// A kernel of bf16 or f16 stores its elements in 16 bits and computes in
// float32 with the float32 kernel's own rows: its rows function
// (halfRowsFn) decodes a block of rows of x, and gamma and beta once, into
// float32 scratch, runs the float32 rows on the block and encodes the
// block of y. The scratch stays in the caches, so the kernel reads and
// writes main memory in 16 bits, half the bytes of float32, which is what
// bounds a norm; the conversions are the price, in Go assembly on whole
// vectors (codegen/goasm.Half) when the kernel's rows are vectors.

// halfBlock is the elements of a block of rows a 16-bit kernel converts
// at a time, or one row if longer: four 16 KiB float32 buffers (x, y,
// gamma and beta) fit in a core's L1 and L2 caches.
const halfBlock = 4096

func (k kernel) halfRowsFn() string { return k.name + "HalfRows" }
func (k kernel) scratch() string    { return k.name + "Scratch" }

// elem is the element type of the kernel's slices.
func (k kernel) elem() jen.Code { return kernels.GoElem(k.half.DType) }

// emitHalfRows emits the conversions and the rows function of a 16-bit
// kernel, which RowSplit calls in place of rowsFn.
func (k kernel) emitHalfRows(f *jen.File) {
	k.half.Emit(f)
	id := jen.Id
	cols := id("cols")
	params := []jen.Code{jen.List(k.slices()...).Index().Uint16()}
	var body []jen.Code
	if k.generic {
		params = append(params, jen.List(id("cols"), id("lo"), id("hi")).Int())
		body = append(body,
			jen.If(cols.Clone().Op("==").Lit(0)).Block(jen.Return()),
			id("block").Op(":=").Max(jen.Lit(1), jen.Lit(halfBlock).Op("/").Add(cols)),
		)
	} else {
		params = append(params, jen.List(id("lo"), id("hi")).Int())
		body = append(body, jen.Const().Defs(
			id("cols").Op("=").Lit(k.cols),
			id("block").Op("=").Lit(max(1, halfBlock/k.cols)),
		))
	}
	// Scratch: x and y of a block, then gamma (and beta) of one row.
	vecs := 1
	if k.layer {
		vecs = 2
	}
	decode, encode := k.half.Decode(), k.half.Encode()
	body = append(body,
		id("p").Op(":=").Id(k.scratch()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		id("need").Op(":=").Lit(2).Op("*").Id("block").Op("*").Add(cols).Op("+").Lit(vecs).Op("*").Add(cols),
		jen.If(jen.Cap(jen.Op("*").Id("p")).Op("<").Id("need")).Block(
			jen.Op("*").Id("p").Op("=").Make(jen.Index().Float32(), id("need")),
		),
		id("s").Op(":=").Parens(jen.Op("*").Id("p")).Index(jen.Empty(), id("need")),
		jen.List(id("xs"), id("ys"), id("vs")).Op(":=").List(
			id("s").Index(jen.Empty(), id("block").Op("*").Add(cols)),
			id("s").Index(id("block").Op("*").Add(cols), jen.Lit(2).Op("*").Id("block").Op("*").Add(cols)),
			id("s").Index(jen.Lit(2).Op("*").Id("block").Op("*").Add(cols), jen.Empty()),
		),
		id("gs").Op(":=").Id("vs").Index(jen.Empty(), cols),
		id(decode).Call(id("gs"), id("gamma").Index(jen.Empty(), cols)),
	)
	rowArgs := []jen.Code{id("ys"), id("xs"), id("gs")}
	if k.layer {
		body = append(body,
			id("bs").Op(":=").Id("vs").Index(cols, jen.Lit(2).Op("*").Add(cols)),
			id(decode).Call(id("bs"), id("beta").Index(jen.Empty(), cols)),
		)
		rowArgs = append(rowArgs, id("bs"))
	}
	if k.generic {
		rowArgs = append(rowArgs, cols)
	}
	rowArgs = append(rowArgs, jen.Lit(0), id("n"))
	span := func(s string) jen.Code {
		return id(s).Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols))
	}
	body = append(body,
		jen.For(id("lo").Op("<").Id("hi")).Block(
			id("n").Op(":=").Min(id("hi").Op("-").Id("lo"), id("block")),
			id(decode).Call(id("xs"), span("x")),
			id(k.rowsFn()).Call(rowArgs...),
			id(encode).Call(span("y"), id("ys").Index(jen.Empty(), id("n").Op("*").Add(cols))),
			id("lo").Op("+=").Id("n"),
		),
		id(k.scratch()).Dot("Put").Call(id("p")),
	)
	f.Add(golang.Comment(fmt.Sprintf("%s scratch: float32 buffers of the blocks %s converts, reused from call to call so that a call allocates nothing once warm.",
		k.scratch(), k.halfRowsFn())))
	f.Var().Id(k.scratch()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	f.Add(golang.Comment(fmt.Sprintf("%s normalises rows lo to hi-1 of %s elements a block of rows at a time: "+
		"decoded into float32, normalised by %s, encoded back.", k.halfRowsFn(), k.half.DType, k.rowsFn())))
	f.Func().Id(k.halfRowsFn()).Params(params...).Block(body...)
}
