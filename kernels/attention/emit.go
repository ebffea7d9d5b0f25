package attention

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/schedule"
)

// kernel is one config of the template for one shape, ready to emit.
type kernel struct {
	name       string
	cfg        schedule.Config
	b, h, s, d int
	v          golang.F32 // the archsimd Go's vectors; scalar for NEON, whose vectors only the assembly has
	width      int        // float32s a vector of the tiles: the vec knob
	exp        golang.Exp
	br, bc     int
	threads    int
	causal     bool // query i attends to keys j ≤ i only (TemplateCausal)
	lanes      bool // the lanes layout: query rows in vector lanes (lanes.go)
	asm        bool // the lanes layout's register tiles in Go assembly (codegen/goasm)
	// dot kernels are the float32 part of a bf16 convert=dot kernel
	// (dot.go): k holds bf16 pairs of D and v bf16 pairs of keys, and
	// both products' tiles are VDPBF16PS, the scores' on query rows kept
	// as pairs and unscaled, the output's on the weights rounded to bf16
	// and paired after the softmax, which scales the scores.
	dot bool
	// generic kernels take b, h, s and d at run time (emitGeneric): the
	// shape above is then 0.
	generic bool
	// plain kernels (micro=asm only) have plain Go around the assembly
	// tiles (emitPlain, kernels.AMD64Plain): the online softmax is
	// scalar (exp is then scalar too) and nothing imports archsimd, so
	// that they build without GOEXPERIMENT=simd. v stays the tiles'
	// vector width.
	plain bool
}

// maxAccs is the most vector accumulators a loop keeps live: the dot
// product's partial sums, or the slices of an output row. Four leave room
// for the loads, the broadcast weight and the exp constants in Go's 15
// vector registers.
const maxAccs = 4

// emitGeneric emits the shape-generic kernel of cfg (a kernels.Kernel without a Shape):
// the shape is an argument, D lives in the state, and every block of keys,
// the last partial one included, goes through one function whose number of
// keys is an argument.
func emitGeneric(f *jen.File, name string, cfg schedule.Config, causal bool) {
	k := newGenericKernel(name, cfg, causal)
	if k.lanes {
		k.emitLanesState(f)
		k.emitEntry(f)
		k.emitWork(f)
		k.emitLanes(f)
		return
	}
	k.emitState(f)
	k.emitEntry(f)
	k.emitWork(f)
	if !k.causal {
		k.emitKeys(f, k.bc, false)
	} else {
		k.emitKeys(f, k.bc, false)
		k.emitKeys(f, k.bc, true)
	}
	k.emitStore(f)
	if !k.v.Scalar() {
		f.Add(k.v.InfTail(k.tailFn(0)))
		f.Add(k.v.HorizontalFunc(k.hsum(), golang.ReduceSum))
	}
}

// emitPlain emits the kernel of cfg (layout=lanes, micro=asm) as emit
// does, or the shape-generic one as emitGeneric does when shape is nil,
// with plain Go around the assembly tiles (kernels.AMD64Plain): the
// same tiles (emitAsm, emitAsmGeneric), and the online softmax, the only
// vector code of the lanes layout outside its tiles, in scalar Go, one
// query row at a time.
func emitPlain(f *jen.File, name string, shape []int, cfg schedule.Config, causal, dot bool) {
	if cfg.Str("micro") != "asm" {
		panic(fmt.Sprintf("attention: no plain form of %s: its tiles are not assembly", cfg))
	}
	var k kernel
	if shape == nil {
		k = newGenericKernel(name, cfg, causal)
	} else {
		k = newKernel(name, shape, cfg, causal, dot)
	}
	k.plain = true
	k.exp = golang.NewExp(golang.Float32(1), expDegree[cfg.Str("exp")])
	k.emitLanesState(f)
	k.emitEntry(f)
	k.emitWork(f)
	k.emitLanes(f)
}

// goroutine returns the function a goroutine of the kernel runs
// (golang.F32.Goroutine): in a plain kernel it clears no vector registers,
// since only the assembly tiles use them and they end in VZEROUPPER.
func (k kernel) goroutine(body ...jen.Code) *jen.Statement {
	if k.plain {
		return golang.Float32(1).Goroutine(body...)
	}
	return k.v.Goroutine(body...)
}

// newGenericKernel returns the shape-generic kernel of cfg, named name.
func newGenericKernel(name string, cfg schedule.Config, causal bool) kernel {
	k := newKernelOf(name, cfg, causal)
	k.generic = true
	return k
}

// emit is the emitter of both templates: causal kernels differ only in
// emitWork's loop over key blocks and dealing of units, and in the masked
// keys functions.
func emit(f *jen.File, name string, shape []int, cfg schedule.Config, causal, dot bool) {
	k := newKernel(name, shape, cfg, causal, dot)
	if k.lanes {
		k.emitLanesState(f)
		k.emitEntry(f)
		k.emitWork(f)
		k.emitLanes(f)
		return
	}
	k.emitState(f)
	k.emitEntry(f)
	k.emitWork(f)
	v := k.v
	var tails []int
	for _, cols := range k.keyBlocks() {
		// Causal kernels use the full blocks unmasked below the diagonal
		// and masked across it, and the last, partial block always masked.
		if !k.causal || cols == k.bc {
			k.emitKeys(f, cols, false)
		}
		if k.causal {
			k.emitKeys(f, cols, true)
		}
		if n := cols % v.Lanes(); !v.Scalar() && n != 0 && !slices.Contains(tails, n) {
			tails = append(tails, n)
			k.emitTail(f, n)
		}
	}
	k.emitStore(f)
	if !v.Scalar() {
		f.Add(v.HorizontalFunc(k.hsum(), golang.ReduceSum))
	}
}

// newKernel returns the kernel of cfg for shape, named name; dot only
// for a lanes kernel of 16-lane assembly tiles (dot.go).
func newKernel(name string, shape []int, cfg schedule.Config, causal, dot bool) kernel {
	k := newKernelOf(name, cfg, causal)
	k.b, k.h, k.s, k.d = checkShape(shape)
	if dot && !(k.lanes && k.asm && k.width == 16) {
		panic(fmt.Sprintf("attention: no VDPBF16PS form of %s", cfg))
	}
	k.dot = dot
	return k
}

// newKernelOf returns the kernel of cfg for no shape yet.
func newKernelOf(name string, cfg schedule.Config, causal bool) kernel {
	width := cfg.Int("vec")
	v := golang.Float32(1)
	if width != neon.Lanes {
		v = golang.Float32(width)
	}
	degree, ok := expDegree[cfg.Str("exp")]
	if !ok {
		panic(fmt.Sprintf("attention: unknown exp %q in %s", cfg.Str("exp"), cfg))
	}
	return kernel{
		name: name, cfg: cfg,
		v:       v,
		width:   width,
		exp:     golang.NewExp(v, degree),
		br:      cfg.Int("br"),
		bc:      cfg.Int("bc"),
		threads: cfg.Int("threads"),
		causal:  causal,
		lanes:   cfg.Str("layout") == "lanes",
		asm:     cfg.Str("micro") == "asm",
	}
}

func (k kernel) stateType() string        { return k.name + "State" }
func (k kernel) workFn() string           { return k.name + "Work" }
func (k kernel) keysFn(cols int) string   { return k.name + "Keys" + strconv.Itoa(cols) }
func (k kernel) maskedFn(cols int) string { return k.name + "KeysMasked" + strconv.Itoa(cols) }
func (k kernel) tailFn(n int) string      { return k.name + "Tail" + strconv.Itoa(n) }
func (k kernel) storeFn() string          { return k.name + "Store" }
func (k kernel) hsum() string             { return k.name + "Sum" }

// units is the number of work units: blocks of br query rows of one head.
func (k kernel) units() int { return k.b * k.h * k.qBlocks() }

func (k kernel) qBlocks() int { return (k.s + k.br - 1) / k.br }

// keyBlocks returns the sizes of the blocks of keys: bc, if at least one
// full block fits, and the remainder S mod bc.
func (k kernel) keyBlocks() []int {
	var out []int
	if k.s >= k.bc {
		out = append(out, k.bc)
	}
	if n := k.s % k.bc; n != 0 {
		out = append(out, n)
	}
	return out
}

// emitState emits the type of one goroutine's working memory: the output
// accumulators, running maxima and running sums of br query rows, O(br·D).
func (k kernel) emitState(f *jen.File) {
	f.Add(golang.Comment(fmt.Sprintf("%s is one goroutine's working memory for a block of up to %d query rows: "+
		"the unnormalised output rows, and per row the running maximum of the scores and the running sum of "+
		"e^(score-max), kept per lane in vector code.", k.stateType(), k.br)))
	if k.generic {
		f.Type().Id(k.stateType()).Struct(
			jen.Id("D").Int().Comment("the length of a row"),
			jen.Id("acc").Index().Float32().Comment(fmt.Sprintf("%d·D", k.br)),
			jen.Id("m").Index(jen.Lit(k.br)).Float32(),
			jen.Id("l").Index(jen.Lit(k.br)).Add(k.v.Type()),
		)
		return
	}
	f.Type().Id(k.stateType()).Struct(
		jen.Id("acc").Index(jen.Lit(k.br*k.d)).Float32(),
		jen.Id("m").Index(jen.Lit(k.br)).Float32(),
		jen.Id("l").Index(jen.Lit(k.br)).Add(k.v.Type()),
	)
}

// emitEntry emits the exported function: it checks the slices once, then
// runs the units on the calling goroutine alone or deals them among threads
// goroutines, the caller being one of them.
func (k kernel) emitEntry(f *jen.File) {
	need := ""
	switch {
	case k.plain && k.width == neon.Lanes:
		need = " Its register tiles are Go assembly for NEON (arm64), the code around them plain Go."
	case k.plain && k.v.Lanes() == 8:
		need = " Its register tiles are Go assembly for AVX2 and FMA, the code around them plain Go."
	case k.plain:
		need = " Its register tiles are Go assembly for AVX-512, the code around them plain Go."
	case k.v.Lanes() == 8:
		need = " It uses archsimd.Float32x8 and needs AVX2 and FMA."
	case k.v.Lanes() == 16:
		need = " It uses archsimd.Float32x16 and needs AVX-512."
	}
	if k.dot {
		need += " k holds bf16 pairs of D, in the first ⌈D/2⌉ words of each row, v bf16 pairs of keys, in the first " +
			"⌈cols/2⌉ rows of each block of keys, and q bf16 values: both products' tiles are VDPBF16PS, which needs AVX512-BF16."
	}
	mask := "non-causal"
	if k.causal {
		mask = "causal (query i attends to keys j ≤ i)"
	}
	if k.generic {
		k.emitGenericEntry(f, mask, need)
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√%d)·v of the %d×%d×%d×%d "+
		"[B][H][S][D] tensors q, k and v, %s, in blocks of %d query rows against blocks of %d keys with an "+
		"online softmax.\n\nGenerated by autotune's attention template for %s.%s",
		k.name, k.d, k.b, k.h, k.s, k.d, mask, k.br, k.bc, k.cfg, need)))
	out, q, kk, v := jen.Id("out"), jen.Id("q"), jen.Id("k"), jen.Id("v")
	n := jen.Id("n")
	body := []jen.Code{
		jen.Const().Add(n).Op("=").Lit(k.b * k.h * k.s * k.d),
		jen.List(out, q, kk, v).Op("=").List(
			jen.Add(out).Index(jen.Empty(), n), jen.Add(q).Index(jen.Empty(), n),
			jen.Add(kk).Index(jen.Empty(), n), jen.Add(v).Index(jen.Empty(), n),
		).Comment("one bounds check, here rather than in a goroutine"),
	}
	if k.threads == 1 {
		body = append(body, jen.Id(k.workFn()).Call(out, q, kk, v, jen.Lit(0)))
	} else {
		t := jen.Id("t")
		body = append(body,
			jen.Var().Id("wg").Qual("sync", "WaitGroup"),
			jen.For(jen.Add(t).Op(":=").Lit(1), jen.Add(t).Op("<").Lit(k.threads), jen.Add(t).Op("++")).Block(
				jen.Id("wg").Dot("Go").Call(k.goroutine(jen.Id(k.workFn()).Call(out, q, kk, v, t))),
			),
			jen.Id(k.workFn()).Call(out, q, kk, v, jen.Lit(0)),
			jen.Id("wg").Dot("Wait").Call(),
		)
	}
	f.Func().Id(k.name).Params(jen.List(out, q, kk, v).Index().Float32()).Block(body...)
}

// emitGenericEntry is emitEntry for a generic kernel: the shape is an
// argument, and a shape with fewer units than threads starts one goroutine
// per unit (threads_at_most_blocks at run time). Then every goroutine is in
// the first round of the dealing, so the causal snake deals the same.
func (k kernel) emitGenericEntry(f *jen.File, mask, need string) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s writes to out the attention softmax(q·kᵀ/√d)·v of the b×h×s×d "+
		"[B][H][S][D] tensors q, k and v, %s, in blocks of %d query rows against blocks of %d keys with an "+
		"online softmax. It panics if a slice is shorter than b·h·s·d.\n\nGenerated by autotune's attention template, shape-generic, for %s.%s",
		k.name, mask, k.br, k.bc, k.cfg, need)))
	out, q, kk, v := id("out"), id("q"), id("k"), id("v")
	work := func(t jen.Code) jen.Code {
		return id(k.workFn()).Call(out, q, kk, v, id("s"), id("d"), id("units"), t)
	}
	body := []jen.Code{
		id("n").Op(":=").Id("b").Op("*").Id("h").Op("*").Id("s").Op("*").Id("d"),
		jen.List(out, q, kk, v).Op("=").List(
			jen.Add(out).Index(jen.Empty(), id("n")), jen.Add(q).Index(jen.Empty(), id("n")),
			jen.Add(kk).Index(jen.Empty(), id("n")), jen.Add(v).Index(jen.Empty(), id("n")),
		).Comment("one bounds check, here rather than in a goroutine"),
		id("units").Op(":=").Id("b").Op("*").Id("h").Op("*").Parens(jen.Parens(id("s").Op("+").Lit(k.br - 1)).Op("/").Lit(k.br)).
			Comment(fmt.Sprintf("blocks of %d query rows of one head", k.br)),
	}
	if k.threads == 1 {
		body = append(body, work(jen.Lit(0)))
	} else {
		t := id("t")
		body = append(body,
			jen.Var().Id("wg").Qual("sync", "WaitGroup"),
			jen.For(jen.Add(t).Op(":=").Lit(1), jen.Add(t).Op("<").Min(jen.Lit(k.threads), id("units")), jen.Add(t).Op("++")).Block(
				id("wg").Dot("Go").Call(k.goroutine(work(t))),
			),
			work(jen.Lit(0)),
			id("wg").Dot("Wait").Call(),
		)
	}
	f.Func().Id(k.name).Params(jen.List(out, q, kk, v).Index().Float32(), jen.List(id("b"), id("h"), id("s"), id("d")).Int()).Block(body...)
}

// emitWork emits goroutine t's share: units t, t+threads, …, a unit being
// a block of br query rows of one head. Units run head by head, so the
// goroutines work on neighbouring blocks of one head at a time and share
// its keys and values in cache.
func (k kernel) emitWork(f *jen.File) {
	id := jen.Id
	unit := k.rowsUnit()
	if k.lanes {
		unit = k.lanesUnit()
	}
	nUnits := jen.Lit(k.units())
	if k.generic {
		nUnits = id("units")
	}
	units := jen.For(id("u").Op(":=").Id("t"), id("u").Op("<").Add(nUnits), id("u").Op("+=").Lit(k.threads)).Block(unit...)
	doc := fmt.Sprintf("%s computes goroutine t's share of the work: units t, t+%d, t+%d, … of the %d, "+
		"a unit being a block of up to %d query rows of one head, which meets the keys in blocks of %d.",
		k.workFn(), k.threads, 2*k.threads, k.units(), k.br, k.bc)
	if k.causal && k.threads > 1 {
		// A unit's work grows with i0, so dealing units t, t+threads, …
		// gives goroutine threads-1 the most work in every round. Deal them
		// snake-wise instead: in odd rounds goroutine t takes the unit
		// threads-1-t of the round, which evens out the sums.
		var rounds jen.Code = jen.Lit((k.units() + k.threads - 1) / k.threads)
		if k.generic {
			rounds = jen.Parens(id("units").Op("+").Lit(k.threads - 1)).Op("/").Lit(k.threads)
		}
		units = jen.For(id("round").Op(":=").Lit(0), id("round").Op("<").Add(rounds), id("round").Op("++")).Block(append([]jen.Code{
			id("u").Op(":=").Id("round").Op("*").Lit(k.threads).Op("+").Id("t"),
			jen.If(id("round").Op("%").Lit(2).Op("==").Lit(1)).Block(
				id("u").Op("=").Id("round").Op("*").Lit(k.threads).Op("+").Lit(k.threads - 1).Op("-").Id("t"),
			),
			jen.If(id("u").Op(">=").Add(nUnits)).Block(jen.Continue().Comment("the last round is short")),
		}, unit...)...)
		doc = fmt.Sprintf("%s computes goroutine t's share of the work, dealt snake-wise: of the %d units, in each "+
			"round of %d it takes unit t of the round in even rounds and unit %d-t in odd ones, a unit being a block "+
			"of up to %d query rows of one head, which meets the keys up to its last row in blocks of %d. Units lower "+
			"in a head have more keys to meet; the snake evens out the goroutines' sums.",
			k.workFn(), k.units(), k.threads, k.threads-1, k.br, k.bc)
	}
	body := []jen.Code{
		jen.Const().Defs(
			id("S").Op("=").Lit(k.s),
			id("D").Op("=").Lit(k.d),
			id("blocks").Op("=").Lit(k.qBlocks()).Comment(fmt.Sprintf("blocks of %d query rows per head", k.br)),
		),
		jen.Var().Id("st").Id(k.stateType()),
		units,
	}
	if k.generic {
		state := jen.Id("st").Op(":=").Id(k.stateType()).Values(jen.Dict{
			id("D"):   id("D"),
			id("acc"): jen.Make(jen.Index().Float32(), jen.Lit(k.br).Op("*").Id("D")),
		})
		if k.lanes {
			state = jen.Id("st").Op(":=").Id(k.stateType()).Values(jen.Dict{
				id("D"):  id("D"),
				id("qt"): jen.Make(jen.Index().Float32(), id("D").Op("*").Lit(k.br)),
				id("ot"): jen.Make(jen.Index().Float32(), id("D").Op("*").Lit(k.br)),
			})
		}
		body = []jen.Code{
			id("blocks").Op(":=").Parens(id("S").Op("+").Lit(k.br - 1)).Op("/").Lit(k.br).Comment(fmt.Sprintf("blocks of %d query rows per head", k.br)),
			state,
			units,
		}
		doc = strings.NewReplacer(fmt.Sprintf(" of the %d units", k.units()), " of the units", fmt.Sprintf(" of the %d,", k.units()), ",").Replace(doc)
		f.Add(golang.Comment(doc))
		f.Func().Id(k.workFn()).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32(), jen.List(id("S"), id("D"), id("units"), id("t")).Int()).Block(body...)
		return
	}
	f.Add(golang.Comment(doc))
	f.Func().Id(k.workFn()).Params(jen.List(id("out"), id("q"), id("k"), id("v")).Index().Float32(), id("t").Int()).Block(body...)
}

// rowsUnit returns the body of the loop over a goroutine's units in the
// rows layout: reset the state of the unit's rows, fold in the key blocks
// (causal: up to the unit's last row), store.
func (k kernel) rowsUnit() []jen.Code {
	id := jen.Id
	var sd jen.Code = jen.Lit(k.s * k.d)
	if k.generic {
		sd = jen.Parens(id("S").Op("*").Id("D"))
	}
	state := []jen.Code{
		jen.Clear(id("st").Dot("acc").Index(jen.Empty(), id("rows").Op("*").Id("D"))),
		jen.For(id("r").Op(":=").Range().Id("rows")).Block(
			id("st").Dot("m").Index(id("r")).Op("=").Op("-").Qual("math", "MaxFloat32").
				Comment("not -Inf: -Inf-(-Inf) would be NaN"),
			id("st").Dot("l").Index(id("r")).Op("=").Add(k.zero()),
		),
	}
	keys := func(j0 jen.Code, cols int) jen.Code {
		lo := id("base").Op("+").Add(j0).Op("*").Id("D")
		hi := id("base").Op("+").Parens(jen.Add(j0).Op("+").Lit(cols)).Op("*").Id("D")
		return id(k.keysFn(cols)).Call(jen.Op("&").Id("st"), id("qs"),
			id("k").Index(lo, hi), id("v").Index(jen.Add(lo.Clone()), jen.Add(hi.Clone())), id("rows"))
	}
	var loop []jen.Code
	full := k.s - k.s%k.bc
	switch {
	case k.generic:
		loop = k.genericLoop()
	case k.causal:
		loop = k.causalLoop(full)
	default:
		if full > 0 {
			loop = append(loop, jen.For(id("j0").Op(":=").Lit(0), id("j0").Op("<").Lit(full), id("j0").Op("+=").Lit(k.bc)).Block(
				keys(id("j0"), k.bc),
			))
		}
		if full < k.s {
			loop = append(loop, keys(jen.Lit(full), k.s-full))
		}
	}
	return append(append(append([]jen.Code{
		id("base").Op(":=").Id("u").Op("/").Id("blocks").Op("*").Add(sd),
		id("i0").Op(":=").Id("u").Op("%").Id("blocks").Op("*").Lit(k.br),
		id("rows").Op(":=").Min(jen.Lit(k.br), id("S").Op("-").Id("i0")),
		id("qs").Op(":=").Id("q").Index(id("base").Op("+").Id("i0").Op("*").Id("D"), id("base").Op("+").Parens(id("i0").Op("+").Id("rows")).Op("*").Id("D")),
	}, state...), loop...),
		id(k.storeFn()).Call(jen.Op("&").Id("st"),
			id("out").Index(id("base").Op("+").Id("i0").Op("*").Id("D"), id("base").Op("+").Parens(id("i0").Op("+").Id("rows")).Op("*").Id("D")),
			id("rows")),
	)
}

// genericLoop returns the loop of a generic unit over the key blocks: every
// block, the last partial one included, goes through the keys function of
// bc keys with its number of keys, cols, an argument. A causal unit meets
// the blocks entirely at or below the diagonal unmasked, then the blocks
// up to its last row masked, as causalLoop does.
func (k kernel) genericLoop() []jen.Code {
	id := jen.Id
	call := func(fn string, masked bool) jen.Code {
		lo := id("base").Op("+").Id("j0").Op("*").Id("D")
		hi := id("base").Op("+").Parens(id("j0").Op("+").Id("cols")).Op("*").Id("D")
		args := []jen.Code{jen.Op("&").Id("st"), id("qs"),
			id("k").Index(lo, hi), id("v").Index(jen.Add(lo.Clone()), jen.Add(hi.Clone())), id("rows"), id("cols")}
		if masked {
			args = append(args, id("j0").Op("-").Id("i0"))
		}
		return id(fn).Call(args...)
	}
	cols := id("cols").Op(":=").Min(jen.Lit(k.bc), id("S").Op("-").Id("j0"))
	if !k.causal {
		return []jen.Code{jen.For(id("j0").Op(":=").Lit(0), id("j0").Op("<").Id("S"), id("j0").Op("+=").Lit(k.bc)).Block(
			cols, call(k.keysFn(k.bc), false))}
	}
	return []jen.Code{
		id("j0").Op(":=").Lit(0),
		jen.Comment("Full blocks below the diagonal, then the blocks up to the unit's last row."),
		jen.For(jen.Empty(), id("j0").Op("+").Lit(k.bc).Op("<=").Min(id("i0").Op("+").Lit(1), id("S")), id("j0").Op("+=").Lit(k.bc)).Block(
			id("cols").Op(":=").Lit(k.bc), call(k.keysFn(k.bc), false),
		),
		jen.For(jen.Empty(), id("j0").Op("<").Min(id("i0").Op("+").Id("rows"), id("S")), id("j0").Op("+=").Lit(k.bc)).Block(
			cols, call(k.maskedFn(k.bc), true),
		),
	}
}

// causalLoop returns the loop of a causal unit over the key blocks, up to
// the one holding key i0+rows-1, the unit's last row: full blocks entirely
// at or below the diagonal (every key ≤ i0) unmasked, then the full blocks
// up to that key masked, then the last, partial block masked if the unit
// reaches it. A masked block of keys j0… gets j0-i0: key c of it is masked
// for row r where c+j0 > r+i0. Blocks above the diagonal are never met.
func (k kernel) causalLoop(full int) []jen.Code {
	id := jen.Id
	call := func(fn string, j0 jen.Code, cols int, masked bool) jen.Code {
		lo := id("base").Op("+").Add(j0).Op("*").Id("D")
		hi := id("base").Op("+").Parens(jen.Add(j0).Op("+").Lit(cols)).Op("*").Id("D")
		args := []jen.Code{jen.Op("&").Id("st"), id("qs"),
			id("k").Index(lo, hi), id("v").Index(jen.Add(lo.Clone()), jen.Add(hi.Clone())), id("rows")}
		if masked {
			args = append(args, jen.Add(j0).Op("-").Id("i0"))
		}
		return id(fn).Call(args...)
	}
	var loop []jen.Code
	if full > 0 {
		loop = append(loop,
			id("j0").Op(":=").Lit(0),
			jen.Comment("Blocks below the diagonal, then across it."),
			jen.For(jen.Empty(), id("j0").Op("+").Lit(k.bc).Op("<=").Min(id("i0").Op("+").Lit(1), jen.Lit(full)), id("j0").Op("+=").Lit(k.bc)).Block(
				call(k.keysFn(k.bc), id("j0"), k.bc, false),
			),
			jen.For(jen.Empty(), id("j0").Op("<").Min(id("i0").Op("+").Id("rows"), jen.Lit(full)), id("j0").Op("+=").Lit(k.bc)).Block(
				call(k.maskedFn(k.bc), id("j0"), k.bc, true),
			),
		)
	}
	if full < k.s {
		last := call(k.maskedFn(k.s-full), jen.Lit(full), k.s-full, true)
		if full > 0 {
			last = jen.If(jen.Lit(full).Op("<").Id("i0").Op("+").Id("rows")).Block(last)
		}
		loop = append(loop, last)
	}
	return loop
}

// emitKeys emits the function that folds a block of cols keys and values
// into the state of rows query rows: per row the scores, the new maximum,
// the weights e^(score-max), and the output rows rescaled by e^(old max-new
// max) plus the weighted values. The masked variant, for causal kernels,
// takes off = j0-i0 and lets row r meet only the n = min(cols, r-off+1)
// keys at or below the diagonal: the scores of the others are -Inf, whose
// weights are 0, and the weighted sum stops at n. A row that meets none is
// left alone; none is all -Inf over the whole unit, as key 0 is in every row.
func (k kernel) emitKeys(f *jen.File, cols int, masked bool) {
	v, id := k.v, jen.Id
	fn, keys := k.keysFn(cols), jen.Id("cols")
	if masked {
		fn, keys = k.maskedFn(cols), jen.Id("n")
	}
	body := []jen.Code{
		jen.Const().Defs(
			id("D").Op("=").Lit(k.d),
			id("cols").Op("=").Lit(cols),
			id("scale").Op("=").Id(f32Text(float32(1/math.Sqrt(float64(k.d))))).Comment("1/√D"),
		),
	}
	if k.generic {
		body = []jen.Code{
			id("D").Op(":=").Id("st").Dot("D"),
			id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Float64().Call(id("D")))),
		}
	}
	body = append(body, k.exp.Consts()...)

	var row []jen.Code
	if masked {
		row = append(row,
			id("n").Op(":=").Min(id("cols"), id("r").Op("-").Id("off").Op("+").Lit(1)).Comment("keys c+j0 ≤ r+i0"),
			jen.If(id("n").Op("<=").Lit(0)).Block(jen.Continue().Comment("row i0+r is above the whole block")),
		)
	}
	row = append(row,
		id("qr").Op(":=").Id("q").Index(id("r").Op("*").Id("D"), id("r").Op("*").Id("D").Op("+").Id("D")),
		id("mOld").Op(":=").Id("st").Dot("m").Index(id("r")),
		id("mNew").Op(":=").Id("mOld"),
		jen.Var().Id("p").Index(k.colsCap()).Float32(),
		jen.Line(),
		jen.Comment("The scores, scaled, and their maximum."),
		jen.For(id("c").Op(":=").Range().Add(keys)).Block(k.score()...),
	)
	if masked {
		row = append(row,
			jen.For(id("c").Op(":=").Id("n"), id("c").Op("<").Id("cols"), id("c").Op("++")).Block(
				id("p").Index(id("c")).Op("=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))).Comment("masked: e^-Inf = 0"),
			),
		)
	}
	row = append(row,
		jen.Line(),
		jen.Comment("The weights e^(score-mNew), into p, and their sum."),
		id("mv").Op(":=").Add(k.bcast(id("mNew"))),
		jen.Var().Id("sum").Add(v.Type()),
	)
	if k.generic && !v.Scalar() {
		row = append(row, id("ps").Op(":=").Id("p").Index(jen.Empty(), id("cols")).Comment("the weights end at cols: a partial vector stops there"))
	}
	row = append(row, k.sweep("c", cols, id("cols"), 1, func(st golang.Step) []jen.Code {
		x, e := "x"+strconv.Itoa(st.U), "e"+strconv.Itoa(st.U)
		var load jen.Code
		switch {
		case st.Part && k.generic:
			load = id(k.tailFn(0)).Call(id("ps").Index(st.At, jen.Empty()))
		case st.Part:
			load = id(k.tailFn(cols % v.Lanes())).Call(id("p").Index(st.At, jen.Empty()))
		default:
			load = v.Load(id("p"), st.At)
		}
		stmts := []jen.Code{id(x).Op(":=").Add(v.Sub(load, id("mv")))}
		stmts = append(stmts, k.exp.Emit(e, x, "w")...)
		var store jen.Code
		switch {
		case st.Part && k.generic:
			store = v.StorePart(id(e), id("ps"), st.At)
		case st.Part:
			store = v.StorePart(id(e), id("p"), st.At)
		default:
			store = v.Store(id(e), id("p"), st.At)
		}
		return append(stmts, store, id("sum").Op("=").Add(v.Add(id("sum"), id(e))))
	})...)
	row = append(row,
		jen.Line(),
		jen.Comment("Rescale the running sum and output row from mOld to mNew, only when the maximum grew:"),
		jen.Comment("e^0 is not exactly 1 in the polynomial exps, and S/bc rescalings by it would weigh early keys less."),
		id("alpha").Op(":=").Add(v.Splat(jen.Lit(1))),
		jen.If(id("mNew").Op(">").Id("mOld")).Block(append(append([]jen.Code{
			id("xa").Op(":=").Add(v.Sub(k.bcast(id("mOld")), id("mv"))),
		}, k.exp.Emit("ea", "xa", "a")...), id("alpha").Op("=").Id("ea"))...),
	)
	row = append(row,
		id("st").Dot("l").Index(id("r")).Op("=").Add(v.MulAdd(id("st").Dot("l").Index(id("r")), id("alpha"), id("sum"))),
		id("ar").Op(":=").Id("st").Dot("acc").Index(id("r").Op("*").Id("D"), id("r").Op("*").Id("D").Op("+").Id("D")),
	)
	row = append(row, k.accumulate(keys)...)
	row = append(row, id("st").Dot("m").Index(id("r")).Op("=").Id("mNew"))
	body = append(body, jen.For(id("r").Op(":=").Range().Id("rows")).Block(row...))

	doc := fmt.Sprintf("%s folds a block of %d keys k and values v (row-major, %d×%d) into the state of the "+
		"first rows query rows of q.", fn, cols, cols, k.d)
	params := []jen.Code{
		id("st").Op("*").Id(k.stateType()),
		jen.List(id("q"), id("k"), id("v")).Index().Float32(),
		id("rows").Int(),
	}
	if masked {
		doc = fmt.Sprintf("%s folds a block of %d keys k and values v (row-major, %d×%d), the keys j0… of a head, into "+
			"the state of the first rows query rows i0… of q, causally: off is j0-i0, and key c meets row r only "+
			"if c+j0 ≤ r+i0.", fn, cols, cols, k.d)
		params[2] = jen.List(id("rows"), id("off")).Int()
	}
	if k.generic {
		doc = fmt.Sprintf("%s folds a block of cols ≤ %d keys k and values v (row-major, cols×D) into the state of the "+
			"first rows query rows of q.", fn, k.bc)
		params[2] = jen.List(id("rows"), id("cols")).Int()
		if masked {
			doc = fmt.Sprintf("%s folds a block of cols ≤ %d keys k and values v (row-major, cols×D), the keys j0… of a head, "+
				"into the state of the first rows query rows i0… of q, causally: off is j0-i0, and key c meets row r only "+
				"if c+j0 ≤ r+i0.", fn, k.bc)
			params[2] = jen.List(id("rows"), id("cols"), id("off")).Int()
		}
	}
	f.Add(golang.Comment(doc))
	f.Func().Id(fn).Params(params...).Block(body...)
}

// score returns the body of the loop over keys c: the dot product of the
// query row qr and key row kr with up to maxAccs accumulators, scaled, into
// p[c], and the running maximum mNew.
func (k kernel) score() []jen.Code {
	v, id := k.v, jen.Id
	unroll := min(maxAccs, max(1, k.d/v.Lanes()))
	if k.generic {
		unroll = maxAccs
	}
	accs := make([]jen.Code, unroll)
	for u := range accs {
		accs[u] = id("a" + strconv.Itoa(u))
	}
	out := []jen.Code{
		id("kr").Op(":=").Id("k").Index(id("c").Op("*").Id("D"), id("c").Op("*").Id("D").Op("+").Id("D")),
		jen.Var().List(accs...).Add(v.Type()),
	}
	out = append(out, k.sweep("d", k.d, id("D"), unroll, func(st golang.Step) []jen.Code {
		acc := id("a" + strconv.Itoa(st.U))
		return []jen.Code{jen.Add(acc).Op("=").Add(v.MulAdd(k.load("qr", st.At, st.Part), k.load("kr", st.At, st.Part), acc))}
	})...)
	dot := v.Tree(golang.ReduceSum, accs...)
	if v.Scalar() {
		if unroll > 1 {
			dot = jen.Parens(dot)
		}
	} else {
		dot = id(k.hsum()).Call(dot)
	}
	return append(out,
		id("s").Op(":=").Add(dot).Op("*").Id("scale"),
		id("p").Index(id("c")).Op("=").Id("s"),
		id("mNew").Op("=").Max(id("mNew"), id("s")),
	)
}

// accumulate returns the code that sets the output row ar to ar·alpha +
// Σ_c p[c]·v[c] over c < keys (cols, or n when masked): the row in groups of up to maxAccs vectors held in
// registers while the keys go by, a loop over the groups that fill it and
// one block for the rest, which ends in the partial vector when D is not a
// multiple of vec.
func (k kernel) accumulate(keys jen.Code) []jen.Code {
	v, id := k.v, jen.Id
	lanes := v.Lanes()
	nv := k.d / lanes
	group := min(maxAccs, max(1, nv))
	at := func(base jen.Code, off int) jen.Code {
		if off == 0 {
			return base
		}
		return jen.Add(base).Op("+").Lit(off)
	}
	type slot struct {
		at   jen.Code
		part bool
	}
	body := func(slots []slot) []jen.Code {
		var pre, inner, post []jen.Code
		for u, s := range slots {
			o := id("o" + strconv.Itoa(u))
			pre = append(pre, jen.Add(o).Op(":=").Add(v.Mul(k.load("ar", s.at, s.part), id("alpha"))))
			inner = append(inner, jen.Add(o).Op("=").Add(v.MulAdd(k.load("vr", s.at, s.part), id("pc"), o)))
			if s.part {
				post = append(post, v.StorePart(o, id("ar"), s.at))
			} else {
				post = append(post, v.Store(o, id("ar"), s.at))
			}
		}
		loop := jen.For(id("c").Op(":=").Range().Add(keys)).Block(append([]jen.Code{
			id("pc").Op(":=").Add(k.bcast(id("p").Index(id("c")))),
			id("vr").Op(":=").Id("v").Index(id("c").Op("*").Id("D"), id("c").Op("*").Id("D").Op("+").Id("D")),
		}, inner...)...)
		return append(append(pre, loop), post...)
	}
	if k.generic {
		// D is known at run time only: groups of maxAccs vectors, single
		// vectors, and the partial one, each tested at run time.
		var out []jen.Code
		var slots []slot
		for u := range maxAccs {
			slots = append(slots, slot{at(id("d"), u*lanes), false})
		}
		out = append(out, id("d").Op(":=").Lit(0))
		if lanes*maxAccs > 1 {
			out = append(out, jen.For(jen.Empty(), id("d").Op("+").Lit(maxAccs*lanes).Op("<=").Id("D"), id("d").Op("+=").Lit(maxAccs*lanes)).Block(body(slots)...))
		}
		out = append(out, jen.For(jen.Empty(), id("d").Op("+").Lit(lanes).Op("<=").Id("D"), id("d").Op("+=").Lit(lanes)).Block(body(slots[:1])...))
		if !v.Scalar() {
			out = append(out, jen.If(id("d").Op("<").Id("D")).Block(body([]slot{{id("d"), true}})...))
		}
		return []jen.Code{jen.Block(out...)}
	}
	var out []jen.Code
	loopEnd := nv / group * group * lanes
	if loopEnd > 0 {
		var slots []slot
		for u := range group {
			slots = append(slots, slot{at(id("d"), u*lanes), false})
		}
		out = append(out, jen.For(id("d").Op(":=").Lit(0), id("d").Op("<").Lit(loopEnd), id("d").Op("+=").Lit(group*lanes)).Block(body(slots)...))
	}
	var rest []slot
	for off := loopEnd; off < nv*lanes; off += lanes {
		rest = append(rest, slot{jen.Lit(off), false})
	}
	if nv*lanes < k.d {
		rest = append(rest, slot{jen.Lit(nv * lanes), true})
	}
	if len(rest) > 0 {
		out = append(out, jen.Block(body(rest)...))
	}
	return out
}

// emitTail emits the function that loads the last n weights' arguments of
// a block, s, with -Inf in the other lanes: e^-Inf is 0, so they add
// nothing to the sum.
func (k kernel) emitTail(f *jen.File, n int) {
	v := k.v
	f.Add(golang.Comment(fmt.Sprintf("%s returns the first %d elements of s and -Inf in the other lanes, "+
		"whose exponentials add nothing to a sum.", k.tailFn(n), n)))
	negInf := v.Splat(jen.Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))))
	f.Func().Id(k.tailFn(n)).Params(jen.Id("s").Index().Float32()).Add(v.Type()).Block(
		jen.Return(v.LoadPart(jen.Id("s"), nil).Dot("Merge").Call(negInf, v.TailMask(n))),
	)
}

// emitStore emits the function that writes the finished rows: out = acc/l.
func (k kernel) emitStore(f *jen.File) {
	v, id := k.v, jen.Id
	var total jen.Code = id("st").Dot("l").Index(id("r"))
	if !v.Scalar() {
		total = id(k.hsum()).Call(total)
	}
	row := []jen.Code{
		id("inv").Op(":=").Add(k.bcast(jen.Lit(1).Op("/").Add(total))),
		id("ar").Op(":=").Id("st").Dot("acc").Index(id("r").Op("*").Id("D"), id("r").Op("*").Id("D").Op("+").Id("D")),
		id("o").Op(":=").Id("out").Index(id("r").Op("*").Id("D"), id("r").Op("*").Id("D").Op("+").Id("D")),
	}
	row = append(row, k.sweep("d", k.d, id("D"), 1, func(st golang.Step) []jen.Code {
		x := v.Mul(k.load("ar", st.At, st.Part), id("inv"))
		if st.Part {
			return []jen.Code{v.StorePart(x, id("o"), st.At)}
		}
		return []jen.Code{v.Store(x, id("o"), st.At)}
	})...)
	f.Add(golang.Comment(fmt.Sprintf("%s writes the first rows finished rows of st to out: the output rows divided by their sums.", k.storeFn())))
	d := jen.Const().Id("D").Op("=").Lit(k.d)
	if k.generic {
		d = id("D").Op(":=").Id("st").Dot("D")
	}
	f.Func().Id(k.storeFn()).Params(id("st").Op("*").Id(k.stateType()), id("out").Index().Float32(), id("rows").Int()).Block(
		d,
		jen.For(id("r").Op(":=").Range().Id("rows")).Block(row...),
	)
}

// sweep returns the loops over n elements, with literal bounds, or, in a
// generic kernel, the run-time length nVar.
func (k kernel) sweep(index string, n int, nVar jen.Code, unroll int, body func(golang.Step) []jen.Code) []jen.Code {
	if k.generic {
		return k.v.SweepN(index, nVar, unroll, body)
	}
	return k.v.Sweep(index, n, unroll, body)
}

// colsCap is the length of a keys function's weights: its block's keys,
// or bc in a generic kernel, whose blocks may be shorter.
func (k kernel) colsCap() jen.Code {
	if k.generic {
		return jen.Lit(k.bc)
	}
	return jen.Id("cols")
}

// load returns the vector of row at at; a partial vector has zeros in the
// lanes past the end of the row, which add nothing to a dot product and
// are never stored.
func (k kernel) load(row string, at jen.Code, part bool) *jen.Statement {
	if part {
		return k.v.LoadPart(jen.Id(row), at)
	}
	return k.v.Load(jen.Id(row), at)
}

// bcast returns the float32 x as a vector; scalar code uses it as is.
func (k kernel) bcast(x jen.Code) jen.Code {
	if k.v.Scalar() {
		return x
	}
	return k.v.Splat(x)
}

// zero returns the zero vector.
func (k kernel) zero() jen.Code {
	if k.v.Scalar() {
		return jen.Lit(0)
	}
	return k.v.Type().Values()
}

// f32Text returns x as the shortest decimal that rounds to x as a float32.
func f32Text(x float32) string {
	return strconv.FormatFloat(float64(x), 'g', -1, 32)
}
