package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// A Step is one vector's worth of a Sweep: the statements for the vector
// whose first element is At. U (0 ≤ U < unroll) is its position within an
// unrolled iteration, so bodies keep one accumulator per U. Part marks the
// single partial vector at the end, n%lanes elements long: its body loads
// with LoadPart and stores with StorePart.
type Step struct {
	U    int
	At   *jen.Statement
	Part bool
}

// Sweep returns loops that visit the elements [0, n) of a row, n a
// compile-time constant, with v's vectors and unroll vectors per iteration:
//
//	for i := 0; i < n-n%(lanes·unroll); i += lanes·unroll { body(0, i) … body(unroll-1, i+…) }
//	for i := …; i < n-n%lanes; i += lanes { body(0, i) }
//	{ body(0, n-n%lanes) as the partial vector }
//
// with every bound a literal and only the parts that run for this n. The
// partial vector's statements sit in a block of their own, so they may
// declare the same names as the loop bodies.
func (v F32) Sweep(index string, n, unroll int, body func(Step) []jen.Code) []jen.Code {
	if n < 0 || unroll < 1 {
		panic(fmt.Sprintf("golang: Sweep of %d elements unrolled %d times", n, unroll))
	}
	i := jen.Id(index)
	at := func(off int) *jen.Statement {
		if off == 0 {
			return jen.Id(index)
		}
		return jen.Id(index).Op("+").Lit(off)
	}
	var out []jen.Code
	loop := func(from, to, step, unroll int) {
		if to <= from {
			return
		}
		var stmts []jen.Code
		for u := range unroll {
			stmts = append(stmts, body(Step{U: u, At: at(u * v.lanes)})...)
		}
		next := jen.Add(i).Op("+=").Lit(step)
		if step == 1 {
			next = jen.Add(i).Op("++")
		}
		out = append(out, jen.For(jen.Add(i).Op(":=").Lit(from), jen.Add(i).Op("<").Lit(to), next).Block(stmts...))
	}
	wide := v.lanes * unroll
	unrolledEnd := n - n%wide
	vectorEnd := n - n%v.lanes
	loop(0, unrolledEnd, wide, unroll)
	loop(unrolledEnd, vectorEnd, v.lanes, 1)
	if vectorEnd < n {
		stmts := body(Step{At: jen.Lit(vectorEnd), Part: true})
		what := "element"
		if n-vectorEnd > 1 {
			what = fmt.Sprintf("%d elements", n-vectorEnd)
		}
		out = append(out, jen.Comment("The last "+what+"."), jen.Block(stmts...))
	}
	return out
}

// SweepN is Sweep for a row whose length n is known only at run time (an
// int expression, evaluated at each loop test): the same three parts,
//
//	{ i := 0
//	  for ; i+lanes·unroll <= n; i += lanes·unroll { body(0, i) … body(unroll-1, i+…) }
//	  for ; i+lanes <= n; i += lanes { body(0, i) }
//	  if i < n { body(0, i) as the partial vector } }
//
// each tested at run time, in a block of their own so that a function may
// sweep several times with the same index. The partial vector is n-i
// elements long, 1 to lanes-1: bodies load and store it through slices
// that end at the row's end. Scalar code has no partial vector.
func (v F32) SweepN(index string, n jen.Code, unroll int, body func(Step) []jen.Code) []jen.Code {
	if unroll < 1 {
		panic(fmt.Sprintf("golang: SweepN unrolled %d times", unroll))
	}
	i := jen.Id(index)
	at := func(off int) *jen.Statement {
		if off == 0 {
			return jen.Id(index)
		}
		return jen.Id(index).Op("+").Lit(off)
	}
	out := []jen.Code{jen.Add(i).Op(":=").Lit(0)}
	loop := func(step, unroll int) {
		var stmts []jen.Code
		for u := range unroll {
			stmts = append(stmts, body(Step{U: u, At: at(u * v.lanes)})...)
		}
		next := jen.Add(i).Op("+=").Lit(step)
		cond := jen.Add(i).Op("+").Lit(step).Op("<=").Add(n)
		if step == 1 {
			next = jen.Add(i).Op("++")
			cond = jen.Add(i).Op("<").Add(n)
		}
		out = append(out, jen.For(jen.Empty(), cond, next).Block(stmts...))
	}
	if unroll > 1 {
		loop(v.lanes*unroll, unroll)
	}
	loop(v.lanes, 1)
	if !v.Scalar() {
		out = append(out, jen.If(jen.Add(i).Op("<").Add(n)).Block(
			append([]jen.Code{jen.Comment("The partial vector at the end.")},
				body(Step{At: jen.Id(index), Part: true})...)...))
	}
	return []jen.Code{jen.Block(out...)}
}
