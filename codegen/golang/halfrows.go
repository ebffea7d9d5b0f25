package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// HalfRows writes the rows function of a row-wise kernel (softmax, the
// norms) that stores bf16 or f16 and computes in float32 with the float32
// kernel's own rows function: it decodes a block of rows of each row
// argument, and the per-column vectors once, into float32 scratch, runs
// RowsFn on the block and encodes the block of the output. The scratch
// stays in the caches, so the kernel moves half of float32's bytes
// through memory, which is what bounds these kernels; the conversions
// (Half) are the price.
//
// The function is Name(Out, Rows…, Vecs… []uint16, lo, hi int), with
// cols int before lo in a generic kernel (Cols 0), and calls
// RowsFn(out, rows…, vecs… []float32, [cols,] 0, n) on each block, the
// slices in that order. Its scratch comes from a sync.Pool named
// Name+"Scratch", so that a warm call allocates nothing.
type HalfRows struct {
	Name   string
	Half   Half
	RowsFn string
	Out    string   // the output, one row per row
	Rows   []string // inputs of one row per row
	Vecs   []string // inputs of one row for all rows (gamma, beta)
	Cols   int      // the row length of a specialised kernel; 0: an argument
	Block  int      // elements converted at a time, or one row if longer; 0: HalfBlock
}

// HalfBlock is HalfRows' default block: 4096 elements, whose float32
// scratch (16 KiB an argument) stays in a core's L1 and L2 caches.
const HalfBlock = 4096

func (h HalfRows) scratch() string { return h.Name + "Scratch" }

// Emit adds the function and its pool to f; the conversions (Half.Emit)
// are the caller's to add once.
func (h HalfRows) Emit(f *jen.File) {
	if h.Block == 0 {
		h.Block = HalfBlock
	}
	id := jen.Id
	cols := id("cols")
	var params, body []jen.Code
	slices := append(append([]string{h.Out}, h.Rows...), h.Vecs...)
	params = append(params, jen.List(ids(slices)...).Index().Uint16())
	if h.Cols == 0 {
		params = append(params, jen.List(id("cols"), id("lo"), id("hi")).Int())
		body = append(body,
			jen.If(cols.Clone().Op("==").Lit(0)).Block(jen.Return()),
			id("block").Op(":=").Max(jen.Lit(1), jen.Lit(h.Block).Op("/").Add(cols)),
		)
	} else {
		params = append(params, jen.List(id("lo"), id("hi")).Int())
		body = append(body, jen.Const().Defs(
			id("cols").Op("=").Lit(h.Cols),
			id("block").Op("=").Lit(max(1, h.Block/h.Cols)),
		))
	}
	// The scratch: a block of each row argument, the output's included,
	// then a row of each vector.
	rowArgs := 1 + len(h.Rows)
	blockLen := id("block").Op("*").Add(cols)
	body = append(body,
		id("p").Op(":=").Id(h.scratch()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		id("need").Op(":=").Lit(rowArgs).Op("*").Add(blockLen).Op("+").Lit(len(h.Vecs)).Op("*").Add(cols),
		jen.If(jen.Cap(jen.Op("*").Id("p")).Op("<").Id("need")).Block(
			jen.Op("*").Id("p").Op("=").Make(jen.Index().Float32(), id("need")),
		),
		id("s").Op(":=").Parens(jen.Op("*").Id("p")).Index(jen.Empty(), id("need")),
	)
	decode, encode := h.Half.Decode(), h.Half.Encode()
	part := func(i int, n jen.Code) jen.Code { // scratch part i of length n
		return id("s").Index(jen.Lit(i).Op("*").Add(n), jen.Lit(i+1).Op("*").Add(n))
	}
	scratchOf := func(name string) string { return name + "32" }
	var call []jen.Code
	for i, name := range slices[:rowArgs] {
		body = append(body, id(scratchOf(name)).Op(":=").Add(part(i, blockLen.Clone())))
		call = append(call, id(scratchOf(name)))
	}
	if len(h.Vecs) > 0 {
		body = append(body, id("vs").Op(":=").Id("s").Index(jen.Lit(rowArgs).Op("*").Add(blockLen.Clone()), jen.Empty()))
	}
	for i, name := range h.Vecs {
		body = append(body,
			id(scratchOf(name)).Op(":=").Id("vs").Index(jen.Lit(i).Op("*").Add(cols), jen.Lit(i+1).Op("*").Add(cols)),
			id(decode).Call(id(scratchOf(name)), id(name).Index(jen.Empty(), cols)),
		)
		call = append(call, id(scratchOf(name)))
	}
	if h.Cols == 0 {
		call = append(call, cols)
	}
	call = append(call, jen.Lit(0), id("n"))
	span := func(s string) jen.Code {
		return id(s).Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols))
	}
	loop := []jen.Code{id("n").Op(":=").Min(id("hi").Op("-").Id("lo"), id("block"))}
	for _, name := range h.Rows {
		loop = append(loop, id(decode).Call(id(scratchOf(name)), span(name)))
	}
	loop = append(loop,
		id(h.RowsFn).Call(call...),
		id(encode).Call(span(h.Out), id(scratchOf(h.Out)).Index(jen.Empty(), id("n").Op("*").Add(cols))),
		id("lo").Op("+=").Id("n"),
	)
	body = append(body, jen.For(id("lo").Op("<").Id("hi")).Block(loop...), id(h.scratch()).Dot("Put").Call(id("p")))

	f.Add(Comment(fmt.Sprintf("%s holds the float32 scratch of %s, reused from call to call so that a call allocates nothing once warm.",
		h.scratch(), h.Name)))
	f.Var().Id(h.scratch()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
		id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
	})
	f.Add(Comment(fmt.Sprintf("%s computes rows lo to hi-1 of %s elements a block of rows at a time: "+
		"decoded into float32, computed by %s, encoded back.", h.Name, h.Half.DType, h.RowsFn)))
	f.Func().Id(h.Name).Params(params...).Block(body...)
}

func ids(names []string) []jen.Code {
	out := make([]jen.Code, len(names))
	for i, n := range names {
		out[i] = jen.Id(n)
	}
	return out
}
