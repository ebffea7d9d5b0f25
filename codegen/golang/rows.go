package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// RowSplit deals the rows of a row-wise kernel (softmax, the norms) to
// goroutines: Threads goroutines, the caller included, take chunks of
// Chunk rows round-robin, so that no goroutine waits for another and
// neighbouring chunks run at the same time. The kernel has a function of
// its rows, RowsFn(slices…, lo, hi int), generic kernels
// RowsFn(slices…, cols, lo, hi int), which RowSplit calls; the entry
// point and ChunksFn are what it writes.
type RowSplit struct {
	Threads, Chunk int
	// Rows is the number of rows of a specialised kernel, 0 for a
	// shape-generic one, whose entry has rows and cols int arguments.
	Rows int
	// Slices are the kernel's slice arguments, passed on in this order;
	// Elem is their element type, float32 when nil (uint16 for a kernel
	// that stores bf16 or f16).
	Slices           []jen.Code
	Elem             jen.Code
	RowsFn, ChunksFn string
	// Goroutine wraps the call a new goroutine makes (F32.Goroutine, or a
	// plain func for code that must not import archsimd).
	Goroutine func(body ...jen.Code) *jen.Statement
}

func (s RowSplit) generic() bool { return s.Rows == 0 }

// Run returns the entry's statements that compute every row: with one
// thread, RowsFn on rows 0 to rows-1; otherwise Threads-1 goroutines and
// the caller each running ChunksFn for their share. A generic kernel
// starts no more goroutines than there are chunks of rows.
func (s RowSplit) Run() []jen.Code {
	rows, cols := jen.Id("rows"), jen.Id("cols")
	call := func(fn string, args ...jen.Code) *jen.Statement {
		return jen.Id(fn).Call(append(append([]jen.Code{}, s.Slices...), args...)...)
	}
	var dims []jen.Code
	if s.generic() {
		dims = []jen.Code{rows, cols}
	}
	if s.Threads == 1 {
		if s.generic() {
			return []jen.Code{call(s.RowsFn, cols, jen.Lit(0), rows)}
		}
		return []jen.Code{call(s.RowsFn, jen.Lit(0), rows)}
	}
	t := jen.Id("t")
	var out []jen.Code
	var workers jen.Code = jen.Lit(s.Threads)
	if s.generic() {
		out = append(out, jen.Id("workers").Op(":=").Min(jen.Lit(s.Threads), jen.Parens(jen.Add(rows).Op("+").Lit(s.Chunk-1)).Op("/").Lit(s.Chunk)).
			Comment("no goroutine without a chunk"))
		workers = jen.Id("workers")
	}
	return append(out,
		jen.Var().Id("wg").Qual("sync", "WaitGroup"),
		jen.For(jen.Add(t).Op(":=").Lit(1), jen.Add(t).Op("<").Add(workers), jen.Add(t).Op("++")).Block(
			jen.Id("wg").Dot("Go").Call(s.Goroutine(call(s.ChunksFn, append(dims, t)...))),
		),
		call(s.ChunksFn, append(dims, jen.Lit(0))...),
		jen.Id("wg").Dot("Wait").Call(),
	)
}

// ChunksFunc returns the declaration of ChunksFn, with its doc comment:
// goroutine t's chunks t, t+Threads, …. A generic kernel's takes rows,
// cols and t; a specialised one's t alone. The chunks are dealt with a
// stride of Threads in either, so in a generic kernel with fewer chunks
// than threads goroutine t < chunks gets exactly chunk t.
func (s RowSplit) ChunksFunc() jen.Code {
	lo := jen.Id("lo")
	first := jen.Id("t").Op("*").Lit(s.Chunk)
	what := fmt.Sprintf("chunks t, t+%d, t+%d, … of %d rows", s.Threads, 2*s.Threads, s.Chunk)
	if s.Chunk == 1 {
		first = jen.Id("t")
		what = fmt.Sprintf("rows t, t+%d, t+%d, …", s.Threads, 2*s.Threads)
	}
	elem := s.Elem
	if elem == nil {
		elem = jen.Float32()
	}
	params := []jen.Code{jen.List(s.Slices...).Index().Add(elem)}
	var body, cols []jen.Code
	if s.generic() {
		params = append(params, jen.List(jen.Id("rows"), jen.Id("cols"), jen.Id("t")).Int())
		cols = []jen.Code{jen.Id("cols")}
	} else {
		params = append(params, jen.Id("t").Int())
		body = []jen.Code{jen.Const().Id("rows").Op("=").Lit(s.Rows)}
	}
	args := append(append(append([]jen.Code{}, s.Slices...), cols...), lo, jen.Id("min").Call(jen.Add(lo).Op("+").Lit(s.Chunk), jen.Id("rows")))
	body = append(body, jen.For(
		jen.Add(lo).Op(":=").Add(first),
		jen.Add(lo).Op("<").Id("rows"),
		jen.Add(lo).Op("+=").Lit(s.Threads*s.Chunk),
	).Block(jen.Id(s.RowsFn).Call(args...)))
	return Comment(fmt.Sprintf("%s computes goroutine t's share of the rows: %s.", s.ChunksFn, what)).Line().
		Func().Id(s.ChunksFn).Params(params...).Block(body...)
}
