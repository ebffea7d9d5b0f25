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
