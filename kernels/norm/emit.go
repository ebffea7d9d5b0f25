package norm

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// kernel is one config of a CPU template, for one shape or for every shape
// (generic), ready to emit.
type kernel struct {
	kind
	name       string
	cfg        schedule.Config
	rows, cols int        // 0 when generic
	generic    bool       // rows and cols are arguments
	v          golang.F32 // the zero F32 for NEON, whose vectors are the assembly's only
	lanes      int        // of a vector: vec
	unroll     int
	onepass    bool // LayerNorm's algo=onepass
	threads    int
	chunk      int
	// asm: the rows in assembly (asmRows); stream: the assembly's
	// output sweep stores with VMOVNTPS, or VMOVNTDQ for 16-bit
	// elements (store=stream)
	asm, stream bool
	// prefetch: the assembly's output sweep fetches the next row of x
	prefetch bool
	// plain: the plain form of a code=asm kernel, whose Go does not
	// import archsimd
	plain bool
	// half: the conversions of a kernel that stores bf16 or f16 (half.go);
	// its DType is "" for float32
	half golang.Half
	// reg: a 16-bit kernel whose assembly loads and stores the 16-bit
	// elements, converting in registers (convert=reg or cvtne, asm.go)
	reg bool
	// cvtne: a bf16 kernel on Z registers whose stores round with
	// VCVTNEPS2BF16 (convert=cvtne, asmhalf.go)
	cvtne bool
}

// knob returns the value of cfg's knob name as text, or "" where its space
// has no such knob: LayerNorm's NEON assembly has no store, prefetch or
// convert.
func knob(cfg schedule.Config, name string) string {
	v, ok := cfg.Lookup(name)
	if !ok {
		return ""
	}
	return v.String()
}

func newKernel(k kind, name string, shape []int, dt dtype.DType, cfg schedule.Config) kernel {
	lanes := cfg.Int("vec")
	kn := kernel{
		kind: k, name: name, cfg: cfg,
		lanes:    lanes,
		unroll:   cfg.Int("unroll"),
		threads:  cfg.Int("threads"),
		chunk:    cfg.Int("rows_per_chunk"),
		onepass:  k.layer && cfg.Str("algo") == "onepass",
		asm:      asmRows(cfg),
		stream:   knob(cfg, "store") == "stream",
		prefetch: knob(cfg, "prefetch") == "true",
	}
	if lanes != neon.Lanes {
		kn.v = golang.Float32(lanes)
	}
	if dt.Size() == 2 {
		// Whole vectors convert in assembly at the kernel's own level:
		// amd64's vectors mean AVX2 at least (goasm.Half). NEON's kernels
		// convert in Go.
		convert := knob(cfg, kernels.ConvertKnob)
		kn.reg = kn.asm && (convert == "reg" || convert == cvtne)
		kn.cvtne = kn.reg && convert == cvtne && dt == dtype.BF16 && lanes == asmLanes
		kn.half = golang.Half{Prefix: name + "Half", DType: dt, Asm: lanes > neon.Lanes}
	}
	if shape == nil {
		kn.generic = true
		return kn
	}
	kn.rows, kn.cols = checkShape(shape)
	// Accumulators beyond the vectors a row holds would stay zero.
	kn.unroll = min(kn.unroll, max(1, kn.cols/kn.lanes))
	return kn
}

// emitGo is the one Go emitter of both ops: the kernel of cfg for shape,
// or for every shape when shape is nil (the shape-generic form), in its
// plain form when plain. The Template fields (cpu.go) wrap it.
func emitGo(k kind, f *jen.File, name string, shape []int, dt dtype.DType, cfg schedule.Config, plain bool) {
	kn := newKernel(k, name, shape, dt, cfg)
	kn.plain = plain
	kn.emitEntry(f)
	if kn.threads > 1 {
		f.Add(kn.split().ChunksFunc())
	}
	switch {
	case kn.reg:
		kn.half.Emit(f) // the widening of gamma and beta (widenVecs)
		f.Add(golang.Comment(fmt.Sprintf("%s holds %s's widened gamma and beta.", kn.widenPool(), kn.rowsFn())))
		f.Var().Id(kn.widenPool()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
			jen.Id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
		})
	case kn.half.DType != "":
		kn.emitHalfRows(f)
	}
	if kn.asm {
		kn.emitAsmRows(f)
		return
	}
	kn.emitRows(f)
	if !kn.v.Scalar() {
		f.Add(kn.v.HorizontalFunc(kn.name+"Sum", golang.ReduceSum))
		kn.emitSlow(f)
	}
}

func (k kernel) rowsFn() string   { return k.name + "Rows" }
func (k kernel) chunksFn() string { return k.name + "Chunks" }
func (k kernel) slowFn() string   { return k.name + "Slow" }

// slices are the kernel's slice parameters: the output, then the inputs.
func (k kernel) slices() []jen.Code {
	s := []jen.Code{jen.Id("y"), jen.Id("x"), jen.Id("gamma")}
	if k.layer {
		s = append(s, jen.Id("beta"))
	}
	return s
}

// what is the sentence of the doc comments that says what the kernel
// computes.
func (k kernel) what() string {
	shape := "rows×cols"
	if !k.generic {
		shape = fmt.Sprintf("%d×%d", k.rows, k.cols)
	}
	if k.layer {
		return fmt.Sprintf("writes to y the LayerNorm of each row of the %s row-major matrix x: "+
			"y = (x-mean)/√(var+%g)·gamma + beta, with the mean and the variance of the row.", shape, k.eps)
	}
	return fmt.Sprintf("writes to y the RMSNorm of each row of the %s row-major matrix x: "+
		"y = x/√(mean(x²)+%g)·gamma.", shape, k.eps)
}

// emitEntry emits the exported function: it checks the slices once, then
// runs the rows on the calling goroutine alone or splits them into chunks
// among threads goroutines, the caller being one of them (split).
func (k kernel) emitEntry(f *jen.File) {
	need := ""
	switch k.v.Lanes() {
	case 8:
		need = " It uses archsimd.Float32x8 and needs AVX2 and FMA."
	case 16:
		need = " It uses archsimd.Float32x16 and needs AVX-512."
	}
	if k.plain {
		need = " It calls Go assembly on AVX-512 and needs it; its Go does not use archsimd."
		switch k.lanes {
		case asmLanesAVX2:
			need = " It calls Go assembly on AVX2 and FMA and needs them; its Go does not use archsimd."
		case neon.Lanes:
			need = " It calls Go assembly for arm64's NEON; its Go does not use archsimd."
		}
	}
	form := ""
	if k.generic {
		form = ", shape-generic,"
		need = " It panics if a slice is shorter than the shape needs." + need
	}
	if dt := k.half.DType; dt != "" {
		need = fmt.Sprintf(" Its slices hold %s, as their 16 bits; it computes in float32 and rounds y to nearest even.", dt) + need
	}
	f.Add(golang.Comment(fmt.Sprintf("%s %s\n\nGenerated by autotune's %s template%s for %s.%s", k.name, k.what(), k.kind.name, form, k.cfg, need)))
	rows, cols := jen.Id("rows"), jen.Id("cols")
	var body []jen.Code
	if !k.generic {
		body = append(body, jen.Const().List(rows, cols).Op("=").List(jen.Lit(k.rows), jen.Lit(k.cols)))
	}
	check := []jen.Code{
		jen.Id("y").Index(jen.Empty(), jen.Add(rows).Op("*").Add(cols)),
		jen.Id("x").Index(jen.Empty(), jen.Add(rows).Op("*").Add(cols)),
		jen.Id("gamma").Index(jen.Empty(), cols),
	}
	if k.layer {
		check = append(check, jen.Id("beta").Index(jen.Empty(), cols))
	}
	body = append(body, jen.List(k.slices()...).Op("=").List(check...).Comment("one bounds check, here rather than in a goroutine"))
	body = append(body, k.split().Run()...)
	params := []jen.Code{jen.List(k.slices()...).Index().Add(k.elem())}
	if k.generic {
		params = append(params, jen.List(rows, cols).Int())
	}
	f.Func().Id(k.name).Params(params...).Block(body...)
}

// split returns how the kernel deals its rows to goroutines: chunks t,
// t+threads, … of rows_per_chunk rows to goroutine t, the caller being
// goroutine 0 (golang.RowSplit, shared with softmax).
func (k kernel) split() golang.RowSplit {
	rowsFn := k.rowsFn()
	if k.half.DType != "" && !k.reg {
		rowsFn = k.halfRowsFn()
	}
	return golang.RowSplit{
		Threads: k.threads, Chunk: k.chunk, Rows: k.rows,
		Slices: k.slices(), Elem: k.elem(), RowsFn: rowsFn, ChunksFn: k.chunksFn(),
		Goroutine: k.goroutine,
	}
}

// goroutine returns the function a goroutine of the kernel runs: body,
// then, for vector Go, the clearing of the upper halves of the vector
// registers (golang.F32.Goroutine). The plain form's rows are assembly
// that ends in VZEROUPPER, and clearing them takes archsimd.
func (k kernel) goroutine(body ...jen.Code) *jen.Statement {
	if k.plain {
		return jen.Func().Params().Block(body...)
	}
	return k.v.Goroutine(body...)
}

// hasTail reports whether rows end in a partial vector, whose elements
// the sweeps handle with scalar code: a vector load would fill the lanes
// past the end with 0, and x-x[0] of those lanes is not 0.
func (k kernel) hasTail() bool {
	return !k.v.Scalar() && (k.generic || k.cols%k.v.Lanes() != 0)
}

// sweep returns the loops over a row with k's unroll; vector steps go to
// body, and the elements of a partial vector at the end to tail, one at a
// time (the index j).
func (k kernel) sweep(body func(golang.Step) []jen.Code, tail func() []jen.Code) []jen.Code {
	wrapped := func(st golang.Step) []jen.Code {
		if !st.Part {
			return body(st)
		}
		j := jen.Id("j")
		return []jen.Code{jen.For(jen.Add(j).Op(":=").Add(st.At), jen.Add(j).Op("<").Id("cols"), jen.Add(j).Op("++")).Block(tail()...)}
	}
	if k.generic {
		return k.v.SweepN("c", jen.Id("cols"), k.unroll, wrapped)
	}
	return k.v.Sweep("c", k.cols, k.unroll, wrapped)
}

func lane(prefix string, u int) string { return prefix + strconv.Itoa(u) }

func (k kernel) accs(prefix string) []jen.Code {
	ids := make([]jen.Code, k.unroll)
	for u := range ids {
		ids[u] = jen.Id(lane(prefix, u))
	}
	return ids
}

// declAccs declares prefix0, … zero, and the scalar accumulator prefixT of
// the partial vector. Vector lanes sum in float32, each cols/lanes terms;
// scalar code sums in float64, one long chain per accumulator, which
// float64 also keeps from overflowing (see the package doc).
func (k kernel) declAccs(prefix string) []jen.Code {
	if k.v.Scalar() {
		return []jen.Code{jen.Var().List(k.accs(prefix)...).Float64()}
	}
	out := []jen.Code{jen.Var().List(k.accs(prefix)...).Add(k.v.Type())}
	if k.hasTail() {
		out = append(out, jen.Var().Id(prefix+"T").Float32())
	}
	return out
}

// total returns the sum of the accumulators: a float32 for vector code, a
// float64 for scalar code.
func (k kernel) total(prefix string) jen.Code {
	tree := k.v.Tree(golang.ReduceSum, k.accs(prefix)...)
	if k.v.Scalar() {
		return tree
	}
	sum := jen.Id(k.name + "Sum").Call(tree)
	if k.hasTail() {
		sum = sum.Op("+").Id(prefix + "T")
	}
	return sum
}

// add returns acc += t; sq returns acc += t².
func (k kernel) add(acc string, t jen.Code) jen.Code {
	if k.v.Scalar() {
		return jen.Id(acc).Op("+=").Float64().Call(t)
	}
	return jen.Id(acc).Op("=").Add(k.v.Add(jen.Id(acc), t))
}

func (k kernel) sq(acc string, t jen.Code) jen.Code {
	if k.v.Scalar() {
		return jen.Id(acc).Op("+=").Float64().Call(t).Op("*").Float64().Call(t)
	}
	return jen.Id(acc).Op("=").Add(k.v.MulAdd(t, t, jen.Id(acc)))
}

// hasVectors reports whether rows hold a whole vector; when none does,
// the sweeps are scalar tails alone and vector values go undeclared.
func (k kernel) hasVectors() bool { return k.generic || k.cols >= k.v.Lanes() }

// splat returns name := x as a vector, or nothing where rows hold no
// whole vector.
func (k kernel) splat(name string, x jen.Code) jen.Code {
	if !k.hasVectors() {
		return jen.Null()
	}
	return jen.Id(name).Op(":=").Add(k.v.Splat(x))
}

// load returns the vector of row at step.
func (k kernel) load(row string, st golang.Step) *jen.Statement { return k.v.Load(jen.Id(row), st.At) }

// emitRows emits the function that normalises rows [lo, hi).
func (k kernel) emitRows(f *jen.File) {
	v := k.v
	var body []jen.Code
	if !k.generic {
		body = append(body, jen.Const().Id("cols").Op("=").Lit(k.cols))
	}
	body = append(body, jen.Const().Id("eps").Op("=").Lit(k.eps))
	if k.generic {
		body = append(body, jen.Id("n").Op(":=").Float64().Call(jen.Id("cols")))
	} else {
		body = append(body, jen.Const().Id("n").Op("=").Float64().Call(jen.Id("cols")))
	}
	// gamma and beta as arrays of cols, so that the compiler drops the
	// bounds checks of the sweeps; one row likewise.
	row := func(s jen.Code) jen.Code {
		if k.generic {
			return jen.Add(s).Index(jen.Id("r").Op("*").Id("cols"), jen.Id("r").Op("*").Id("cols").Op("+").Id("cols"))
		}
		return jen.Parens(jen.Op("*").Index(jen.Id("cols")).Float32()).Call(jen.Add(s).Index(jen.Id("r").Op("*").Id("cols"), jen.Empty()))
	}
	vecArg := func(s string) jen.Code {
		if k.generic {
			return jen.Id(s).Index(jen.Empty(), jen.Id("cols"))
		}
		return jen.Parens(jen.Op("*").Index(jen.Id("cols")).Float32()).Call(jen.Id(s))
	}
	body = append(body, jen.Id("g").Op(":=").Add(vecArg("gamma")))
	if k.layer {
		body = append(body, jen.Id("b").Op(":=").Add(vecArg("beta")))
	}
	perRow := []jen.Code{
		jen.Id("s").Op(":=").Add(row(jen.Id("x"))),
		jen.Id("d").Op(":=").Add(row(jen.Id("y"))),
	}
	if k.layer {
		perRow = append(perRow, k.layerRow()...)
	} else {
		perRow = append(perRow, k.rmsRow()...)
	}
	body = append(body, jen.For(jen.Id("r").Op(":=").Id("lo"), jen.Id("r").Op("<").Id("hi"), jen.Id("r").Op("++")).Block(perRow...))

	algo := "two sweeps: the sum of squares; y = x·(1/rms)·gamma"
	if k.layer {
		algo = "three sweeps, all of x-x[0]: the sum, for the mean; the sum of squared deviations; y"
		if k.onepass {
			algo = "two sweeps, both of x-x[0]: its sum and the sum of its squares, for the mean and the variance; y"
		}
	}
	if !v.Scalar() {
		algo += ". A row whose float32 sum of squares overflows gets its statistics from " + k.slowFn()
	}
	f.Add(golang.Comment(fmt.Sprintf("%s normalises rows lo to hi-1 in %s.", k.rowsFn(), algo)))
	params := []jen.Code{jen.List(k.slices()...).Index().Float32()}
	if k.generic {
		params = append(params, jen.List(jen.Id("cols"), jen.Id("lo"), jen.Id("hi")).Int())
	} else {
		params = append(params, jen.List(jen.Id("lo"), jen.Id("hi")).Int())
	}
	f.Func().Id(k.rowsFn()).Params(params...).Block(body...)
}

// rowArg is the row s as a slice, for the slow path.
func (k kernel) rowArg() jen.Code {
	if k.generic {
		return jen.Id("s")
	}
	return jen.Id("s").Index(jen.Empty(), jen.Empty())
}

// invFrom returns inv := float32(1/√(meanSq+eps)), meanSq a float64
// expression.
func invFrom(meanSq jen.Code) jen.Code {
	return jen.Id("inv").Op(":=").Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Add(meanSq).Op("+").Id("eps")))
}

// overflow returns, for vector code, the statement that sends a row whose
// float32 sum sum is not finite to the slow path, which assigns lhs.
func (k kernel) overflow(sum string, lhs []jen.Code, args ...jen.Code) []jen.Code {
	if k.v.Scalar() {
		return nil
	}
	return []jen.Code{
		jen.If(jen.Op("!").Parens(jen.Id(sum).Op("<=").Qual("math", "MaxFloat32"))).Block(
			jen.Comment("x² overflowed float32: the statistics again in float64"),
			jen.List(lhs...).Op("=").Id(k.slowFn()).Call(args...),
		),
	}
}

// rmsRow is the body of the row loop of RMSNorm.
func (k kernel) rmsRow() []jen.Code {
	v := k.v
	out := k.declAccs("sq")
	out = append(out, k.sweep(func(st golang.Step) []jen.Code {
		x := jen.Id(lane("x", st.U))
		return []jen.Code{jen.Add(x).Op(":=").Add(k.load("s", st)), k.sq(lane("sq", st.U), x)}
	}, func() []jen.Code {
		return []jen.Code{jen.Id("sqT").Op("+=").Id("s").Index(jen.Id("j")).Op("*").Id("s").Index(jen.Id("j"))}
	})...)
	out = append(out,
		jen.Id("ss").Op(":=").Add(k.total("sq")),
		invFrom(jen.Float64().Call(jen.Id("ss")).Op("/").Id("n")),
	)
	out = append(out, k.overflow("ss", []jen.Code{jen.Id("inv")}, k.rowArg())...)
	out = append(out, k.splat("iv", jen.Id("inv")))
	return append(out, k.sweep(func(st golang.Step) []jen.Code {
		x := jen.Id(lane("x", st.U))
		y := jen.Id(lane("y", st.U))
		return []jen.Code{
			jen.Add(x).Op(":=").Add(k.load("s", st)),
			jen.Add(y).Op(":=").Add(v.Mul(x, jen.Id("iv"))),
			v.Store(v.Mul(y, k.load("g", st)), jen.Id("d"), st.At),
		}
	}, func() []jen.Code {
		j := jen.Id("j")
		return []jen.Code{jen.Id("d").Index(j).Op("=").Id("s").Index(j).Op("*").Id("inv").Op("*").Id("g").Index(j)}
	})...)
}

// layerRow is the body of the row loop of LayerNorm. Every sweep works on
// t = x-k, k = x[0]: the shift makes the mean of t small where the row's
// spread is small against its mean (the lowvar inputs), so that neither
// the mean nor x-mean loses the spread to float32 rounding, and a
// constant row gives t = 0 exactly, hence y = beta.
func (k kernel) layerRow() []jen.Code {
	v := k.v
	j := jen.Id("j")
	sj := jen.Id("s").Index(j)
	out := []jen.Code{
		jen.Id("k").Op(":=").Id("s").Index(jen.Lit(0)),
		k.splat("kv", jen.Id("k")),
	}
	shifted := func(st golang.Step) (jen.Code, jen.Code) {
		t := jen.Id(lane("t", st.U))
		return t, jen.Add(t).Op(":=").Add(v.Sub(k.load("s", st), jen.Id("kv")))
	}
	out = append(out, k.declAccs("sum")...)
	if k.onepass {
		out = append(out, k.declAccs("sq")...)
		out = append(out, k.sweep(func(st golang.Step) []jen.Code {
			t, decl := shifted(st)
			return []jen.Code{decl, k.add(lane("sum", st.U), t), k.sq(lane("sq", st.U), t)}
		}, func() []jen.Code {
			return []jen.Code{
				jen.Id("t").Op(":=").Add(sj).Op("-").Id("k"),
				jen.Id("sumT").Op("+=").Id("t"),
				jen.Id("sqT").Op("+=").Id("t").Op("*").Id("t"),
			}
		})...)
		out = append(out,
			jen.Id("mean").Op(":=").Float64().Call(k.total("sum")).Op("/").Id("n"),
			jen.Id("m").Op(":=").Float32().Call(jen.Id("mean")),
			jen.Id("ss").Op(":=").Add(k.total("sq")),
			jen.Comment("E[t²]-E[t]² cancels only as much as the spread is small against x-x[0]"),
			invFrom(jen.Max(jen.Float64().Call(jen.Id("ss")).Op("/").Id("n").Op("-").Id("mean").Op("*").Id("mean"), jen.Lit(0.0))),
		)
	} else {
		out = append(out, k.sweep(func(st golang.Step) []jen.Code {
			t, decl := shifted(st)
			return []jen.Code{decl, k.add(lane("sum", st.U), t)}
		}, func() []jen.Code {
			return []jen.Code{jen.Id("sumT").Op("+=").Add(sj).Op("-").Id("k")}
		})...)
		out = append(out,
			jen.Id("m").Op(":=").Float32().Call(jen.Float64().Call(k.total("sum")).Op("/").Id("n")),
			k.splat("mp", jen.Id("m")),
		)
		out = append(out, k.declAccs("sq")...)
		out = append(out, k.sweep(func(st golang.Step) []jen.Code {
			t, decl := shifted(st)
			dev := jen.Id(lane("e", st.U))
			return []jen.Code{decl, jen.Add(dev).Op(":=").Add(v.Sub(t, jen.Id("mp"))), k.sq(lane("sq", st.U), dev)}
		}, func() []jen.Code {
			return []jen.Code{
				jen.Id("e").Op(":=").Add(sj).Op("-").Id("k").Op("-").Id("m"),
				jen.Id("sqT").Op("+=").Id("e").Op("*").Id("e"),
			}
		})...)
		out = append(out,
			jen.Id("ss").Op(":=").Add(k.total("sq")),
			invFrom(jen.Float64().Call(jen.Id("ss")).Op("/").Id("n")),
		)
	}
	out = append(out, k.overflow("ss", []jen.Code{jen.Id("m"), jen.Id("inv")}, k.rowArg(), jen.Id("k"))...)
	out = append(out,
		k.splat("mv", jen.Id("m")),
		k.splat("iv", jen.Id("inv")),
	)
	return append(out, k.sweep(func(st golang.Step) []jen.Code {
		t, decl := shifted(st)
		z := jen.Id(lane("z", st.U))
		return []jen.Code{
			decl,
			jen.Add(t).Op("=").Add(v.Sub(t, jen.Id("mv"))),
			jen.Add(z).Op(":=").Add(v.Mul(t, jen.Id("iv"))),
			v.Store(v.MulAdd(z, k.load("g", st), k.load("b", st)), jen.Id("d"), st.At),
		}
	}, func() []jen.Code {
		return []jen.Code{
			jen.Id("z").Op(":=").Parens(jen.Add(sj).Op("-").Id("k").Op("-").Id("m")).Op("*").Id("inv"),
			jen.Id("d").Index(j).Op("=").Id("z").Op("*").Id("g").Index(j).Op("+").Id("b").Index(j),
		}
	})...)
}

// emitSlow emits the statistics of one row in float64, for the rows whose
// float32 sum of squares overflowed: RMSNorm's 1/rms; LayerNorm's mean of
// x-k and 1/σ, both in two passes.
func (k kernel) emitSlow(f *jen.File) {
	id := jen.Id
	f64 := func(c jen.Code) *jen.Statement { return jen.Float64().Call(c) }
	n := f64(jen.Len(id("s")))
	if !k.layer {
		f.Add(golang.Comment(k.slowFn() + " returns 1/√(mean(s²)+eps), in float64, where s² overflows float32."))
		f.Func().Id(k.slowFn()).Params(id("s").Index().Float32()).Float32().Block(
			id("ss").Op(":=").Lit(0.0),
			jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(
				id("ss").Op("+=").Add(f64(id("v"))).Op("*").Add(f64(id("v")))),
			jen.Return(jen.Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(id("ss").Op("/").Add(n).Op("+").Lit(k.eps)))),
		)
		return
	}
	dev := jen.Parens(f64(id("v")).Op("-").Id("kf").Op("-").Id("mean"))
	f.Add(golang.Comment(k.slowFn() + " returns the mean of s-k and 1/√(var+eps), in float64, where the squares overflow float32."))
	f.Func().Id(k.slowFn()).Params(id("s").Index().Float32(), id("k").Float32()).Params(id("m"), id("inv").Float32()).Block(
		jen.List(id("kf"), id("mean")).Op(":=").List(f64(id("k")), jen.Lit(0.0)),
		jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(
			id("mean").Op("+=").Add(f64(id("v"))).Op("-").Id("kf")),
		id("mean").Op("/=").Add(n),
		id("ss").Op(":=").Lit(0.0),
		jen.For(jen.List(id("_"), id("v")).Op(":=").Range().Id("s")).Block(
			id("ss").Op("+=").Add(dev).Op("*").Add(dev)),
		jen.Return(jen.Float32().Call(id("mean")), jen.Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(id("ss").Op("/").Add(n).Op("+").Lit(k.eps)))),
	)
}
