package softmax

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// With code=asm the three passes over each row are Go assembly on
// AVX-512, or on AVX2 and FMA (see the package doc): the Go function of
// the rows checks the slices and calls it a block of rows at a time.

// asmLanes is the vector width of the assembly on AVX-512's Z registers,
// asmLanesAVX2 on AVX2's Y registers. AVX-512 has 32 vector registers,
// room for four unrolled vectors of four registers (x, k, p, an
// accumulator) below the exp's constants (asmMaxUnroll); AVX2 has 16,
// room for two, with the exp's constants that do not fit read from
// memory (asmMaxUnrollAVX2, asmRegs).
const (
	asmLanes         = 16
	asmMaxUnroll     = 4
	asmLanesAVX2     = 8
	asmMaxUnrollAVX2 = 2
)

// asmBlock is the most elements of src one call of the assembly covers,
// unless one row is longer (a call covers at least a whole row): a
// goroutine cannot be preempted inside assembly, so a call is kept to a
// few tens of microseconds.
const asmBlock = 1 << 16

// asmISA names the instructions k's assembly needs, for comments.
func (k kernel) asmISA() string {
	switch k.lanes {
	case asmLanesAVX2:
		return "AVX2 and FMA"
	case neon.Lanes:
		return "arm64's NEON"
	}
	return "AVX-512"
}

// asmRegs says where the assembly keeps its vectors: per unrolled vector
// u, the exp's argument x+u, its k+u and its result p+u, and an
// accumulator acc+u (maxima, then sums); the row's maximum, then 1/sum;
// the exp's constants. On Z registers -MaxFloat32 and 1 have registers
// too, and 1/sum one of its own; on Y registers 1/sum takes the
// maximum's, -MaxFloat32 and 1 are built when needed, and the constants
// of the exp that do not fit in the registers left are read from memory
// (goasm.Exp.Table).
type asmRegs struct {
	x, k, p, acc int
	max, scale   int
	lowest, one  int // Z registers only
	exp          goasm.Exp
}

// regs returns k's asmRegs.
func (k kernel) regs() asmRegs {
	degree := expDegree[k.cfg.Str("exp")]
	if k.lanes == asmLanes {
		return asmRegs{x: 0, k: 4, p: 8, acc: 12, max: 30, scale: 31, lowest: 27, one: 28,
			exp: goasm.Exp{Lanes: asmLanes, Degree: degree, First: 16}} // to 26 at most: degree 5 has 11 constants
	}
	u := k.unroll
	first := 4*u + 1
	r := asmRegs{x: 0, k: u, p: 2 * u, acc: 3 * u, max: 4 * u, scale: 4 * u,
		exp: goasm.Exp{Lanes: asmLanesAVX2, Degree: degree, First: first}}
	if r.exp.Regs() > 16-first {
		r.exp.Table, r.exp.InRegs = k.asmFn()+"Exp<>", 16-first
	}
	return r
}

// emitAsm is goEmitter's assembly: the assembly of the kernel of cfg in
// dtype dt, or nil for code=go.
func emitAsm(name string, shape []int, dt dtype.DType, cfg schedule.Config) []byte {
	k := asmKernel(name, dt, cfg)
	if !k.asm {
		return nil
	}
	_, k.cols = checkShape(shape)
	k.unroll = min(k.unroll, max(1, k.cols/k.lanes)) // as emitGo caps it
	return k.asmFile()
}

// emitAsmGeneric is goEmitter's assembly of a generic kernel: the same with cols an
// argument.
func emitAsmGeneric(name string, dt dtype.DType, cfg schedule.Config) []byte {
	k := asmKernel(name, dt, cfg)
	if !k.asm {
		return nil
	}
	k.generic = true
	return k.asmFile()
}

// asmKernel is the kernel whose assembly a config of dtype dt has: its
// own with convert=reg, else the float32 kernel's, which the conversions
// of blocks of rows wrap.
func asmKernel(name string, dt dtype.DType, cfg schedule.Config) kernel {
	if k := newKernel(name, dt, cfg); k.reg {
		return k
	}
	return newKernel(name, "", cfg)
}

func (k kernel) asmFn() string { return k.name + "Asm" }

// emitAsmRows emits, for code=asm, the Go function of rows lo to hi-1,
// which calls the assembly on blocks of at most asmBlock elements, and the
// declaration of the assembly.
func (k kernel) emitAsmRows(f *jen.File) {
	id := jen.Id
	cols := id("cols")
	var body []jen.Code
	if k.generic {
		body = append(body,
			jen.If(cols.Clone().Op("==").Lit(0)).Block(jen.Return()).Comment("empty rows: nothing to write"),
			id("block").Op(":=").Max(jen.Lit(1), jen.Lit(asmBlock).Op("/").Add(cols)),
		)
	} else {
		body = append(body, jen.Const().Defs(
			id("cols").Op("=").Lit(k.cols),
			id("block").Op("=").Lit(max(1, asmBlock/k.cols)).Comment(fmt.Sprintf("rows per call: at most %d elements, or one row", asmBlock)),
		))
	}
	call := []jen.Code{jen.Op("&").Id("d").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0)), id("n")}
	if k.reg {
		call = slices.Insert(call, 2, jen.Code(jen.Op("&").Id("t").Index(jen.Lit(0))))
		body = append(body, k.tmpGet()...)
	}
	if k.generic {
		call = append(call, cols)
	}
	body = append(body, jen.For(id("lo").Op("<").Id("hi")).Block(
		id("n").Op(":=").Min(id("hi").Op("-").Id("lo"), id("block")),
		jen.List(id("d"), id("s")).Op(":=").List(
			id("dst").Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols)),
			id("src").Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols)),
		).Comment("the assembly reads and writes unchecked"),
		id(k.asmFn()).Call(call...),
		id("lo").Op("+=").Id("n"),
	))
	if k.reg {
		body = append(body, id(k.tmpPool()).Dot("Put").Call(id("p")))
		f.Add(golang.Comment(fmt.Sprintf("%s holds the float32 row of scratch of %s, reused from call to call so that a call allocates nothing once warm.",
			k.tmpPool(), k.asmFn())))
		f.Var().Id(k.tmpPool()).Op("=").Qual("sync", "Pool").Values(jen.Dict{
			id("New"): jen.Func().Params().Any().Block(jen.Return(jen.New(jen.Index().Float32()))),
		})
	}
	f.Add(golang.Comment(fmt.Sprintf("%s computes rows lo to hi-1 with %s, a block of rows at a time: "+
		"a goroutine cannot be preempted in assembly, so a call covers at most %d elements or one row.", k.rowsFn(), k.asmFn(), asmBlock)))
	ints := []jen.Code{id("lo"), id("hi")}
	if k.generic {
		ints = append([]jen.Code{id("cols")}, ints...)
	}
	elem := jen.Float32()
	if k.reg {
		elem = jen.Uint16()
	}
	f.Func().Id(k.rowsFn()).Params(jen.List(id("dst"), id("src")).Index().Add(elem), jen.List(ints...).Int()).Block(body...)

	params := []jen.Code{jen.List(id("dst"), id("src")).Op("*").Add(elem), id("rows").Int()}
	if k.reg {
		params = slices.Insert(params, 1, jen.Code(id("tmp").Op("*").Float32()))
	}
	what := fmt.Sprintf("rows rows of %d elements", k.cols)
	if k.generic {
		params[len(params)-1] = jen.List(id("rows"), id("cols")).Int()
		what = "rows rows of cols elements"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes the softmax of %s from src to dst in %s. "+
		"It is Go assembly on %s, in the kernel's .s file; the caller checks the bounds.", k.asmFn(), what, k.asmPasses(), k.asmISA())))
	f.Comment("//go:noescape")
	f.Func().Id(k.asmFn()).Params(params...)
}

// tmpPool names the pool of the float32 scratch of a convert=reg kernel.
func (k kernel) tmpPool() string { return k.name + "Tmp" }

// tmpGet returns the statements that set t to a float32 row of scratch
// and a vector more, from tmpPool through p.
func (k kernel) tmpGet() []jen.Code {
	id := jen.Id
	need := id("cols").Op("+").Lit(k.lanes)
	return []jen.Code{
		id("p").Op(":=").Id(k.tmpPool()).Dot("Get").Call().Assert(jen.Op("*").Index().Float32()),
		jen.If(jen.Cap(jen.Op("*").Id("p")).Op("<").Add(need)).Block(
			jen.Op("*").Id("p").Op("=").Make(jen.Index().Float32(), need),
		),
		id("t").Op(":=").Parens(jen.Op("*").Id("p")).Index(jen.Empty(), need.Clone()).Comment("the sums' e^(x-max), which the scaling reads"),
	}
}

// asmPasses describes the passes of the assembly, for comments.
func (k kernel) asmPasses() string {
	pass := "three passes: the maximum; e^(x-max) into dst and its sum; dst scaled by 1/sum"
	if k.reg {
		pass = fmt.Sprintf("three passes over %s widened in registers: the maximum; e^(x-max) into tmp, float32, and its sum; "+
			"tmp scaled by 1/sum, rounded to nearest even into dst", k.half.DType)
	}
	if k.stream {
		pass += fmt.Sprintf("; dst's rows streamed past the caches where they are %d-byte aligned", 2*k.lanes)
	}
	if k.prefetch {
		pass += "; the sums fetch the next row of src"
	}
	return pass
}

// asmFile returns the .s file of k: one function, a loop over rows, on
// Z registers (16 lanes, AVX-512) or Y registers (8 lanes, AVX2 and FMA).
//
// Registers besides the vectors (asmRegs): DI and SI the rows of dst and
// src, R8 the rows left, CX the byte offset in the row, AX and DX
// scratch, R12 the next row of src with prefetch; for a generic kernel R9
// the bytes of a row, R10 of its whole groups of unroll vectors, R11 of
// its whole vectors, which a specialised kernel has as constants. The
// partial vector at a row's end has a mask: K1 (all clear when there is
// none), or on Y registers a vector of a table, 8 ones then 8 zeros, read
// from the right offset (for a generic kernel R13 points at it), since no
// register is free to hold it through the sums.
//
// With convert=reg (asmhalf.go) the rows of dst and src hold 16-bit
// elements, so offsets and row bytes count 2 bytes an element, and BX is
// tmp, the float32 row of scratch, addressed with CX scaled by 2.
func (k kernel) asmFile() []byte {
	lanes := k.lanes
	if !(lanes == asmLanes && k.unroll <= asmMaxUnroll || lanes == asmLanesAVX2 && k.unroll <= asmMaxUnrollAVX2) {
		panic(fmt.Sprintf("softmax: no assembly for %s", k.cfg))
	}
	a := &asmWriter{kernel: k, r: k.regs(), zmm: lanes == asmLanes, es: 4}
	if k.reg {
		a.es = 2
	}
	a.vb = a.es * lanes
	a.file()
	return []byte(a.b.String())
}

// asmWriter writes the assembly of one kernel.
type asmWriter struct {
	kernel
	r   asmRegs
	zmm bool // Z registers, else Y
	es  int  // bytes of an element in memory: 4, or 2 with convert=reg
	vb  int  // bytes of a vector in memory
	// pass names the pass being written, for the labels of its loops.
	pass string
	b    strings.Builder
	// whole and tail, for a specialised kernel: the whole vectors of a
	// row, and the elements of its partial vector (0: none).
	whole, tail int
	// nt: the sweep being written streams its whole vectors
	// (store=stream, goasm.Reg16.Stream).
	nt bool
	// ne are the vectors convert=cvtne stored since the last checkNE,
	// slow its out-of-line code, written after RET; labels numbers the
	// checks.
	ne     []goasm.NE
	slow   []string
	labels int
}

func (a *asmWriter) w(format string, args ...any) { fmt.Fprintf(&a.b, "\t"+format+"\n", args...) }
func (a *asmWriter) label(l string)               { fmt.Fprintf(&a.b, "%s:\n", l) }

// v returns vector register n.
func (a *asmWriter) v(n int) string {
	if a.zmm {
		return fmt.Sprintf("Z%d", n)
	}
	return fmt.Sprintf("Y%d", n)
}

// at returns the address of vector u from the offset CX in the row at base.
func (a *asmWriter) at(base string, u int) string { return fmt.Sprintf("%d(%s)(CX*1)", a.vb*u, base) }

// maskSym is the table of the masks of partial vectors on Y registers.
func (a *asmWriter) maskSym() string { return a.asmFn() + "Mask<>" }

// mask returns the operand of the mask of the partial vector on Y
// registers.
func (a *asmWriter) mask() string {
	if a.generic {
		return "(R13)"
	}
	return fmt.Sprintf("%s+%d(SB)", a.maskSym(), 4*(asmLanesAVX2-a.tail))
}

// hasTail reports whether a row may end in a partial vector.
func (a *asmWriter) hasTail() bool { return a.generic || a.tail != 0 }

// file writes the .s file: the tables, then the function.
func (a *asmWriter) file() {
	k := a.kernel
	a.b.WriteString(goasm.Header)
	if !a.generic {
		a.whole, a.tail = k.cols/k.lanes, k.cols%k.lanes
	}
	if !a.zmm && a.hasTail() {
		a.b.WriteString("\n")
		for i := range 2 * asmLanesAVX2 {
			bits := uint32(0)
			if i < asmLanesAVX2 {
				bits = 0xffffffff
			}
			fmt.Fprintf(&a.b, "DATA %s+%d(SB)/4, $0x%08x\n", a.maskSym(), 4*i, bits)
		}
		fmt.Fprintf(&a.b, "GLOBL %s(SB), RODATA|NOPTR, $%d // the mask of t elements is the vector at 4·(8-t)\n", a.maskSym(), 8*asmLanesAVX2)
	}
	a.halfData()
	if data := a.r.exp.Data(); data != nil {
		a.b.WriteString("\n")
		for _, l := range data {
			fmt.Fprintf(&a.b, "%s\n", l)
		}
	}

	args := "dst, src, rows"
	if k.reg {
		args = "dst, src, tmp, rows"
	}
	frame := 8 * (strings.Count(args, ",") + 1)
	if k.generic {
		args += ", cols"
		frame += 8
	}
	fmt.Fprintf(&a.b, "\n// func %s(%s)\n", k.asmFn(), args)
	fmt.Fprintf(&a.b, "// The softmax of each row in %s.\n", k.asmPasses())
	fmt.Fprintf(&a.b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", k.asmFn(), frame)
	a.w("MOVQ dst+0(FP), DI")
	a.w("MOVQ src+8(FP), SI")
	if k.reg {
		a.w("MOVQ tmp+16(FP), BX")
	}
	a.w("MOVQ rows+%d(FP), R8", a.argOff("rows"))
	rowBytes := a.setup()
	a.w("TESTQ R8, R8")
	a.w("JZ done")

	a.label("row")
	if k.prefetch {
		if k.generic {
			a.w("LEAQ (SI)(R9*1), R12 // the next row of src, fetched during the sums")
		} else {
			a.w("LEAQ %d(SI), R12 // the next row of src, fetched during the sums", a.es*k.cols)
		}
	}
	a.maxPass()
	a.sumPass()
	a.scalePass()
	a.w("ADDQ %s, SI", rowBytes)
	a.w("ADDQ %s, DI", rowBytes)
	a.w("DECQ R8")
	a.w("JNZ row")
	a.label("done")
	if k.stream {
		a.w("SFENCE // order the streamed stores before the caller's")
	}
	a.w("VZEROUPPER")
	a.w("RET")
	for _, l := range a.slow {
		a.w("%s", l)
	}
}

// setup writes what is set once per call: the bounds of a generic
// kernel's row and the mask of its partial vector, the exp's constants,
// and on Z registers -MaxFloat32 and 1. It returns the operand of the
// bytes of a row.
func (a *asmWriter) setup() (rowBytes string) {
	k := a.kernel
	switch {
	case k.generic && a.zmm:
		a.w("MOVQ cols+%d(FP), R9", a.argOff("cols"))
		a.w("MOVQ R9, R11")
		a.w("ANDQ $-%d, R11 // elements in whole vectors", asmLanes)
		a.w("MOVQ R9, CX")
		a.w("SUBQ R11, CX // elements in the partial vector")
		a.w("MOVL $1, DX")
		a.w("SHLL CX, DX")
		a.w("DECL DX")
		a.w("KMOVW DX, K1")
		a.w("SHLQ $%d, R11", a.shift())
		a.w("MOVQ R11, R10")
		a.w("ANDQ $-%d, R10", a.vb*k.unroll)
		a.w("SHLQ $%d, R9", a.shift())
	case k.generic:
		a.w("MOVQ cols+%d(FP), R9", a.argOff("cols"))
		a.w("SHLQ $%d, R9", a.shift())
		a.w("MOVQ R9, R11")
		a.w("ANDQ $-%d, R11", a.vb)
		a.w("MOVQ R9, R10")
		a.w("ANDQ $-%d, R10", a.vb*k.unroll)
		a.w("LEAQ %s+%d(SB), R13", a.maskSym(), 4*asmLanesAVX2)
		a.w("MOVQ R9, AX")
		a.w("SUBQ R11, AX // bytes of the partial vector")
		if a.es == 2 {
			a.w("SHLQ $1, AX // as float32s")
		}
		a.w("SUBQ AX, R13 // the mask of the partial vector")
	case a.zmm && a.tail != 0:
		a.w("MOVL $0x%x, DX // the %d elements of the partial vector", 1<<a.tail-1, a.tail)
		a.w("KMOVW DX, K1")
	}
	for _, l := range a.r.exp.Load() {
		a.w("%s", l)
	}
	if a.zmm {
		for _, c := range []struct {
			reg  int
			val  float32
			what string
		}{{a.r.lowest, -math.MaxFloat32, "-MaxFloat32: running maxima start here, not at -Inf, since -Inf-(-Inf) would be NaN"}, {a.r.one, 1, "1"}} {
			a.broadcast(c.val, c.reg, c.what)
		}
	}
	if k.generic {
		return "R9"
	}
	return fmt.Sprintf("$%d", a.es*k.cols)
}

// argOff returns the frame offset of the int argument rows or cols.
func (a *asmWriter) argOff(name string) int {
	off := 16
	if a.reg {
		off += 8 // tmp
	}
	if name == "cols" {
		off += 8
	}
	return off
}

// shift is log2 of the bytes of an element in memory.
func (a *asmWriter) shift() int { return a.es / 2 }

// broadcast writes the instructions that set every lane of vector
// register reg to val, through AX.
func (a *asmWriter) broadcast(val float32, reg int, what string) {
	a.w("MOVL $0x%08x, AX // %s", math.Float32bits(val), what)
	a.w("VMOVD AX, X%d", reg)
	a.w("VPBROADCASTD X%d, %s", reg, a.v(reg))
}

// sweep writes the loops of one pass: groups of unroll vectors, their
// bodies interleaved step by step so that the unroll's exps overlap; then
// single vectors; then the partial vector, whose body gets masked set.
func (a *asmWriter) sweep(name string, body func(u int, masked bool) []string) {
	k := a.kernel
	groupBytes, vecBytes := "R10", "R11"
	if !k.generic {
		groupBytes = fmt.Sprintf("$%d", a.whole/k.unroll*k.unroll*a.vb)
		vecBytes = fmt.Sprintf("$%d", a.whole*a.vb)
	}
	// A specialised kernel leaves out the loops its row length skips.
	groups, ones := k.generic || a.whole >= k.unroll, k.unroll > 1 && (k.generic || a.whole%k.unroll != 0)
	a.pass = name
	a.w("XORQ CX, CX")
	if groups {
		if k.generic {
			next := name + "_vec"
			if !ones {
				next = name + "_tail"
			}
			a.w("CMPQ CX, %s", groupBytes)
			a.w("JGE %s", next)
		}
		a.label(name + "_group")
		bodies := make([][]string, k.unroll)
		for u := range bodies {
			bodies[u] = body(u, false)
		}
		for i := range bodies[0] {
			for u := range bodies {
				a.w("%s", bodies[u][i])
			}
		}
		a.checkNE()
		a.w("ADDQ $%d, CX", a.vb*k.unroll)
		a.w("CMPQ CX, %s", groupBytes)
		a.w("JLT %s_group", name)
	}
	if ones {
		a.label(name + "_vec")
		if k.generic {
			a.w("CMPQ CX, %s", vecBytes)
			a.w("JGE %s_tail", name)
		}
		a.label(name + "_one")
		for _, l := range body(0, false) {
			a.w("%s", l)
		}
		a.checkNE()
		a.w("ADDQ $%d, CX", a.vb)
		a.w("CMPQ CX, %s", vecBytes)
		a.w("JLT %s_one", name)
	}
	if !a.hasTail() {
		return
	}
	a.label(name + "_tail")
	if k.generic {
		if a.zmm {
			a.w("KORTESTW K1, K1")
		} else {
			a.w("CMPQ CX, R9 // no partial vector")
		}
		a.w("JZ %s_end", name)
	}
	for _, l := range body(0, true) {
		a.w("%s", l)
	}
	a.checkNE()
	if k.generic {
		a.label(name + "_end")
	}
}

// reduce folds the accumulators into the low lane of acc with op, through
// the register above it.
func (a *asmWriter) reduce(op string) {
	acc, tmp := a.r.acc, a.r.acc+1
	for step := 1; step < a.unroll; step *= 2 {
		for u := 0; u+step < a.unroll; u += 2 * step {
			a.w("%s %s, %s, %s", op, a.v(acc+u+step), a.v(acc+u), a.v(acc+u))
		}
	}
	if a.zmm {
		a.w("VEXTRACTF64X4 $1, Z%d, Y%d", acc, tmp)
		a.w("%s Y%d, Y%d, Y%d", op, tmp, acc, acc)
	}
	a.w("VEXTRACTF128 $1, Y%d, X%d", acc, tmp)
	a.w("%s X%d, X%d, X%d", op, tmp, acc, acc)
	a.w("VPERMILPS $0x4e, X%d, X%d", acc, tmp)
	a.w("%s X%d, X%d, X%d", op, tmp, acc, acc)
	a.w("VPERMILPS $0xb1, X%d, X%d", acc, tmp)
	a.w("%s X%d, X%d, X%d", op, tmp, acc, acc)
}

// maxPass writes the row's maximum, broadcast into r.max. A partial
// vector on Y registers is loaded with zeros past the row's end, where
// the maximum keeps the accumulator's lanes (VBLENDVPS).
func (a *asmWriter) maxPass() {
	r := a.r
	if a.zmm {
		for u := range a.unroll {
			a.w("VMOVAPS Z%d, Z%d", r.lowest, r.acc+u)
		}
	} else {
		a.broadcast(-math.MaxFloat32, r.acc, "-MaxFloat32: running maxima start here, not at -Inf, since -Inf-(-Inf) would be NaN")
		for u := 1; u < a.unroll; u++ {
			a.w("VMOVAPS Y%d, Y%d", r.acc, r.acc+u)
		}
	}
	a.sweep("max", func(u int, masked bool) []string {
		if a.reg {
			return a.maxHalf(u, masked)
		}
		acc := a.v(r.acc + u)
		switch {
		case !masked:
			return []string{fmt.Sprintf("VMAXPS %s, %s, %s", a.at("SI", u), acc, acc)}
		case a.zmm:
			return []string{fmt.Sprintf("VMAXPS %s, %s, K1, %s", a.at("SI", u), acc, acc)}
		}
		m, x := a.v(r.k+u), a.v(r.x+u)
		return []string{
			fmt.Sprintf("VMOVUPS %s, %s", a.mask(), m),
			fmt.Sprintf("VMASKMOVPS %s, %s, %s", a.at("SI", u), m, x),
			fmt.Sprintf("VMAXPS %s, %s, %s", x, acc, x),
			fmt.Sprintf("VBLENDVPS %s, %s, %s, %s", m, x, acc, acc),
		}
	})
	a.reduce("VMAXPS")
	a.w("VBROADCASTSS X%d, %s", r.acc, a.v(r.max))
}

// sumPass writes e^(x-m) into dst, its sum, and 1/sum broadcast into
// r.scale. A partial vector on Y registers reads the mask twice from
// memory, into the exp's k before the exp and into x after it, since no
// register is free to hold it; e^(0-m) past the row's end is cleared
// before the sum.
func (a *asmWriter) sumPass() {
	r := a.r
	for u := range a.unroll {
		if a.zmm {
			a.w("VPXORD Z%d, Z%d, Z%d", r.acc+u, r.acc+u, r.acc+u)
		} else {
			a.w("VXORPS Y%d, Y%d, Y%d", r.acc+u, r.acc+u, r.acc+u)
		}
	}
	a.sweep("sum", func(u int, masked bool) []string {
		if a.reg {
			return a.sumHalf(u, masked)
		}
		x, kk, p, acc := a.v(r.x+u), a.v(r.k+u), a.v(r.p+u), a.v(r.acc+u)
		sub := fmt.Sprintf("VSUBPS %s, %s, %s", a.v(r.max), x, x)
		var out []string
		switch {
		case !masked:
			out = []string{fmt.Sprintf("VMOVUPS %s, %s", a.at("SI", u), x), sub}
			if a.prefetch {
				out = append(out, fmt.Sprintf("PREFETCHT0 %s", a.at("R12", u)))
			}
		case a.zmm:
			out = []string{fmt.Sprintf("VMOVUPS.Z %s, K1, %s", a.at("SI", u), x), sub}
		default:
			out = []string{
				fmt.Sprintf("VMOVUPS %s, %s", a.mask(), kk),
				fmt.Sprintf("VMASKMOVPS %s, %s, %s", a.at("SI", u), kk, x),
				sub,
			}
		}
		out = append(out, r.exp.Emit(x, kk, p)...)
		switch {
		case !masked:
			return append(out,
				fmt.Sprintf("VMOVUPS %s, %s", p, a.at("DI", u)),
				fmt.Sprintf("VADDPS %s, %s, %s", p, acc, acc))
		case a.zmm:
			return append(out,
				fmt.Sprintf("VMOVUPS %s, K1, %s", p, a.at("DI", u)),
				fmt.Sprintf("VADDPS %s, %s, K1, %s", p, acc, acc))
		}
		return append(out,
			fmt.Sprintf("VMOVUPS %s, %s", a.mask(), x),
			fmt.Sprintf("VMASKMOVPS %s, %s, %s", p, x, a.at("DI", u)),
			fmt.Sprintf("VANDPS %s, %s, %s", x, p, p),
			fmt.Sprintf("VADDPS %s, %s, %s", p, acc, acc))
	})
	a.reduce("VADDPS")
	if a.zmm {
		a.w("VBROADCASTSS X%d, Z%d", r.acc, r.acc)
		a.w("VDIVPS Z%d, Z%d, Z%d", r.acc, r.one, r.scale)
		return
	}
	a.w("MOVL $0x%08x, AX // 1", math.Float32bits(1))
	a.w("VMOVD AX, X%d", r.acc+1)
	a.w("VDIVSS X%d, X%d, X%d", r.acc, r.acc+1, r.acc+1)
	a.w("VBROADCASTSS X%d, Y%d", r.acc+1, r.scale)
}

// scalePass writes dst *= 1/sum.
func (a *asmWriter) scalePass() {
	r := a.r
	if a.reg {
		a.scaleHalfSetup()
		if a.stream {
			// A row whose dst is aligned to a vector's words is
			// streamed; another (a caller's unaligned slice) takes
			// the stores through the caches below.
			a.w("TESTQ $%d, DI // dst's row aligned for VMOVNTDQ?", a.vb-1)
			a.w("JNZ scale_cached")
			a.nt = true
			a.sweep("scalent", a.scaleHalf)
			a.nt = false
			a.w("JMP scaled")
			a.label("scale_cached")
		}
		a.sweep("scale", a.scaleHalf)
		if a.stream {
			a.label("scaled")
		}
		return
	}
	a.sweep("scale", func(u int, masked bool) []string {
		x, scale := a.v(r.x+u), a.v(r.scale)
		switch {
		case !masked:
			return []string{fmt.Sprintf("VMULPS %s, %s, %s", a.at("DI", u), scale, x), fmt.Sprintf("VMOVUPS %s, %s", x, a.at("DI", u))}
		case a.zmm:
			return []string{fmt.Sprintf("VMULPS.Z %s, %s, K1, %s", a.at("DI", u), scale, x), fmt.Sprintf("VMOVUPS %s, K1, %s", x, a.at("DI", u))}
		}
		m := a.v(r.k + u)
		return []string{
			fmt.Sprintf("VMOVUPS %s, %s", a.mask(), m),
			fmt.Sprintf("VMASKMOVPS %s, %s, %s", a.at("DI", u), m, x),
			fmt.Sprintf("VMULPS %s, %s, %s", scale, x, x),
			fmt.Sprintf("VMASKMOVPS %s, %s, %s", x, m, a.at("DI", u)),
		}
	})
}
