package gen

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/gen/amd64"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// testHelpers is the part of the generated tests that does not depend on
// what was tuned.
//
//go:embed testhelpers.go.txt
var testHelpers string

// maxTestFLOPs bounds the untuned shapes the generated tests derive from
// tuned ones, so that the float64 reference stays quick.
const maxTestFLOPs = 2e8

// testShapes are the shapes op is checked on: every tuned shape, and
// shapes never tuned: all ones, small primes, odd extents, and each tuned
// shape with every extent one larger (which the nearest rule serves).
func (op *opPlan) testShapes() [][]int {
	r := len(op.op.Dims)
	var shapes [][]int
	addShape := func(s []int) {
		if !slices.ContainsFunc(shapes, func(x []int) bool { return slices.Equal(x, s) }) {
			shapes = append(shapes, s)
		}
	}
	for _, t := range op.tuned {
		addShape(t.shape)
	}
	ones := make([]int, r)
	for i := range ones {
		ones[i] = 1
	}
	addShape(ones)
	for _, base := range [][]int{{2, 3, 5, 7, 11}, {7, 13, 17, 33, 9}, {3, 1, 37, 65, 2}} {
		if r <= len(base) {
			addShape(slices.Clone(base[:r]))
		}
	}
	for _, t := range op.neighbours() {
		addShape(t)
	}
	for _, t := range op.rangeShapes() {
		addShape(t)
	}
	return shapes
}

// rangeShapes are the shapes where the bucket rule is decided, where the
// reference is cheap enough: each range's corners and the shapes just
// outside them, and the shapes around the geometric middle between
// consecutive buckets, where one bucket's cell ends and the next begins.
func (op *opPlan) rangeShapes() [][]int {
	var out [][]int
	add := func(s []int) {
		if !slices.Contains(s, 0) && op.op.FLOPs(s) <= maxTestFLOPs {
			out = append(out, s)
		}
	}
	for _, r := range op.ranges {
		add(slices.Clone(r.Lo))
		add(slices.Clone(r.Hi))
		for d := range r.Lo {
			if r.Lo[d] < r.Hi[d] {
				below, above := slices.Clone(r.Lo), slices.Clone(r.Hi)
				below[d]--
				above[d]++
				add(below)
				add(above)
			}
		}
		for i := 1; i < len(r.Buckets); i++ {
			a, b := r.Buckets[i-1], r.Buckets[i]
			for _, off := range []int{-1, 0, 1} {
				mid := make([]int, len(a))
				for d := range a {
					mid[d] = int(math.Round(math.Sqrt(float64(a[d]) * float64(b[d]))))
					if r.Lo[d] < r.Hi[d] {
						mid[d] = max(1, mid[d]+off)
					}
				}
				add(mid)
			}
		}
	}
	return out
}

// neighbours are the tuned shapes with every extent one larger, where the
// reference is cheap enough.
func (op *opPlan) neighbours() [][]int {
	var out [][]int
	for _, t := range op.tuned {
		s := slices.Clone(t.shape)
		for i := range s {
			s[i]++
		}
		if op.op.FLOPs(s) <= maxTestFLOPs && !slices.ContainsFunc(op.tuned, func(x tunedShape) bool { return slices.Equal(x.shape, s) }) {
			out = append(out, s)
		}
	}
	return out
}

// expect returns what dispatch does at shape before any LoadTuning: the
// kernel and the rule as Variant writes it. It decides with tunedb.Serve,
// the rule lookup answers by too, which the generated pick must agree
// with.
func (op *opPlan) expect(shape []int) (kernel int, rule string) {
	tuned := make([][]int, len(op.tuned))
	for i, t := range op.tuned {
		tuned[i] = t.shape
	}
	ranges := make([]tunedb.Range, len(op.ranges))
	for i, r := range op.ranges {
		ranges[i] = r.tunedb()
	}
	s := tunedb.Serve(shape, tuned, ranges, func(i int) bool { return op.tuned[i].near >= 0 })
	switch {
	case s.Tuned < 0:
		return op.def, "default"
	case s.Exact:
		return op.tuned[s.Tuned].exact, "exact"
	case s.Range >= 0:
		return op.tuned[s.Tuned].near, "bucket " + kernels.FormatShape(tuned[s.Tuned]) + " of " + op.ranges[s.Range].String()
	}
	return op.tuned[s.Tuned].near, "nearest " + kernels.FormatShape(tuned[s.Tuned])
}

// adapter returns a function literal that calls fn, a kernel of op's
// generic convention, as the helpers do: args (output first) and a shape.
// In a package of 16-bit kernels it goes through runHalf (halfTestHelper),
// and public says that fn is the exported function, whose slices are of
// the package's element type rather than []uint16.
func (p *plan) adapter(op *opPlan, fn jen.Code, public bool, extra ...jen.Code) jen.Code {
	a := jen.Id("a")
	if p.half() {
		a = jen.Id("h")
	}
	var call []jen.Code
	for i := range op.api.Args {
		arg := a.Clone().Index(jen.Lit(i))
		if p.half() && public {
			arg = jen.Id(p.fromBitsFn()).Call(arg)
		}
		call = append(call, arg)
	}
	for i := range op.api.Dims {
		call = append(call, jen.Id("s").Index(jen.Lit(i)))
	}
	call = append(call, extra...)
	body := jen.Add(fn).Call(call...)
	if p.half() {
		body = jen.Id("runHalf").Call(jen.Id("a"), jen.Func().Params(jen.Id("h").Index().Index().Uint16()).Block(body))
	}
	return jen.Func().Params(jen.Id("a").Index().Index().Float32(), jen.Id("s").Index().Int()).Block(body)
}

// publicArgs returns the function op's tests call through the exported
// function, and the flags that select op.
func (p *plan) publicArgs(op *opPlan) (fn string, flags []jen.Code) {
	if op.parent == "" {
		for range op.flags {
			flags = append(flags, jen.False())
		}
		return op.api.Func, flags
	}
	parent := p.opByName(op.parent)
	for _, v := range parent.flags {
		flags = append(flags, jen.Lit(v.Flag == op.flag))
	}
	return parent.api.Func, flags
}

// publicCall returns how the tests call op through its exported function.
func (p *plan) publicCall(op *opPlan) jen.Code {
	fn, flags := p.publicArgs(op)
	return p.adapter(op, jen.Id(fn), true, flags...)
}

// halfTestHelper adds to f, in a package of 16-bit kernels, runHalf and
// roundInput: the tests draw and check float32 values, and a kernel of
// the package gets them encoded, its output poisoned with NaN bits.
func (p *plan) halfTestHelper(f *jen.File) {
	c := p.conv()
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("runHalf runs k on a, float32 arguments with the output first: "+
		"the inputs encoded as %s, the output poisoned with 0xffff (a NaN) and decoded into a[0]. "+
		"It panics if k wrote to an input.", p.o.DType)))
	f.Func().Id("runHalf").Params(id("a").Index().Index().Float32(), id("k").Func().Params(id("h").Index().Index().Uint16())).Block(
		id("h").Op(":=").Make(jen.Index().Index().Uint16(), jen.Len(id("a"))),
		jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("a")).Block(
			id("h").Index(id("i")).Op("=").Make(jen.Index().Uint16(), jen.Len(id("x"))),
			id(c.Encode()).Call(id("h").Index(id("i")), id("x")),
		),
		jen.For(id("i").Op(":=").Range().Id("h").Index(jen.Lit(0))).Block(id("h").Index(jen.Lit(0)).Index(id("i")).Op("=").Lit(0xffff)),
		id("k").Call(id("h")),
		jen.For(id("i").Op(":=").Lit(1), id("i").Op("<").Len(id("a")), id("i").Op("++")).Block(
			id("x").Op(":=").Make(jen.Index().Uint16(), jen.Len(id("a").Index(id("i")))),
			id(c.Encode()).Call(id("x"), id("a").Index(id("i"))),
			jen.If(jen.Op("!").Qual("slices", "Equal").Call(id("x"), id("h").Index(id("i")))).Block(
				jen.Panic(jen.Qual("fmt", "Sprintf").Call(jen.Lit("the kernel wrote to argument %d, an input"), id("i")))),
		),
		id(c.Decode()).Call(id("a").Index(jen.Lit(0)), id("h").Index(jen.Lit(0))),
	)
	f.Commentf("roundInput is x as the kernels' %s holds it: the tests' references are computed from the inputs as stored.", p.o.DType)
	f.Func().Id("roundInput").Params(id("x").Float32()).Float32().Block(
		jen.Return(id(c.Prefix + "ToF32").Call(id(c.Prefix + "FromF32").Call(id("x")))))
}

func (p *plan) testFile() *jen.File {
	f := p.newFile("")
	var round jen.Code = jen.Nil()
	if p.half() {
		p.halfTestHelper(f)
		round = jen.Id("roundInput")
	}
	for _, op := range p.ops {
		dims, _ := argDims(op.op)
		ref := "reference" + op.api.Func
		op.op.EmitReference(f, ref)
		var sets []jen.Code
		var setIndex []int
		for i, s := range op.op.InputSets() {
			if s.EmitFill == nil || !s.For(op.dtype) {
				continue
			}
			name := fmt.Sprintf("fill%s%d", op.api.Func, i)
			s.EmitFill(f, name)
			sets = append(sets, jen.Values(jen.Lit(s.Name), jen.Id(name)))
			setIndex = append(setIndex, i)
		}
		var cases []jen.Code
		for _, shape := range op.testShapes() {
			k, rule := op.expect(shape)
			for j, i := range setIndex {
				set := op.op.InputSets()[i]
				tol := op.op.Tolerance
				if set.Tolerance != nil {
					tol = set.Tolerance
				}
				rel, abs := tol(shape, op.dtype)
				cases = append(cases, jen.Values(jen.Dict{
					jen.Id("shape"): jen.Index().Int().Values(intLits(shape)...), jen.Id("set"): jen.Lit(j),
					jen.Id("rel"): jen.Lit(rel), jen.Id("abs"): jen.Lit(abs),
					jen.Id("variant"): jen.Lit(rule), jen.Id("kernel"): jen.Lit(k),
				}))
			}
		}
		var lens []jen.Code
		for _, ds := range dims {
			e := jen.Lit(1)
			for _, d := range ds {
				e = e.Op("*").Id("s").Index(jen.Lit(d))
			}
			lens = append(lens, e)
		}
		fnsOf := func(list string) jen.Code {
			return jen.Func().Params().Index().Func().Params(jen.Index().Index().Float32(), jen.Index().Int()).Block(
				jen.Var().Id("out").Index().Func().Params(jen.Index().Index().Float32(), jen.Index().Int()),
				jen.For(jen.List(jen.Id("_"), jen.Id("fn")).Op(":=").Range().Id(list)).Block(
					jen.Id("out").Op("=").Append(jen.Id("out"), p.adapter(op, jen.Id("fn"), false))),
				jen.Return(jen.Id("out")),
			).Call()
		}
		test := op.ident + "Test"
		f.Commentf("%s checks %s.", test, op.op.Name)
		f.Func().Id(test).Params().Id("opTest").Block(jen.Return(jen.Id("opTest").Values(jen.Dict{
			jen.Id("op"):        jen.Id(op.ident + "Op"),
			jen.Id("scalar"):    fnsOf(op.ident + "Scalar"),
			jen.Id("fns"):       fnsOf(op.ident + "Fns"),
			jen.Id("public"):    p.publicCall(op),
			jen.Id("lens"):      jen.Func().Params(jen.Id("s").Index().Int()).Index().Int().Block(jen.Return(jen.Index().Int().Values(lens...))),
			jen.Id("sets"):      jen.Index().Id("inputSet").Custom(multi, sets...),
			jen.Id("cases"):     jen.Index().Id("testCase").Custom(multi, cases...),
			jen.Id("reference"): jen.Id(ref),
			jen.Id("round"):     round,
		})))
		name := "Test" + op.api.Func
		t := jen.Id("t")
		// LoadTuning: a log that measured the default kernel at an
		// untuned shape makes it that shape's exact kernel.
		k := op.def
		at := op.testShapes()[len(op.tuned)]
		f.Commentf("%s checks every kernel of %s against the float64 reference, the exported function's length checks, dispatch's allocations and LoadTuning.", name, op.op.Name)
		f.Func().Id(name).Params(t.Clone().Op("*").Qual("testing", "T")).Block(
			jen.Id("o").Op(":=").Id(test).Call(),
			jen.Id("o").Dot("check").Call(t),
			jen.Id("o").Dot("checkLengths").Call(t, jen.Index().String().Values(strLits(op.api.Args)...)),
			jen.Id("o").Dot("checkAllocs").Call(t),
			jen.Id("o").Dot("checkLoadTuning").Call(t, jen.Lit(k), jen.Index().Int().Values(intLits(at)...)),
		)
	}
	p.benchmarks(f)
	return f
}

// naive returns op's plain Go baseline, if it has one that needs nothing
// beyond the standard library and is not skipped at shape.
func naive(op *opPlan, shape []int) (kernels.Baseline, bool) {
	for _, b := range op.tmpl.Baselines {
		if b.Name == "naive" && b.Requires == nil && !b.Cgo && b.Skipped(shape) == "" {
			return b, true
		}
	}
	return kernels.Baseline{}, false
}

// benchmarks adds a Benchmark per tuned workload, BenchmarkDispatch and
// BenchmarkSideBySide.
func (p *plan) benchmarks(f *jen.File) {
	b := jen.Id("b")
	bParam := b.Clone().Op("*").Qual("testing", "B")
	args := func(op *opPlan, shape []int) []jen.Code {
		dims, _ := argDims(op.op)
		var out []jen.Code
		for i, ds := range dims {
			n := 1
			for _, d := range ds {
				n *= shape[d]
			}
			out = append(out, jen.Func().Params().Index().Float32().Block(
				jen.Id("x").Op(":=").Make(jen.Index().Float32(), jen.Lit(n)),
				jen.For(jen.Id("j").Op(":=").Range().Id("x")).Block(jen.Id("x").Index(jen.Id("j")).Op("=").Add(benchFill(i))),
				jen.Return(jen.Id("x"))).Call())
		}
		return out
	}
	var dispatch []jen.Code
	var sides []jen.Code
	for _, op := range p.ops {
		test := op.ident + "Test"
		for _, t := range op.tuned {
			name := fmt.Sprintf("Benchmark%s_%s", op.api.Func, kernels.FormatShape(t.shape))
			f.Commentf("%s times %s %s through dispatch (%s).", name, op.op.Name, kernels.FormatShape(t.shape), "exact")
			if p.half() {
				// The exported function on slices of the package's
				// element type: the tests' float32 adapters would time
				// conversions too.
				fn, flags := p.publicArgs(op)
				var locals []jen.Code // not the op's names, which may be b
				for i := range op.api.Args {
					locals = append(locals, jen.Id(fmt.Sprintf("arg%d", i)))
				}
				call := append(append(slices.Clone(locals), intLits(t.shape)...), flags...)
				f.Func().Id(name).Params(bParam).Block(
					jen.List(locals...).Op(":=").List(p.halfArgs(op, t.shape)...),
					jen.For(b.Clone().Dot("Loop").Call()).Block(jen.Id(fn).Call(call...)),
				)
				continue
			}
			f.Func().Id(name).Params(bParam).Block(
				jen.Id("args").Op(":=").Index().Index().Float32().Values(args(op, t.shape)...),
				jen.Id("shape").Op(":=").Index().Int().Values(intLits(t.shape)...),
				jen.Id("run").Op(":=").Id(test).Call().Dot("public"),
				jen.For(b.Clone().Dot("Loop").Call()).Block(jen.Id("run").Call(jen.Id("args"), jen.Id("shape"))),
			)
		}
		shape := op.testShapes()[len(op.testShapes())-1]
		dispatch = append(dispatch, b.Clone().Dot("Run").Call(jen.Lit(op.op.Name), jen.Func().Params(bParam).Block(
			jen.Id("shape").Op(":=").Index().Int().Values(intLits(shape)...),
			jen.For(b.Clone().Dot("Loop").Call()).Block(jen.Id(op.ident+"Op").Dot("pick").Call(jen.Id("shape"))),
		)))
		if len(op.tuned) == 0 || p.half() {
			continue // BenchmarkSideBySide calls float32 adapters: f32 packages only
		}
		// The first tuned shape: its specialised kernel, the generic
		// form of the same config, the default, the specialised kernel's
		// scalar form and plain Go; the shape one larger: dispatch
		// (nearest), the default, the scalar form of the kernel dispatch
		// runs and plain Go. A kernel is named as Variant names it, the
		// form this build and CPU run.
		t := op.tuned[0]
		var cs []jen.Code
		installed := func(k int, what string) jen.Code {
			return jen.Id("o").Dot("op").Dot("kernels").Index(jen.Lit(k)).Dot("name").Op("+").Lit(" (" + what + ")")
		}
		contender := func(name jen.Code, list string, k int, shape []int) {
			cs = append(cs, jen.Values(name, jen.Func().Params().Block(jen.Id("o").Dot(list).Index(jen.Lit(k)).Call(jen.Id("args"), jen.Index().Int().Values(intLits(shape)...)))))
		}
		contender(installed(t.exact, "exact"), "fns", t.exact, t.shape)
		if t.near >= 0 {
			contender(installed(t.near, "generic, same config"), "fns", t.near, t.shape)
		}
		contender(installed(op.def, "default"), "fns", op.def, t.shape)
		if v := op.variants[t.exact]; v.vector() {
			contender(jen.Lit(v.scalarName()+" (scalar form)"), "scalar", t.exact, t.shape)
		}
		body := []jen.Code{jen.Id("o").Op(":=").Id(test).Call()}
		addNaive := func(shape []int) {
			if bl, ok := naive(op, shape); ok {
				name := fmt.Sprintf("naive%s%s", op.api.Func, strings.ReplaceAll(kernels.FormatShape(shape), "x", "_"))
				bl.EmitGo(f, name, slices.Clone(shape))
				cs = append(cs, jen.Values(jen.Lit("plain Go"), jen.Func().Params().Block(jen.Id(name).Call(
					func() []jen.Code {
						var xs []jen.Code
						for i := range op.api.Args {
							xs = append(xs, jen.Id("args").Index(jen.Lit(i)))
						}
						return xs
					}()...))))
			}
		}
		addNaive(t.shape)
		body = append(body,
			jen.Id("args").Op(":=").Index().Index().Float32().Values(args(op, t.shape)...),
			b.Clone().Dot("Run").Call(jen.Lit("tuned/"+kernels.FormatShape(t.shape)), jen.Func().Params(bParam).Block(
				jen.Id("sideBySide").Call(b, jen.Index().Id("contender").Custom(multi, cs...)))))
		if ns := op.neighbours(); len(ns) > 0 {
			u := ns[0]
			cs = nil
			cs = append(cs, jen.Values(jen.Lit("dispatch ("+func() string { _, r := op.expect(u); return r }()+")"),
				jen.Func().Params().Block(jen.Id("o").Dot("public").Call(jen.Id("args2"), jen.Index().Int().Values(intLits(u)...)))))
			cs = append(cs, jen.Values(installed(op.def, "default"),
				jen.Func().Params().Block(jen.Id("o").Dot("fns").Index(jen.Lit(op.def)).Call(jen.Id("args2"), jen.Index().Int().Values(intLits(u)...)))))
			if k, _ := op.expect(u); op.variants[k].vector() {
				cs = append(cs, jen.Values(jen.Lit(op.variants[k].scalarName()+" (scalar form)"),
					jen.Func().Params().Block(jen.Id("o").Dot("scalar").Index(jen.Lit(k)).Call(jen.Id("args2"), jen.Index().Int().Values(intLits(u)...)))))
			}
			addNaiveU := func() {
				if bl, ok := naive(op, u); ok {
					name := fmt.Sprintf("naive%s%s", op.api.Func, strings.ReplaceAll(kernels.FormatShape(u), "x", "_"))
					bl.EmitGo(f, name, slices.Clone(u))
					var xs []jen.Code
					for i := range op.api.Args {
						xs = append(xs, jen.Id("args2").Index(jen.Lit(i)))
					}
					cs = append(cs, jen.Values(jen.Lit("plain Go"), jen.Func().Params().Block(jen.Id(name).Call(xs...))))
				}
			}
			addNaiveU()
			body = append(body,
				jen.Id("args2").Op(":=").Index().Index().Float32().Values(args(op, u)...),
				b.Clone().Dot("Run").Call(jen.Lit("untuned/"+kernels.FormatShape(u)), jen.Func().Params(bParam).Block(
					jen.Id("sideBySide").Call(b, jen.Index().Id("contender").Custom(multi, cs...)))))
		}
		sides = append(sides, b.Clone().Dot("Run").Call(jen.Lit(op.op.Name), jen.Func().Params(bParam).Block(body...)))
	}
	f.Comment("BenchmarkDispatch times choosing a kernel at an untuned shape (the nearest rule's scan), per op.")
	f.Func().Id("BenchmarkDispatch").Params(bParam).Block(dispatch...)
	if len(sides) == 0 {
		return
	}
	f.Comment("BenchmarkSideBySide times, interleaved in one process, at each op's first tuned shape its specialised kernel, the generic form of the same config, the default, the specialised kernel's scalar form and plain Go; and at that shape with every extent one larger, dispatch (the nearest rule), the default, the scalar form of the kernel dispatch runs and plain Go. It measures on its own; run it with -benchtime 1x -v.")
	f.Func().Id("BenchmarkSideBySide").Params(bParam).Block(sides...)
}

// benchFill is element j of argument i of a benchmark: the output 0.5
// (it is overwritten), the inputs (j mod 7 + 1)/8.
func benchFill(i int) *jen.Statement {
	if i == 0 {
		return jen.Lit(0.5)
	}
	return jen.Float32().Call(jen.Id("j").Op("%").Lit(7).Op("+").Lit(1)).Op("/").Lit(8)
}

// halfArgs returns the arguments of a benchmark of op at shape in a
// package of 16-bit kernels: slices of its element type, filled as the
// float32 benchmarks fill theirs.
func (p *plan) halfArgs(op *opPlan, shape []int) []jen.Code {
	dims, _ := argDims(op.op)
	var out []jen.Code
	for i, ds := range dims {
		n := 1
		for _, d := range ds {
			n *= shape[d]
		}
		out = append(out, jen.Func().Params().Index().Add(p.elem()).Block(
			jen.Id("x").Op(":=").Make(jen.Index().Add(p.elem()), jen.Lit(n)),
			jen.For(jen.Id("j").Op(":=").Range().Id("x")).Block(jen.Id("x").Index(jen.Id("j")).Op("=").Id("To"+p.elemName()).Call(benchFill(i))),
			jen.Return(jen.Id("x"))).Call())
	}
	return out
}

// plainTestFile returns the test, in builds of the plain forms, that each kernel with a plain form runs it exactly when the CPU
// has the instructions of its assembly.
func (p *plan) plainTestFile() *jen.File {
	f := p.newFile(amd64.PlainTag)
	var rows []jen.Code
	for _, op := range p.ops {
		for i, v := range op.variants {
			if v.Plain {
				rows = append(rows, jen.Values(jen.Id(op.ident+"Op"), jen.Lit(i), jen.Lit(v.name), v.Needs.PlainCond()))
			}
		}
	}
	k := jen.Id("k")
	f.Commentf("TestPlainForms checks that each kernel with Go assembly runs its plain form where the CPU has the assembly's instructions (%s), and its scalar form elsewhere.", amd64.CPUVar)
	f.Func().Id("TestPlainForms").Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(
		jen.For(jen.List(jen.Id("_"), k).Op(":=").Range().Index().Struct(
			jen.Id("op").Op("*").Id("opState"),
			jen.Id("kernel").Int(),
			jen.Id("plain").String(),
			jen.Id("runs").Bool(),
		).Custom(multi, rows...)).Block(
			jen.If(jen.List(jen.Id("got")).Op(":=").Add(k).Dot("op").Dot("kernels").Index(k.Clone().Dot("kernel")).Dot("name"),
				jen.Parens(jen.Id("got").Op("==").Add(k).Dot("plain")).Op("!=").Add(k).Dot("runs")).Block(
				jen.Id("t").Dot("Errorf").Call(jen.Lit("%s kernel %d runs %s; the CPU runs its plain form %s: %v"),
					k.Clone().Dot("op").Dot("name"), k.Clone().Dot("kernel"), jen.Id("got"), k.Clone().Dot("plain"), k.Clone().Dot("runs")),
			),
		),
	)
	return f
}
