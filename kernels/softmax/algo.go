package softmax

import (
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// The row bodies of the two algorithms. Each is a sequence of sweeps over
// the row (golang.F32.Sweep) with unroll accumulators, named max0, sum0, …
// after what they hold, and x0, e0, … for the values of the u-th vector.

// threepass returns the row body of algo=threepass.
func (k kernel) threepass() []jen.Code {
	v := k.v
	out := []jen.Code{jen.Comment("The row's maximum."), k.declAccs("max", "lowest")}
	out = append(out, k.sweep(func(st golang.Step) []jen.Code {
		acc := jen.Id(lane("max", st.U))
		return []jen.Code{jen.Add(acc).Op("=").Add(v.Max(acc, k.load("s", st)))}
	})...)
	out = append(out,
		jen.Id("m").Op(":=").Add(k.bcast(k.reduce(golang.ReduceMax, k.accs("max")))),
		jen.Line(),
		jen.Comment("dst = e^(src-m), and its sum."),
		k.declSums(),
	)
	out = append(out, k.sweep(func(st golang.Step) []jen.Code {
		x, e, acc := lane("x", st.U), lane("e", st.U), jen.Id(lane("sum", st.U))
		stmts := []jen.Code{jen.Id(x).Op(":=").Add(v.Sub(k.load("s", st), jen.Id("m")))}
		stmts = append(stmts, k.exp.Emit(e, x, strconv.Itoa(st.U))...)
		return append(stmts,
			k.store(jen.Id(e), "d", st),
			k.addTo(acc, e),
		)
	})...)
	out = append(out,
		k.scale(k.reduce(golang.ReduceSum, k.accs("sum"))),
		jen.Line(),
		jen.Comment("dst *= 1/sum."),
	)
	return append(out, k.sweep(func(st golang.Step) []jen.Code {
		return []jen.Code{k.store(v.Mul(k.loadZero("d", st), jen.Id("scale")), "d", st)}
	})...)
}

// online1 returns the first pass of algo=online: per lane a running maximum
// and the sum of e^(x-max) for that maximum. With hi = max(m, x) and
// lo = min(m, x), one exp serves both cases: e = e^(lo-hi) is e^(x-m) when
// x ≤ m (sum += e) and e^(m-x) when x > m (sum = sum·e + 1).
func (k kernel) online1() []jen.Code {
	v := k.v
	out := []jen.Code{
		jen.Comment("Per lane, the running maximum and the sum of e^(x-max)."),
		k.declAccs("max", "lowest"),
		k.declSums(),
	}
	out = append(out, k.sweep(func(st golang.Step) []jen.Code {
		u := strconv.Itoa(st.U)
		x, hi, e := jen.Id("x"+u), jen.Id("hi"+u), "e"+u
		m, sum := jen.Id("max"+u), jen.Id("sum"+u)
		up := jen.Id("up" + u)
		stmts := []jen.Code{
			jen.Add(x).Op(":=").Add(k.load("s", st)),
			jen.Add(hi).Op(":=").Add(v.Max(m, x)),
		}
		if !v.Scalar() {
			stmts = append(stmts, jen.Add(up).Op(":=").Add(x).Dot("Greater").Call(m))
		}
		stmts = append(stmts, jen.Add(x).Op("=").Add(v.Sub(v.Min(m, x), hi)))
		stmts = append(stmts, k.exp.Emit(e, "x"+u, u)...)
		if v.Scalar() {
			return append(stmts, jen.If(jen.Add(hi).Op(">").Add(m)).Block(
				jen.Add(sum).Op("=").Add(sum).Op("*").Add(k.term(e)).Op("+").Lit(1),
				jen.Add(m).Op("=").Add(hi),
			).Else().Block(
				jen.Add(sum).Op("+=").Add(k.term(e)),
			))
		}
		return append(stmts,
			jen.Comment("sum·e + 1 where x is the new maximum, sum + e elsewhere"),
			jen.Add(sum).Op("=").Add(sum).Dot("MulAdd").Call(
				jen.Id(e).Dot("Merge").Call(jen.Id("one"), up),
				jen.Id("one").Dot("Merge").Call(jen.Id(e), up),
			),
			jen.Add(m).Op("=").Add(hi),
		)
	})...)
	return out
}

// rescaled returns sum·e for a sum accumulator and a float32 e.
func (k kernel) rescaled(sum, e string) jen.Code {
	if k.v.Scalar() {
		return jen.Id(sum).Op("*").Add(k.term(e))
	}
	return k.v.Mul(jen.Id(sum), jen.Id(e))
}

// online2 returns the rest of algo=online: the lanes' sums rescaled to the
// row maximum and added, then dst = e^(x-m)/sum.
func (k kernel) online2() []jen.Code {
	v := k.v
	out := []jen.Code{jen.Id("m").Op(":=").Add(k.bcast(k.reduce(golang.ReduceMax, k.accs("max"))))}
	var total jen.Code = jen.Id("sum0")
	if !v.Scalar() || k.unroll > 1 {
		var scaled []jen.Code
		for u := range k.unroll {
			x, e := lane("x", u), lane("e", u)
			out = append(out, jen.Id(x).Op(":=").Add(v.Sub(jen.Id(lane("max", u)), jen.Id("m"))))
			out = append(out, k.exp.Emit(e, x, strconv.Itoa(u))...)
			scaled = append(scaled, k.rescaled(lane("sum", u), e))
		}
		total = k.reduce(golang.ReduceSum, scaled)
	}
	out = append(out,
		k.scale(total),
		jen.Line(),
		jen.Comment("dst = e^(src-m) / sum."),
	)
	return append(out, k.sweep(func(st golang.Step) []jen.Code {
		x, e := lane("x", st.U), lane("e", st.U)
		stmts := []jen.Code{jen.Id(x).Op(":=").Add(v.Sub(k.loadZero("s", st), jen.Id("m")))}
		stmts = append(stmts, k.exp.Emit(e, x, strconv.Itoa(st.U))...)
		return append(stmts, k.store(v.Mul(jen.Id(e), jen.Id("scale")), "d", st))
	})...)
}
