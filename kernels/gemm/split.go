package gemm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// How the goroutines share c. Its extent (M, or N with split=n) is cut
// into runs of whole units (tiles of mr rows, or strips of nr columns).
// With chunks=1 there is one run per goroutine, fixed in advance: the
// caller computes the first and waits for the others. With chunks > 1
// there are threads·chunks runs, and every goroutine takes the next one
// from a shared counter until none is left, so a goroutine that starts
// late, or loses its core for a while, computes fewer runs instead of
// holding the caller up; each run packs its own panels of B (split=m
// packs all of B once per run, split=n only its own columns).

// shareUnit returns the unit of the extent the goroutines share and its
// name in comments.
func (k kernel) shareUnit() (unit int, extent, what string) {
	if k.splitN {
		return k.nr, "n", "columns"
	}
	return k.mr, "m", "rows"
}

// part returns the arguments of the rows function for the run [lo, hi)
// of the shared extent.
func (k kernel) part(lo, hi jen.Code) []jen.Code {
	if k.splitN {
		return k.operands(jen.Lit(0), jen.Id("m"), lo, hi)
	}
	return k.operands(lo, hi, jen.Lit(0), jen.Id("n"))
}

// split returns the entry's statements that compute c on k.threads
// goroutines, the caller being one of them (see above).
func (k kernel) split() []jen.Code {
	id := jen.Id
	unit, extent, what := k.shareUnit()
	chunks := k.cfg.Int("chunks")
	var out []jen.Code
	var workers jen.Code = jen.Lit(k.threads)
	var work func(t jen.Code) jen.Code // goroutine t's share; nil t: the caller's
	// fixed is work for chunks=1: goroutine t's run is [t·per, (t+1)·per),
	// the caller's [0, callerEnd).
	fixed := func(callerEnd jen.Code) func(t jen.Code) jen.Code {
		return func(t jen.Code) jen.Code {
			if t == nil {
				return id(k.rowsFn()).Call(k.part(jen.Lit(0), callerEnd)...)
			}
			return id(k.rowsFn()).Call(k.part(jen.Add(t).Op("*").Id("per"), jen.Min(jen.Parens(jen.Add(t).Op("+").Lit(1)).Op("*").Id("per"), id(extent)))...)
		}
	}
	one, many := k.unitNames()
	switch {
	case chunks == 1 && k.generic:
		out = append(out,
			id("per").Op(":=").Parens(jen.Parens(id(extent).Op("+").Lit(unit-1)).Op("/").Lit(unit).Op("+").Lit(k.threads-1)).Op("/").Lit(k.threads).Op("*").Lit(unit).
				Comment(fmt.Sprintf("%s per goroutine, whole %s of %d", what, many, unit)),
			id("workers").Op(":=").Parens(id(extent).Op("+").Id("per").Op("-").Lit(1)).Op("/").Id("per").Comment(fmt.Sprintf("at most %d, each with work", k.threads)),
		)
		workers = id("workers")
		work = fixed(jen.Min(id("per"), id(extent)))
	case chunks == 1:
		per, _ := perThread(k.extent(), unit, k.threads)
		out = append(out, jen.Const().Id("per").Op("=").Lit(per).Comment(fmt.Sprintf("%s per goroutine, whole %s of %d", what, many, unit)))
		work = fixed(id("per"))
	case k.generic:
		out = append(out,
			id("units").Op(":=").Parens(id(extent).Op("+").Lit(unit-1)).Op("/").Lit(unit).Comment(fmt.Sprintf("%s of %d %s", many, unit, what)),
			id("runs").Op(":=").Min(id("units"), jen.Lit(k.threads*chunks)).Comment(fmt.Sprintf("%d per goroutine, each with a %s", chunks, one)),
			id("workers").Op(":=").Min(jen.Lit(k.threads), id("runs")),
			jen.Var().Id("next").Qual("sync/atomic", "Int32").Comment("runs taken"),
		)
		workers = id("workers")
		work = func(jen.Code) jen.Code {
			return id(k.runsFn()).Call(append(k.slices(), id("m"), id("n"), id("k"), id("units"), id("runs"), jen.Op("&").Id("next"))...)
		}
	default:
		out = append(out, jen.Var().Id("next").Qual("sync/atomic", "Int32").Comment("runs taken"))
		work = func(jen.Code) jen.Code {
			return id(k.runsFn()).Call(append(k.slices(), jen.Op("&").Id("next"))...)
		}
	}
	t := id("t")
	return append(out,
		jen.Var().Id("wg").Qual("sync", "WaitGroup"),
		jen.For(jen.Add(t).Op(":=").Lit(1), jen.Add(t).Op("<").Add(workers), jen.Add(t).Op("++")).Block(
			id("wg").Dot("Go").Call(k.goroutine(work(t))),
		),
		work(nil),
		id("wg").Dot("Wait").Call(),
	)
}

// extent returns the specialised kernel's shared extent: M, or N with
// split=n.
func (k kernel) extent() int {
	if k.splitN {
		return k.n
	}
	return k.m
}

// unitNames name the unit of the shared extent in comments, one and many.
func (k kernel) unitNames() (one, many string) {
	if k.splitN {
		return "strip", "strips"
	}
	return "tile", "tiles"
}

func (k kernel) runsFn() string { return k.name + "Runs" }

// emitRuns emits, for chunks > 1, the function each goroutine runs: it
// takes the next run from the counter and computes it, until none is
// left. Run r is units r·units/runs to (r+1)·units/runs-1, so runs differ
// by one unit at most.
func (k kernel) emitRuns(f *jen.File) {
	if k.threads == 1 || k.cfg.Int("chunks") == 1 {
		return
	}
	id := jen.Id
	unit, extent, what := k.shareUnit()
	one, many := k.unitNames()
	params := []jen.Code{jen.List(k.slices()...).Index().Add(k.elem())}
	var body []jen.Code
	if k.generic {
		params = append(params, jen.List(id("m"), id("n"), id("k"), id("units"), id("runs")).Int())
	} else {
		units := (k.extent() + unit - 1) / unit
		body = append(body,
			jen.Const().List(id("m"), id("n")).Op("=").List(jen.Lit(k.m), jen.Lit(k.n)),
			jen.Const().List(id("units"), id("runs")).Op("=").List(jen.Lit(units), jen.Lit(k.threads*k.cfg.Int("chunks"))).
				Comment(fmt.Sprintf("%s of %d %s", many, unit, what)),
		)
	}
	params = append(params, id("next").Op("*").Qual("sync/atomic", "Int32"))
	r := id("r")
	take := jen.Int().Call(id("next").Dot("Add").Call(jen.Lit(1))).Op("-").Lit(1)
	bound := func(r jen.Code) jen.Code { return jen.Add(r).Op("*").Id("units").Op("/").Id("runs").Op("*").Lit(unit) }
	body = append(body, jen.For(jen.Add(r).Op(":=").Add(take), jen.Add(r).Op("<").Id("runs"), jen.Add(r).Op("=").Add(take.Clone())).Block(
		id(k.rowsFn()).Call(k.part(bound(r), jen.Min(bound(jen.Parens(jen.Add(r).Op("+").Lit(1))), id(extent)))...),
	))
	f.Add(golang.Comment(fmt.Sprintf("%s computes runs of whole %s of %d %s of c, taking each from next until none is left, "+
		"so that a goroutine that starts late computes fewer; the runs differ by one %s at most.",
		k.runsFn(), many, unit, what, one)))
	f.Func().Id(k.runsFn()).Params(params...).Block(body...)
}
