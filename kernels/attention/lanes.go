package attention

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
)

// The lanes layout (see the package doc) puts the query rows of a unit in
// the lanes of the vectors: the unit's queries, its scores and weights and
// its output are all kept transposed, query row i in lane i mod vec. Both
// products are then register-tiled outer products, like gemm's
// micro-kernels, and the softmax runs down the columns of the transposed
// scores with no horizontal sums.

func (k kernel) loadFn() string    { return k.name + "Load" }
func (k kernel) scoresFn() string  { return k.name + "Scores" }
func (k kernel) maskFn() string    { return k.name + "Mask" }
func (k kernel) softmaxFn() string { return k.name + "Softmax" }
func (k kernel) valuesFn() string  { return k.name + "Values" }

// asmFile returns the Go assembly of k's register tiles and online
// softmax, or nil when k's tiles are Go: for amd64, or for NEON (arm64)
// at 4 lanes.
func (k kernel) asmFile() []byte {
	if k.width == neon.Lanes {
		return k.neonFile()
	}
	src := goasm.File(k.asmTiles()...)
	if k.asmSoftmax() {
		src = append(src, k.softmaxAsm()...)
	}
	if k.dot {
		src = append(src, k.weightPairsAsm()...)
	}
	return src
}

// asmTiles returns the register tiles of a lanes kernel with micro=asm, in
// the order the Go code declares them: the scores' tiles (scoresTiles),
// the output's tiles of mr rows of D and of the D mod mr rows left. Nil
// for Go tiles.
func (k kernel) asmTiles() []goasm.Tile {
	if !k.asm {
		return nil
	}
	lanes, br := k.width, 4*k.br
	scores := func(keys int) goasm.Tile {
		return goasm.Tile{
			Name: k.scoresTile(keys), Lanes: lanes, MR: keys, NV: k.nv(), Depth: k.d,
			ARow: 4 * k.d, AStep: 4, BStep: br, CRow: br, Init: goasm.Zero,
		}
	}
	if k.dot {
		// A step of the scores is a pair of D: a key's pairs are the first
		// D2 words of its row of D (dot.go), the queries' the rows of qt.
		// A step of the output (Dot above) is a pair of keys: v's pairs
		// are the first rows of the block's (dot.go), p's its first rows
		// (weightPairs).
		scores = func(keys int) goasm.Tile {
			return goasm.Tile{
				Name: k.scoresTile(keys), Lanes: lanes, MR: keys, NV: k.nv(), Depth: pairs(k.d),
				ARow: 4 * k.d, AStep: 4, BStep: br, CRow: br, Init: goasm.Zero, Dot: true,
			}
		}
	}
	values := func(rows int) goasm.Tile {
		return goasm.Tile{
			Name: k.valuesTile(rows), Lanes: lanes, MR: rows, NV: k.nv(),
			ARow: 4, AStep: 4 * k.d, BStep: br, CRow: br, Init: goasm.Scaled, Dot: k.dot,
		}
	}
	if k.generic {
		// D at run time: the scores' depth and a's rows, the output's
		// steps of v; the rows of D past the last full tile one at a time.
		scores = func(keys int) goasm.Tile {
			return goasm.Tile{
				Name: k.scoresTile(keys), Lanes: lanes, MR: keys, NV: k.nv(),
				ARow: goasm.Runtime, AStep: 4, BStep: br, CRow: br, Init: goasm.Zero,
			}
		}
		values := func(rows int) goasm.Tile {
			return goasm.Tile{
				Name: k.valuesTile(rows), Lanes: lanes, MR: rows, NV: k.nv(),
				ARow: 4, AStep: goasm.Runtime, BStep: br, CRow: br, Init: goasm.Scaled,
			}
		}
		tiles := append(k.scoresTiles(scores), values(k.mr()))
		if k.mr() > 1 {
			tiles = append(tiles, values(1))
		}
		return tiles
	}
	tiles := k.scoresTiles(scores)
	mr := min(k.mr(), k.d)
	tiles = append(tiles, values(mr))
	if rest := k.d % mr; rest > 0 {
		tiles = append(tiles, values(rest))
	}
	return tiles
}

// scoresTiles returns the scores' tiles of k made by scores: of mr keys,
// of the rest of a full block (scoresRest) and of one key.
func (k kernel) scoresTiles(scores func(keys int) goasm.Tile) []goasm.Tile {
	tiles := []goasm.Tile{scores(k.mr())}
	if rest := k.scoresRest(); rest > 1 {
		tiles = append(tiles, scores(rest))
	}
	if k.mr() > 1 {
		tiles = append(tiles, scores(1))
	}
	return tiles
}

// scoresRest is the number of keys of a full block of bc past its last
// tile of mr keys, bc mod mr: 4 of 64 keys in tiles of 6. They get one tile
// of their own: one-key tiles, which load nv vectors of queries for each
// broadcast key, took 6% of a kernel's time on them (the package doc).
func (k kernel) scoresRest() int { return k.bc % k.mr() }

func (k kernel) scoresTile(keys int) string { return k.name + "ScoresTile" + strconv.Itoa(keys) }
func (k kernel) valuesTile(rows int) string { return k.name + "ValuesTile" + strconv.Itoa(rows) }

// asmBounds returns the checks that make a call of assembly tiles safe:
// the tiles read and write without bounds checks, so the caller proves
// here, once per call, that the cols rows of s (row-major, D wide) and of
// st.p exist. cols ≥ 1: every key block holds a key.
func asmBounds(s string) []jen.Code {
	id := jen.Id
	return []jen.Code{
		jen.Id("_").Op("=").Id(s).Index(id("cols").Op("*").Id("D").Op("-").Lit(1)).
			Comment("the tiles read " + s + "[:cols*D] and st.p[:cols*BR] unchecked"),
		jen.Id("_").Op("=").Id("st").Dot("p").Index(id("cols").Op("*").Id("BR").Op("-").Lit(1)),
	}
}

// emitLanes emits every function of a lanes kernel but the entry and the
// work loop, which it shares with the rows layout.
func (k kernel) emitLanes(f *jen.File) {
	for _, t := range k.asmTiles() {
		f.Add(t.Decl())
	}
	k.emitLanesLoad(f)
	k.emitLanesScores(f)
	if k.causal {
		k.emitLanesMask(f)
	}
	if k.asmSoftmax() {
		f.Add(k.softmaxAsmDecl())
	} else {
		k.emitLanesSoftmax(f)
	}
	if k.dot {
		f.Add(k.weightPairsDecl())
	}
	k.emitLanesValues(f)
	k.emitLanesStore(f)
}

// emitLanesState emits the type of one goroutine's working memory in the
// lanes layout: O(br·D + bc·br) floats.
func (k kernel) emitLanesState(f *jen.File) {
	f.Add(golang.Comment(fmt.Sprintf("%s is one goroutine's working memory for a block of up to %d query rows, "+
		"row i in column i of every matrix: the query rows scaled by 1/√D, the unnormalised output rows and a block "+
		"of %d keys' scores (then weights), all transposed, and per row the running maximum of the scores, the "+
		"running sum of e^(score-max) and the last rescaling factor.", k.stateType(), k.br, k.bc)))
	if k.generic {
		f.Type().Id(k.stateType()).Struct(
			jen.Id("D").Int().Comment("the length of a row"),
			jen.Id("qt").Index().Float32().Comment(fmt.Sprintf("D·%d: qt[d*BR+i] = q[i][d]/√D; zero past the last row", k.br)),
			jen.Id("ot").Index().Float32().Comment(fmt.Sprintf("D·%d: ot[d*BR+i]: output row i before the division by l[i]", k.br)),
			jen.Id("p").Index(jen.Lit(k.bc*k.br)).Float32().Comment("p[c*BR+i]: key c's score, then weight, for row i"),
			jen.List(jen.Id("m"), jen.Id("l"), jen.Id("alpha")).Index(jen.Lit(k.br)).Float32(),
		)
		return
	}
	f.Type().Id(k.stateType()).Struct(
		jen.Id("qt").Index(jen.Lit(k.d*k.br)).Float32().Comment("qt[d*BR+i] = q[i][d]/√D; zero past the last row"),
		jen.Id("ot").Index(jen.Lit(k.d*k.br)).Float32().Comment("ot[d*BR+i]: output row i before the division by l[i]"),
		jen.Id("p").Index(jen.Lit(k.bc*k.br)).Float32().Comment("p[c*BR+i]: key c's score, then weight, for row i"),
		jen.List(jen.Id("m"), jen.Id("l"), jen.Id("alpha")).Index(jen.Lit(k.br)).Float32(),
	)
}

// lanesUnit returns the body of the loop over a goroutine's units in the
// lanes layout: load the query block, fold in the key blocks (causal: up to
// the unit's last row, masking those that cross the diagonal), store.
func (k kernel) lanesUnit() []jen.Code {
	id := jen.Id
	var sd jen.Code = jen.Lit(k.s * k.d)
	if k.generic {
		sd = jen.Parens(id("S").Op("*").Id("D"))
	}
	st := jen.Op("&").Id("st")
	rowsOf := func(s string, lo, n jen.Code) jen.Code {
		return id(s).Index(id("base").Op("+").Add(lo).Op("*").Id("D"), id("base").Op("+").Parens(jen.Add(lo).Op("+").Add(n)).Op("*").Id("D"))
	}
	block := []jen.Code{
		id("cols").Op(":=").Min(jen.Lit(k.bc), id("S").Op("-").Id("j0")),
		id(k.scoresFn()).Call(st, rowsOf("k", id("j0"), id("cols")), id("cols")),
	}
	end := jen.Id("S")
	if k.causal {
		end = jen.Min(id("S"), id("i0").Op("+").Id("rows")) // keys up to the unit's last row
		block = append(block, jen.If(id("j0").Op("+").Id("cols").Op(">").Id("i0").Op("+").Lit(1)).Block(
			id(k.maskFn()).Call(st, id("cols"), id("j0").Op("-").Id("i0")),
		).Comment("the block crosses the diagonal"))
	}
	block = append(block, k.softmaxCall())
	if k.dot {
		block = append(block, k.weightPairsCall())
	}
	block = append(block, id(k.valuesFn()).Call(st, rowsOf("v", id("j0"), id("cols")), id("cols")))
	return []jen.Code{
		id("base").Op(":=").Id("u").Op("/").Id("blocks").Op("*").Add(sd),
		id("i0").Op(":=").Id("u").Op("%").Id("blocks").Op("*").Lit(k.br),
		id("rows").Op(":=").Min(jen.Lit(k.br), id("S").Op("-").Id("i0")),
		id(k.loadFn()).Call(st, rowsOf("q", id("i0"), id("rows")), id("rows")),
		jen.For(id("j0").Op(":=").Lit(0), id("j0").Op("<").Add(end), id("j0").Op("+=").Lit(k.bc)).Block(block...),
		id(k.storeFn()).Call(st, rowsOf("out", id("i0"), id("rows")), id("rows")),
	}
}

// emitLanesLoad emits the function that starts a unit: the query rows,
// scaled by 1/√D and transposed into qt with zeros in the lanes past the
// last row (their scores are 0 and their outputs never stored), and the
// output, maxima and sums reset.
func (k kernel) emitLanesLoad(f *jen.File) {
	if k.dot {
		k.emitDotLoad(f)
		return
	}
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s starts a unit of the first rows query rows of q (row-major, rows×%s): "+
		"st.qt = qᵀ/√%s with zero columns past rows, st.ot = 0, the maxima at -MaxFloat32 (not -Inf: -Inf-(-Inf) "+
		"would be NaN) and the sums at 0.", k.loadFn(), k.dText(), k.dText())))
	consts := []jen.Code{jen.Const().Defs(
		id("D").Op("=").Lit(k.d),
		id("BR").Op("=").Lit(k.br),
		id("scale").Op("=").Id(f32Text(float32(1/math.Sqrt(float64(k.d))))).Comment("1/√D"),
	)}
	if k.generic {
		consts = []jen.Code{
			jen.Const().Id("BR").Op("=").Lit(k.br),
			id("D").Op(":=").Id("st").Dot("D"),
			id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Qual("math", "Sqrt").Call(jen.Float64().Call(id("D")))),
		}
	}
	f.Func().Id(k.loadFn()).Params(id("st").Op("*").Id(k.stateType()), id("q").Index().Float32(), id("rows").Int()).Block(
		append(consts,
			jen.For(id("i").Op(":=").Range().Id("rows")).Block(
				jen.For(jen.List(id("d"), id("x")).Op(":=").Range().Id("q").Index(id("i").Op("*").Id("D"), id("i").Op("*").Id("D").Op("+").Id("D"))).Block(
					id("st").Dot("qt").Index(id("d").Op("*").Id("BR").Op("+").Id("i")).Op("=").Id("x").Op("*").Id("scale"),
				),
			),
			jen.For(id("i").Op(":=").Id("rows"), id("i").Op("<").Id("BR"), id("i").Op("++")).Block(
				jen.For(id("d").Op(":=").Range().Id("D")).Block(
					id("st").Dot("qt").Index(id("d").Op("*").Id("BR").Op("+").Id("i")).Op("=").Lit(0),
				),
			),
			jen.Clear(id("st").Dot("ot").Index(jen.Empty(), jen.Empty())),
			jen.For(id("i").Op(":=").Range().Id("BR")).Block(
				id("st").Dot("m").Index(id("i")).Op("=").Op("-").Qual("math", "MaxFloat32"),
				id("st").Dot("l").Index(id("i")).Op("=").Lit(0),
			),
		)...)
}

// dText is D in generated comments: its value, or "D" in a generic kernel.
func (k kernel) dText() string {
	if k.generic {
		return "D"
	}
	return strconv.Itoa(k.d)
}

// dims returns the declarations of D and BR at the start of a lanes
// function: constants, or D from the state in a generic kernel.
func (k kernel) dims() []jen.Code {
	id := jen.Id
	if k.generic {
		return []jen.Code{jen.Const().Id("BR").Op("=").Lit(k.br), id("D").Op(":=").Id("st").Dot("D")}
	}
	return []jen.Code{jen.Const().Defs(id("D").Op("=").Lit(k.d), id("BR").Op("=").Lit(k.br))}
}

// tile returns one register tile of the lanes layout, an outer product
// over a loop: rows×nv accumulators a{r}{j}, zero or started by init(r,
// j), then for every step, after the statements pre, the nv vectors of
// query lanes load(j) times the broadcast bcast(r), ended by store(r, j).
func (k kernel) tile(rows int, loop jen.Code, pre []jen.Code, init func(r, j int) jen.Code, load func(j int) jen.Code,
	bcast func(r int) jen.Code, store func(r, j int, acc jen.Code) jen.Code) []jen.Code {
	v, id := k.v, jen.Id
	nv := k.nv()
	acc := func(r, j int) jen.Code { return id("a" + strconv.Itoa(r) + strconv.Itoa(j)) }
	var out, decl []jen.Code
	step := append([]jen.Code(nil), pre...)
	for r := range rows {
		for j := range nv {
			if init == nil {
				decl = append(decl, acc(r, j))
			} else {
				out = append(out, jen.Add(acc(r, j)).Op(":=").Add(init(r, j)))
			}
		}
	}
	if decl != nil {
		out = append(out, jen.Var().List(decl...).Add(v.Type()))
	}
	for j := range nv {
		step = append(step, id("b"+strconv.Itoa(j)).Op(":=").Add(load(j)))
	}
	for r := range rows {
		x := "x"
		if r == 0 {
			step = append(step, id(x).Op(":=").Add(bcast(r)))
		} else {
			step = append(step, id(x).Op("=").Add(bcast(r)))
		}
		for j := range nv {
			step = append(step, jen.Add(acc(r, j)).Op("=").Add(v.MulAdd(id("b"+strconv.Itoa(j)), id(x), acc(r, j))))
		}
	}
	out = append(out, jen.Add(loop).Block(step...))
	for r := range rows {
		for j := range nv {
			out = append(out, store(r, j, acc(r, j)))
		}
	}
	return out
}

// nv is the number of vectors of query lanes in a register tile.
func (k kernel) nv() int { return k.cfg.Int("nv") }

// mr is the number of keys, or of D rows of the output, in a register tile.
func (k kernel) mr() int { return k.cfg.Int("mr") }

// lane returns the index of vector j of the tile's query lanes in a
// transposed matrix's row at row: row*BR + g + j·lanes.
func (k kernel) lane(row jen.Code, j int) *jen.Statement {
	at := jen.Add(row).Op("*").Id("BR").Op("+").Id("g")
	if j > 0 {
		at = at.Op("+").Lit(j * k.v.Lanes())
	}
	return at
}

// plus returns (x+off), or x alone when off is 0.
func plus(x string, off int) *jen.Statement {
	if off == 0 {
		return jen.Id(x)
	}
	return jen.Parens(jen.Id(x).Op("+").Lit(off))
}

// emitLanesScores emits the function that computes a key block's scores:
// p[c*BR+i] = qt[·,i]·k[c], in tiles of mr keys × nv vectors of query
// lanes over D, then the bc mod mr keys of a full block in one tile, then
// single keys for the rest of a partial block.
func (k kernel) emitLanesScores(f *jen.File) {
	v, id := k.v, jen.Id
	tile := func(keys int) []jen.Code {
		var out []jen.Code
		for r := range keys {
			out = append(out, id("k"+strconv.Itoa(r)).Op(":=").Id("k").Index(plus("c", r).Op("*").Id("D"), jen.Empty()).Index(jen.Empty(), id("D")))
		}
		return append(out, k.tile(keys, jen.For(id("d").Op(":=").Range().Id("D")), nil, nil,
			func(j int) jen.Code { return v.Load(id("st").Dot("qt"), k.lane(id("d"), j)) },
			func(r int) jen.Code { return k.bcast(id("k" + strconv.Itoa(r)).Index(id("d"))) },
			func(r, j int, acc jen.Code) jen.Code { return v.Store(acc, id("st").Dot("p"), k.lane(plus("c", r), j)) },
		)...)
	}
	mr := k.mr()
	group := k.nv() * k.width
	if k.asm {
		call := func(keys int) jen.Code {
			args := []jen.Code{
				jen.Op("&").Id("st").Dot("p").Index(id("c").Op("*").Id("BR").Op("+").Id("g")),
				jen.Op("&").Id("k").Index(id("c").Op("*").Id("D")),
				jen.Op("&").Id("st").Dot("qt").Index(id("g"))}
			if k.generic {
				args = append(args, id("D"), id("D")) // the rows of k, and the depth
			}
			return id(k.scoresTile(keys)).Call(args...)
		}
		tile = func(keys int) []jen.Code { return []jen.Code{call(keys)} }
	}
	keys := []jen.Code{
		id("c").Op(":=").Lit(0),
		jen.For(jen.Empty(), id("c").Op("+").Lit(mr).Op("<=").Id("cols"), id("c").Op("+=").Lit(mr)).Block(tile(mr)...),
	}
	if rest := k.scoresRest(); rest > 1 {
		keys = append(keys, jen.If(id("c").Op("+").Lit(rest).Op("<=").Id("cols")).Block(
			append(tile(rest), id("c").Op("+=").Lit(rest))...,
		).Comment(fmt.Sprintf("the rest of a full block: %d keys in one tile, not one by one", rest)))
	}
	keys = append(keys, jen.For(jen.Empty(), id("c").Op("<").Id("cols"), id("c").Op("++")).Block(tile(1)...))
	loop := jen.For(id("g").Op(":=").Lit(0), id("g").Op("<").Id("BR"), id("g").Op("+=").Lit(group)).Block(keys...)
	if mr == 1 {
		loop = jen.For(id("g").Op(":=").Lit(0), id("g").Op("<").Id("BR"), id("g").Op("+=").Lit(group)).Block(
			jen.For(id("c").Op(":=").Range().Id("cols")).Block(tile(1)...),
		)
	}
	body := k.dims()
	if k.asm {
		body = append(body, asmBounds("k")...)
	}
	body = append(body, loop)
	f.Add(golang.Comment(fmt.Sprintf("%s sets st.p to the scores of cols keys k (row-major, cols×%s) against the unit's "+
		"query rows, p[c*BR+i] = qt[·,i]·k[c], in register tiles of %d keys × %d query rows.",
		k.scoresFn(), k.dText(), mr, group)))
	f.Func().Id(k.scoresFn()).Params(id("st").Op("*").Id(k.stateType()), id("k").Index().Float32(), id("cols").Int()).Block(body...)
}

// emitLanesMask emits the function that masks the scores of a block
// crossing the diagonal: key c of the block, key j0+c of the head, meets
// query row i, row i0+i, only if j0+c ≤ i0+i, that is i ≥ c+off with
// off = j0-i0; the others' scores become -Inf, whose weights are 0.
func (k kernel) emitLanesMask(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s sets to -Inf the scores in st.p of the keys c above the diagonal of the "+
		"query rows i, those with i < c+off, off being the block's first key minus the unit's first row.", k.maskFn())))
	f.Func().Id(k.maskFn()).Params(id("st").Op("*").Id(k.stateType()), jen.List(id("cols"), id("off")).Int()).Block(
		jen.Const().Id("BR").Op("=").Lit(k.br),
		id("ninf").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
		jen.For(id("c").Op(":=").Range().Id("cols")).Block(
			jen.For(id("i").Op(":=").Range().Min(id("BR"), id("c").Op("+").Id("off"))).Block(
				id("st").Dot("p").Index(id("c").Op("*").Id("BR").Op("+").Id("i")).Op("=").Id("ninf"),
			),
		),
	)
}

// emitLanesSoftmax emits the online softmax step of a key block, one
// vector of query lanes at a time: the new maxima (two chains), the weights
// e^(score-max) in place of the scores and their sums, and the rescaling
// factors alpha = e^(old max - new max), exactly 1 where the maximum did not
// grow (the polynomial exps' e^0 is not exactly 1; see the package doc).
func (k kernel) emitLanesSoftmax(f *jen.File) {
	v, id := k.v, jen.Id
	if k.plain {
		v = golang.Float32(1) // one query row at a time
	}
	lanes := v.Lanes()
	p := func(off int) jen.Code {
		return v.Load(id("st").Dot("p"), plus("c", off).Op("*").Id("BR").Op("+").Id("i"))
	}
	body := []jen.Code{jen.Const().Defs(id("BR").Op("=").Lit(k.br))}
	body = append(body, k.exp.Consts()...)
	// arg is the exp's argument of a score (or old maximum) x:
	// x - mNew, times 1/√D where the scores are not scaled (dot).
	arg := func(x jen.Code) jen.Code { return v.Sub(x, id("mNew")) }
	if k.dot {
		var sv jen.Code = jen.Float32().Call(id("scale"))
		if !v.Scalar() {
			sv = v.Splat(id("scale"))
		}
		body = append(body, jen.Const().Id("scale").Op("=").Id(f32Text(k.scale())).Comment("1/√D"), id("sv").Op(":=").Add(sv))
		arg = func(x jen.Code) jen.Code { return v.Mul(jen.Parens(v.Sub(x, id("mNew"))), id("sv")) }
	}
	grow := []jen.Code{id("xa").Op(":=").Add(arg(id("mOld")))}
	grow = append(grow, k.exp.Emit("ea", "xa", "a")...)
	var alpha []jen.Code
	if v.Scalar() {
		alpha = []jen.Code{
			id("alpha").Op(":=").Float32().Call(jen.Lit(1)),
			jen.If(id("mNew").Op(">").Id("mOld")).Block(append(grow, id("alpha").Op("=").Id("ea"))...),
		}
	} else {
		alpha = append(grow, id("alpha").Op(":=").Id("ea").Dot("Merge").Call(v.Splat(jen.Lit(1)), id("mNew").Dot("Greater").Call(id("mOld"))).
			Comment("ea where the maximum grew, 1 elsewhere"))
	}
	weights := []jen.Code{id("x").Op(":=").Add(arg(p(0)))}
	weights = append(weights, k.exp.Emit("e", "x", "w")...)
	weights = append(weights,
		v.Store(id("e"), id("st").Dot("p"), id("c").Op("*").Id("BR").Op("+").Id("i")),
		id("sum").Op("=").Add(v.Add(id("sum"), id("e"))),
	)
	loop := append([]jen.Code{
		id("mOld").Op(":=").Add(v.Load(id("st").Dot("m"), id("i"))),
		jen.List(id("m0"), id("m1")).Op(":=").List(id("mOld"), id("mOld")),
		id("c").Op(":=").Lit(0),
		jen.For(jen.Empty(), id("c").Op("+").Lit(2).Op("<=").Id("cols"), id("c").Op("+=").Lit(2)).Block(
			id("m0").Op("=").Add(v.Max(id("m0"), p(0))),
			id("m1").Op("=").Add(v.Max(id("m1"), p(1))),
		),
		jen.If(id("c").Op("<").Id("cols")).Block(id("m0").Op("=").Add(v.Max(id("m0"), p(0)))),
		id("mNew").Op(":=").Add(v.Max(id("m0"), id("m1"))),
		jen.Var().Id("sum").Add(v.Type()),
		jen.For(id("c").Op(":=").Range().Id("cols")).Block(weights...),
	}, alpha...)
	loop = append(loop,
		v.Store(v.MulAdd(v.Load(id("st").Dot("l"), id("i")), id("alpha"), id("sum")), id("st").Dot("l"), id("i")),
		v.Store(id("mNew"), id("st").Dot("m"), id("i")),
		v.Store(id("alpha"), id("st").Dot("alpha"), id("i")),
	)
	body = append(body, jen.For(id("i").Op(":=").Lit(0), id("i").Op("<").Id("BR"), id("i").Op("+=").Lit(lanes)).Block(loop...))
	f.Add(golang.Comment(fmt.Sprintf("%s folds the scores of a block of cols keys in st.p into the online softmax of "+
		"the unit's rows: the new running maxima, the weights e^(score-max) in place of the scores, the running sums "+
		"rescaled and grown, and st.alpha, the factor by which the output rows are to be rescaled.", k.softmaxFn())))
	f.Func().Id(k.softmaxFn()).Params(id("st").Op("*").Id(k.stateType()), id("cols").Int()).Block(body...)
}

// emitLanesValues emits the function that rescales the output by alpha and
// adds a block's weighted values: ot[d*BR+i] = alpha[i]·ot[d*BR+i] +
// Σ_c v[c*D+d]·p[c*BR+i], in tiles of mr rows of D × nv vectors of query
// lanes over the block's keys, the last D mod mr rows in a smaller tile.
func (k kernel) emitLanesValues(f *jen.File) {
	v, id := k.v, jen.Id
	ot := id("st").Dot("ot")
	tile := func(rows int, d func(r int) *jen.Statement) []jen.Code {
		out := []jen.Code{}
		for j := range k.nv() {
			out = append(out, id("al"+strconv.Itoa(j)).Op(":=").Add(v.Load(id("st").Dot("alpha"), plus("g", j*v.Lanes()))))
		}
		return append(out, k.tile(rows, jen.For(id("c").Op(":=").Range().Id("cols")), []jen.Code{
			id("vc").Op(":=").Id("v").Index(id("c").Op("*").Id("D").Op("+").Add(d(0)), jen.Empty()).Index(jen.Empty(), jen.Lit(rows)),
		},
			func(r, j int) jen.Code { return v.Mul(v.Load(ot, k.lane(d(r), j)), id("al"+strconv.Itoa(j))) },
			func(j int) jen.Code { return v.Load(id("st").Dot("p"), k.lane(id("c"), j)) },
			func(r int) jen.Code { return k.bcast(id("vc").Index(jen.Lit(r))) },
			func(r, j int, acc jen.Code) jen.Code { return v.Store(acc, ot, k.lane(d(r), j)) },
		)...)
	}
	mr := min(k.mr(), k.d)
	if k.generic {
		mr = k.mr()
	}
	full := k.d - k.d%mr
	group := k.nv() * k.width
	if k.asm {
		tile = func(rows int, d func(r int) *jen.Statement) []jen.Code {
			args := []jen.Code{
				jen.Op("&").Add(ot).Index(d(0).Op("*").Id("BR").Op("+").Id("g")),
				jen.Op("&").Id("v").Index(d(0)),
				jen.Op("&").Id("st").Dot("p").Index(id("g")),
				jen.Op("&").Id("st").Dot("alpha").Index(id("g")),
			}
			if k.generic {
				args = append(args, id("D")) // the steps of v
			}
			steps := id("cols")
			if k.dot {
				steps = jen.Parens(id("cols").Op("+").Lit(1)).Op("/").Lit(2) // pairs of keys
			}
			return []jen.Code{id(k.valuesTile(rows)).Call(append(args, steps)...)}
		}
	}
	inner := []jen.Code{}
	switch {
	case k.generic:
		d := func(r int) *jen.Statement { return plus("d", r) }
		inner = append(inner, id("d").Op(":=").Lit(0),
			jen.For(jen.Empty(), id("d").Op("+").Lit(mr).Op("<=").Id("D"), id("d").Op("+=").Lit(mr)).Block(tile(mr, d)...))
		if mr > 1 {
			inner = append(inner, jen.For(jen.Empty(), id("d").Op("<").Id("D"), id("d").Op("++")).Block(tile(1, d)...))
		}
	case full > 0:
		inner = append(inner, jen.For(id("d").Op(":=").Lit(0), id("d").Op("<").Lit(full), id("d").Op("+=").Lit(mr)).Block(
			tile(mr, func(r int) *jen.Statement { return plus("d", r) })...))
	}
	if rest := k.d - full; rest > 0 && !k.generic {
		inner = append(inner, jen.Block(tile(rest, func(r int) *jen.Statement { return jen.Lit(full + r) })...))
	}
	f.Add(golang.Comment(fmt.Sprintf("%s rescales the unit's output rows by st.alpha and adds the weighted values of a "+
		"block of cols keys, v row-major cols×%s: ot[d*BR+i] = alpha[i]·ot[d*BR+i] + Σ_c v[c*D+d]·p[c*BR+i], in "+
		"register tiles of %d of D × %d query rows.%s", k.valuesFn(), k.dText(), mr, group, k.valuesPairs())))
	body := k.dims()
	if k.asm {
		body = append(body, asmBounds("v")...)
	}
	body = append(body, jen.For(id("g").Op(":=").Lit(0), id("g").Op("<").Id("BR"), id("g").Op("+=").Lit(group)).Block(inner...))
	f.Func().Id(k.valuesFn()).Params(id("st").Op("*").Id(k.stateType()), id("v").Index().Float32(), id("cols").Int()).Block(body...)
}

// emitLanesStore emits the function that ends a unit: out = otᵀ/l for the
// unit's rows.
func (k kernel) emitLanesStore(f *jen.File) {
	id := jen.Id
	f.Add(golang.Comment(fmt.Sprintf("%s writes the first rows finished rows of the unit to out (row-major, rows×%s): "+
		"out[i][d] = ot[d*BR+i]/l[i].", k.storeFn(), k.dText())))
	f.Func().Id(k.storeFn()).Params(id("st").Op("*").Id(k.stateType()), id("out").Index().Float32(), id("rows").Int()).Block(
		append(k.dims(), jen.For(id("i").Op(":=").Range().Id("rows")).Block(
			id("inv").Op(":=").Lit(1).Op("/").Id("st").Dot("l").Index(id("i")),
			id("o").Op(":=").Id("out").Index(id("i").Op("*").Id("D"), id("i").Op("*").Id("D").Op("+").Id("D")),
			jen.For(id("d").Op(":=").Range().Id("o")).Block(
				id("o").Index(id("d")).Op("=").Id("st").Dot("ot").Index(id("d").Op("*").Id("BR").Op("+").Id("i")).Op("*").Id("inv"),
			),
		))...,
	)
}
