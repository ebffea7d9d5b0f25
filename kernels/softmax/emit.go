package softmax

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// kernel is one config of the template for one shape, ready to emit.
type kernel struct {
	name           string
	cfg            schedule.Config
	rows, cols     int
	v              golang.F32 // the zero F32 for NEON, whose vectors are the assembly's only
	lanes          int        // of a vector: vec
	unroll         int
	online         bool
	exp            golang.Exp
	threads, chunk int
	// asm: the rows in assembly (code=asm, asm.go)
	asm bool
	// prefetch: the assembly fetches the next row of src during the sums
	prefetch bool
	// plain: the plain form of a code=asm kernel (emitPlain), whose Go
	// does not import archsimd
	plain bool
	// generic kernels take rows and cols at run time (emitGoGeneric):
	// rows and cols above are then 0.
	generic bool
	// half: the conversions of a kernel that stores bf16 or f16
	// (half.go); its DType is "" for float32
	half golang.Half
	// reg: a 16-bit kernel whose assembly loads and stores the 16-bit
	// elements and converts them in registers (convert=reg, asmhalf.go);
	// otherwise blocks of rows convert into float32 scratch around the
	// float32 rows (half.go)
	reg bool
	// cvtne: a convert=reg kernel of bf16 on Z registers that rounds its
	// stores with VCVTNEPS2BF16 (convert=cvtne, asmhalf.go)
	cvtne bool
	// stream: a convert=reg kernel whose scaling stores dst's whole
	// vectors past the caches (store=stream, asmhalf.go)
	stream bool
}

func emitGo(f *jen.File, name string, shape []int, dt dtype.DType, cfg schedule.Config) {
	rows, cols := checkShape(shape)
	k := newKernel(name, dt, cfg)
	k.rows, k.cols = rows, cols
	// Accumulators beyond the vectors a row holds would stay at their
	// initial values: leave them out.
	k.unroll = min(k.unroll, max(1, cols/k.lanes))
	k.emit(f)
}

// emitGoGeneric is the shape-generic form (goEmitter): the kernel of cfg with rows and
// cols arguments. It keeps every accumulator of the unroll, since no row
// length is known; rows_per_chunk and threads stay as tuned, and a shape
// with fewer chunks than threads starts one goroutine per chunk.
func emitGoGeneric(f *jen.File, name string, dt dtype.DType, cfg schedule.Config) {
	k := newKernel(name, dt, cfg)
	k.generic = true
	k.emit(f)
}

// emitPlain is the plain form (kernels.AMD64Plain): for a code=asm config, the same Go
// as emitGo (emitGoGeneric when shape is nil) without archsimd, so that it
// builds without GOEXPERIMENT=simd. Only the goroutines differ: the
// assembly ends in VZEROUPPER, so they need not clear the vector
// registers' upper halves, which takes archsimd in Go.
func emitPlain(f *jen.File, name string, shape []int, dt dtype.DType, cfg schedule.Config) {
	k := newKernel(name, dt, cfg)
	if !k.asm {
		panic(fmt.Sprintf("softmax: no plain form of %s: its rows are not assembly", cfg))
	}
	k.plain = true
	if shape == nil {
		k.generic = true
	} else {
		k.rows, k.cols = checkShape(shape)
		k.unroll = min(k.unroll, max(1, k.cols/k.lanes)) // as emitGo and emitAsm cap it
	}
	k.emit(f)
}

// goroutine returns the function a goroutine of the kernel runs: body,
// then, for vector Go, the clearing of the upper halves of the vector
// registers (golang.F32.Goroutine).
func (k kernel) goroutine(body ...jen.Code) *jen.Statement {
	if k.plain {
		return jen.Func().Params().Block(body...)
	}
	return k.v.Goroutine(body...)
}

// newKernel returns the kernel of cfg in dtype dt named name, for no
// shape yet.
func newKernel(name string, dt dtype.DType, cfg schedule.Config) kernel {
	lanes := cfg.Int("vec")
	var v golang.F32
	if lanes != neon.Lanes {
		v = golang.Float32(lanes)
	}
	degree, ok := expDegree[cfg.Str("exp")]
	if !ok {
		panic(fmt.Sprintf("softmax: unknown exp %q in %s", cfg.Str("exp"), cfg))
	}
	var half golang.Half
	asm := cfg.Str("code") == "asm"
	convert := cfg.Str("convert")
	reg := dt.Size() == 2 && asm && (convert == "reg" || convert == cvtne)
	if dt.Size() == 2 {
		// Whole vectors convert in assembly at the kernel's own level:
		// amd64's vectors mean AVX2 at least (goasm.Half). NEON's kernels
		// convert in Go.
		half = golang.Half{Prefix: name + "Half", DType: dt, Asm: lanes > neon.Lanes && !reg}
	}
	var exp golang.Exp
	if degree != 3 { // poly3 is the assembly's only (poly3_needs_amd64_asm)
		exp = golang.NewExp(v, degree)
	}
	return kernel{
		half:   half,
		reg:    reg,
		cvtne:  reg && convert == cvtne && dt == dtype.BF16 && lanes == asmLanes,
		stream: reg && cfg.Str("store") == "stream",
		name:   name, cfg: cfg,
		v:        v,
		lanes:    lanes,
		unroll:   cfg.Int("unroll"),
		online:   cfg.Str("algo") == "online",
		exp:      exp,
		threads:  cfg.Int("threads"),
		chunk:    cfg.Int("rows_per_chunk"),
		asm:      asm,
		prefetch: cfg.Bool("prefetch"),
	}
}

// emit emits every function of k.
func (k kernel) emit(f *jen.File) {
	v := k.v
	k.emitEntry(f)
	if k.threads > 1 {
		k.emitChunks(f)
	}
	if k.half.DType != "" && !k.reg {
		k.emitHalfRows(f)
	}
	if k.asm {
		k.emitAsmRows(f)
		return
	}
	k.emitRows(f)
	switch {
	case k.generic && !v.Scalar():
		f.Add(v.InfTail(k.tailFn()))
	case k.hasTail():
		k.emitTail(f)
	}
	if !v.Scalar() {
		f.Add(v.HorizontalFunc(k.hmax(), golang.ReduceMax))
		f.Add(v.HorizontalFunc(k.hsum(), golang.ReduceSum))
	}
}

func (k kernel) rowsFn() string   { return k.name + "Rows" }
func (k kernel) chunksFn() string { return k.name + "Chunks" }
func (k kernel) hmax() string     { return k.name + "Max" }
func (k kernel) hsum() string     { return k.name + "Sum" }

// emitEntry emits the exported function: it checks the slices once, then
// runs rows on the calling goroutine alone or splits them into chunks among
// threads goroutines, the caller being one of them.
func (k kernel) emitEntry(f *jen.File) {
	need := ""
	switch k.v.Lanes() {
	case 8:
		need = " It uses archsimd.Float32x8 and needs AVX2 and FMA."
	case 16:
		need = " It uses archsimd.Float32x16 and needs AVX-512."
	}
	if k.plain {
		need = fmt.Sprintf(" It calls Go assembly on %s and needs it; its Go does not use archsimd.", k.asmISA())
	}
	if dt := k.half.DType; dt != "" {
		need = fmt.Sprintf(" dst and src hold %s, as their 16 bits; it computes in float32 and rounds dst to nearest even.", dt) + need
	}
	if k.generic {
		k.emitGenericEntry(f, need)
		return
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to dst the softmax of each row of the %d×%d row-major matrix src: "+
		"dst[r][c] = e^(src[r][c]-m) / Σ e^(src[r][i]-m), m the row's maximum. "+
		"A row that is all -Inf gives NaN, as the float64 reference does.\n\n"+
		"Generated by autotune's softmax template for %s.%s", k.name, k.rows, k.cols, k.cfg, need)))
	dst, src := jen.Id("dst"), jen.Id("src")
	body := []jen.Code{
		jen.Const().List(jen.Id("rows"), jen.Id("cols")).Op("=").List(jen.Lit(k.rows), jen.Lit(k.cols)),
		jen.List(dst, src).Op("=").List(
			jen.Add(dst).Index(jen.Empty(), jen.Id("rows").Op("*").Id("cols")),
			jen.Add(src).Index(jen.Empty(), jen.Id("rows").Op("*").Id("cols")),
		).Comment("one bounds check, here rather than in a goroutine"),
	}
	body = append(body, k.split().Run()...)
	f.Func().Id(k.name).Params(jen.List(dst, src).Index().Add(k.elem())).Block(body...)
}

// emitGenericEntry is emitEntry for a generic kernel: rows and cols are
// arguments, and a shape with fewer chunks of rows than threads starts
// one goroutine per chunk. The chunks are still dealt with a stride of
// threads, so goroutine t < chunks gets exactly chunk t.
func (k kernel) emitGenericEntry(f *jen.File, need string) {
	f.Add(golang.Comment(fmt.Sprintf("%s writes to dst the softmax of each row of the rows×cols row-major matrix src: "+
		"dst[r][c] = e^(src[r][c]-m) / Σ e^(src[r][i]-m), m the row's maximum. "+
		"A row that is all -Inf gives NaN, as the float64 reference does. It panics if dst or src is shorter than rows·cols.\n\n"+
		"Generated by autotune's softmax template, shape-generic, for %s.%s", k.name, k.cfg, need)))
	dst, src, rows, cols := jen.Id("dst"), jen.Id("src"), jen.Id("rows"), jen.Id("cols")
	body := []jen.Code{
		jen.List(dst, src).Op("=").List(
			jen.Add(dst).Index(jen.Empty(), jen.Add(rows).Op("*").Add(cols)),
			jen.Add(src).Index(jen.Empty(), jen.Add(rows).Op("*").Add(cols)),
		).Comment("one bounds check, here rather than in a goroutine"),
	}
	body = append(body, k.split().Run()...)
	f.Func().Id(k.name).Params(jen.List(dst, src).Index().Add(k.elem()), jen.List(rows, cols).Int()).Block(body...)
}

// split returns how the kernel deals its rows to goroutines: chunks t,
// t+threads, … of rows_per_chunk rows to goroutine t, the caller being
// goroutine 0 (golang.RowSplit, which the norms share).
func (k kernel) split() golang.RowSplit {
	rowsFn := k.rowsFn()
	if k.half.DType != "" && !k.reg {
		rowsFn = k.halfRowsFn()
	}
	return golang.RowSplit{
		Threads: k.threads, Chunk: k.chunk, Rows: k.rows,
		Slices: []jen.Code{jen.Id("dst"), jen.Id("src")}, Elem: k.elem(),
		RowsFn: rowsFn, ChunksFn: k.chunksFn(),
		Goroutine: k.goroutine,
	}
}

// emitChunks emits the share of goroutine t (golang.RowSplit.ChunksFunc).
func (k kernel) emitChunks(f *jen.File) { f.Add(k.split().ChunksFunc()) }

// emitRows emits the function that computes rows [lo, hi). The constants
// of the inner loops are declared before the row loop: inside a loop Go
// would rebuild a vector constant at every use. Values needed once per row
// are built where they are used, so that they do not hold one of the 15
// vector registers Go allocates through the hot loops.
func (k kernel) emitRows(f *jen.File) {
	v := k.v
	body := []jen.Code{jen.Const().Id("cols").Op("=").Lit(k.cols)}
	if k.generic {
		body = nil
	}
	body = append(body, k.exp.Consts()...)
	if k.online && !v.Scalar() {
		body = append(body, jen.Id("one").Op(":=").Add(v.Splat(jen.Lit(1))))
	}

	row := []jen.Code{
		jen.Id("lowest").Op(":=").Add(v.Splat(jen.Op("-").Qual("math", "MaxFloat32"))).
			Comment("running maxima start here, not at -Inf: -Inf-(-Inf) would be NaN"),
		jen.Id("s").Op(":=").Parens(jen.Op("*").Index(jen.Id("cols")).Float32()).Call(jen.Id("src").Index(jen.Id("r").Op("*").Id("cols"), jen.Empty())),
		jen.Id("d").Op(":=").Parens(jen.Op("*").Index(jen.Id("cols")).Float32()).Call(jen.Id("dst").Index(jen.Id("r").Op("*").Id("cols"), jen.Empty())),
	}
	if k.generic {
		// Slices of exactly one row: a partial vector ends at the row's end.
		row[1] = jen.Id("s").Op(":=").Id("src").Index(jen.Id("r").Op("*").Id("cols"), jen.Id("r").Op("*").Id("cols").Op("+").Id("cols"))
		row[2] = jen.Id("d").Op(":=").Id("dst").Index(jen.Id("r").Op("*").Id("cols"), jen.Id("r").Op("*").Id("cols").Op("+").Id("cols"))
	}
	if k.online {
		row = append(row, k.online1()...)
		row = append(row, k.online2()...)
	} else {
		row = append(row, k.threepass()...)
	}
	body = append(body, jen.For(jen.Id("r").Op(":=").Id("lo"), jen.Id("r").Op("<").Id("hi"), jen.Id("r").Op("++")).Block(row...))

	algo := "three passes: the maximum; e^(x-max) into dst and its sum; dst scaled by 1/sum"
	if k.online {
		algo = "two passes: the maximum and the sum in one, with each lane's sum rescaled when its maximum grows; dst = e^(x-max)/sum"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes rows lo to hi-1 in %s.", k.rowsFn(), algo)))
	ints := []jen.Code{jen.Id("lo"), jen.Id("hi")}
	if k.generic {
		ints = append([]jen.Code{jen.Id("cols")}, ints...)
	}
	f.Func().Id(k.rowsFn()).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Float32(), jen.List(ints...).Int()).Block(body...)
}

// hasTail reports whether rows end in a partial vector.
func (k kernel) hasTail() bool { return !k.v.Scalar() && k.cols%k.v.Lanes() != 0 }

func (k kernel) tailFn() string { return k.name + "Tail" }

// emitTail emits the function that loads the partial vector at the end of a
// row with -Inf in the lanes past the end: -Inf changes neither a maximum
// nor a sum of exponentials.
func (k kernel) emitTail(f *jen.File) {
	v, n := k.v, k.cols%k.v.Lanes()
	what := fmt.Sprintf("the last %d elements of a row, s,", n)
	if n == 1 {
		what = "the last element of a row, s,"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s returns %s and -Inf in the other lanes: "+
		"they change neither a maximum nor a sum of exponentials.", k.tailFn(), what)))
	negInf := v.Splat(jen.Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))))
	f.Func().Id(k.tailFn()).Params(jen.Id("s").Index().Float32()).Add(v.Type()).Block(
		jen.Return(v.LoadPart(jen.Id("s"), nil).Dot("Merge").Call(negInf, v.TailMask(n))),
	)
}

// load returns the vector of row at step, the lanes past the end of the row
// set to -Inf.
func (k kernel) load(row string, st golang.Step) *jen.Statement {
	if st.Part {
		return jen.Id(k.tailFn()).Call(jen.Id(row).Index(st.At, jen.Empty()))
	}
	return k.v.Load(jen.Id(row), st.At)
}

// sweep returns the loops over a row's cols elements with k's unroll: with
// literal bounds, or tested at run time in a generic kernel.
func (k kernel) sweep(body func(golang.Step) []jen.Code) []jen.Code {
	if k.generic {
		return k.v.SweepN("c", jen.Id("cols"), k.unroll, body)
	}
	return k.v.Sweep("c", k.cols, k.unroll, body)
}

// loadZero returns the vector of row at step, the lanes past the end of the
// row zero, for passes whose extra lanes are never stored or summed.
func (k kernel) loadZero(row string, st golang.Step) *jen.Statement {
	if st.Part {
		return k.v.LoadPart(jen.Id(row), st.At)
	}
	return k.v.Load(jen.Id(row), st.At)
}

// store returns the statement that writes x to row at step.
func (k kernel) store(x jen.Code, row string, st golang.Step) *jen.Statement {
	if st.Part {
		return k.v.StorePart(x, jen.Id(row), st.At)
	}
	return k.v.Store(x, jen.Id(row), st.At)
}

// accs returns the names of the unroll accumulators prefix0, prefix1, ….
func (k kernel) accs(prefix string) []jen.Code {
	ids := make([]jen.Code, k.unroll)
	for u := range ids {
		ids[u] = jen.Id(prefix + strconv.Itoa(u))
	}
	return ids
}

// declAccs returns prefix0, prefix1, … := init, init, ….
func (k kernel) declAccs(prefix, init string) jen.Code {
	inits := make([]jen.Code, k.unroll)
	for u := range inits {
		inits[u] = jen.Id(init)
	}
	return jen.List(k.accs(prefix)...).Op(":=").List(inits...)
}

// declSums declares the sum accumulators, zero. Scalar code sums in
// float64: a float32 running sum of one long row drifts by 1e-4 at 100000
// columns, while vector lanes each add only cols/lanes terms.
func (k kernel) declSums() jen.Code {
	if k.v.Scalar() {
		return jen.Var().List(k.accs("sum")...).Float64()
	}
	return jen.Var().List(k.accs("sum")...).Add(k.v.Type())
}

// term returns e as a term of a sum accumulator.
func (k kernel) term(e string) jen.Code {
	if k.v.Scalar() {
		return jen.Float64().Call(jen.Id(e))
	}
	return jen.Id(e)
}

// reduce returns the scalar reduction of the accumulators with r: a tree of
// vector operations and one horizontal step, or a scalar tree.
func (k kernel) reduce(r golang.Reduction, accs []jen.Code) jen.Code {
	tree := k.v.Tree(r, accs...)
	switch {
	case k.v.Scalar():
		return tree
	case r == golang.ReduceMax:
		return jen.Id(k.hmax()).Call(tree)
	default:
		return jen.Id(k.hsum()).Call(tree)
	}
}

func lane(prefix string, u int) string { return prefix + strconv.Itoa(u) }

// bcast returns the computed float32 x as a vector; scalar code uses it as is.
func (k kernel) bcast(x jen.Code) jen.Code {
	if k.v.Scalar() {
		return x
	}
	return k.v.Splat(x)
}

// scale returns scale := 1/total, as a float32 vector.
func (k kernel) scale(total jen.Code) jen.Code {
	if k.v.Scalar() {
		if k.unroll > 1 {
			total = jen.Parens(total)
		}
		return jen.Id("scale").Op(":=").Float32().Call(jen.Lit(1).Op("/").Add(total))
	}
	return jen.Id("scale").Op(":=").Add(k.v.Splat(jen.Lit(1).Op("/").Add(total)))
}

// addTo returns acc += e.
func (k kernel) addTo(acc jen.Code, e string) jen.Code {
	if k.v.Scalar() {
		return jen.Add(acc).Op("+=").Add(k.term(e))
	}
	return jen.Add(acc).Op("=").Add(k.v.Add(acc, jen.Id(e)))
}
