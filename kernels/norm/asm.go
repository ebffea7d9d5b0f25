package norm

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// With code=asm the rows of both ops are Go assembly on AVX-512, or on
// AVX2 and FMA (see the package doc): the Go function of the rows checks
// the slices and calls it a block of rows at a time.

// asmLanes is the vector width of the assembly on AVX-512's Z registers,
// asmLanesAVX2 on AVX2's Y registers, of which there are 16: RMSNorm's
// accumulators and vectors of x take at most 8 (asmMaxUnrollAVX2);
// LayerNorm's also its sums of squares, x[0] and the mean
// (asmMaxUnrollAVX2Layer, asmlayer.go).
const (
	asmLanes              = 16
	asmLanesAVX2          = 8
	asmMaxUnrollAVX2      = 4
	asmMaxUnrollAVX2Layer = 2
)

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

// asmBlock is the most elements of x one call of the assembly covers,
// unless one row is longer (a call covers at least a whole row): a
// goroutine cannot be preempted inside assembly, so a call is kept to a
// few tens of microseconds.
const asmBlock = 1 << 16

// Vector registers of the assembly on Z registers: the accumulators of
// the unroll from Z0, the vectors of x (then of y) from regX, 1/rms or
// 1/σ broadcast in regInv (newAsmWriter has those of Y registers).
const (
	regX   = 8
	regInv = 16
)

// emitAsm is goEmitter's assembly: that of the kernel of cfg for shape
// (every shape when nil) in dtype dt, the rows of code=asm and the
// conversions of a 16-bit kernel of vectors; nil when it has neither.
func emitAsm(k kind, name string, shape []int, dt dtype.DType, cfg schedule.Config) []byte {
	kn := newKernel(k, name, shape, dt, cfg)
	var asm []byte
	if kn.asm {
		asm = kn.asmFile()
	}
	return goasm.WithHalf(asm, kn.half)
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
	vecs := []string{"gamma"}
	if k.layer {
		vecs = append(vecs, "beta")
	}
	if k.reg {
		body = append(body, k.widenVecs(vecs)...)
	}
	call := []jen.Code{jen.Op("&").Id("d").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0))}
	for _, v := range vecs {
		if k.reg {
			v = widened(v)
		}
		call = append(call, jen.Op("&").Id(v).Index(jen.Lit(0)))
	}
	call = append(call, id("n"))
	if k.generic {
		call = append(call, cols)
	}
	body = append(body, jen.For(id("lo").Op("<").Id("hi")).Block(
		id("n").Op(":=").Min(id("hi").Op("-").Id("lo"), id("block")),
		jen.List(id("d"), id("s")).Op(":=").List(
			id("y").Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols)),
			id("x").Index(id("lo").Op("*").Add(cols), jen.Parens(id("lo").Op("+").Id("n")).Op("*").Add(cols)),
		).Comment("the assembly reads and writes unchecked"),
		id(k.asmFn()).Call(call...),
		id("lo").Op("+=").Id("n"),
	))
	f.Add(golang.Comment(fmt.Sprintf("%s normalises rows lo to hi-1 with %s, a block of rows at a time: "+
		"a goroutine cannot be preempted in assembly, so a call covers at most %d elements or one row.", k.rowsFn(), k.asmFn(), asmBlock)))
	elem := jen.Float32()
	if k.reg {
		elem = jen.Uint16()
	}
	params := []jen.Code{jen.List(k.slices()...).Index().Add(elem)}
	if k.generic {
		params = append(params, jen.List(id("cols"), id("lo"), id("hi")).Int())
	} else {
		params = append(params, jen.List(id("lo"), id("hi")).Int())
	}
	f.Func().Id(k.rowsFn()).Params(params...).Block(body...)

	ptrs := []jen.Code{id("y"), id("x"), id("gamma")}
	if k.layer {
		ptrs = append(ptrs, id("beta"))
	}
	decl := []jen.Code{jen.List(ptrs...).Op("*").Add(elem)}
	if k.reg {
		// gamma and beta come widened (widenVecs).
		decl = []jen.Code{jen.List(ptrs[:2]...).Op("*").Uint16(), jen.List(ptrs[2:]...).Op("*").Float32()}
	}
	what := fmt.Sprintf("rows rows of %d elements", k.cols)
	if k.generic {
		decl = append(decl, jen.List(id("rows"), id("cols")).Int())
		what = "rows rows of cols elements"
	} else {
		decl = append(decl, id("rows").Int())
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes to y the %s of %s of x in %s. "+
		"It is Go assembly on %s, in the kernel's .s file; the caller checks the bounds.", k.asmFn(), k.opName(), what, k.asmSweeps(), k.asmISA())))
	f.Comment("//go:noescape")
	f.Func().Id(k.asmFn()).Params(decl...)
}

// opName is the name of k's op in comments.
func (k kernel) opName() string {
	if k.layer {
		return "LayerNorm"
	}
	return "RMSNorm"
}

// asmSweeps describes the sweeps of the assembly, for comments.
func (k kernel) asmSweeps() string {
	s := "two sweeps: the sum of squares, in float64 where its float32 sum overflows; y = x·(1/rms)·gamma"
	if k.layer {
		s = "three sweeps of t = x-x[0]: Σt, for the mean; the sum of squared deviations, in float64 where it overflows float32; y"
		if k.onepass {
			s = "two sweeps of t = x-x[0]: Σt and Σt², for the mean and the variance, in float64 where Σt² overflows float32; y"
		}
	}
	if k.stream {
		s += fmt.Sprintf(", stored with non-temporal stores where y is %d-byte aligned", k.elemBytes()*k.lanes)
	}
	if k.prefetch {
		s += "; the output sweep fetches the next row of x"
	}
	return s
}

// asmFile returns the .s file of k: one function, a loop over rows, on
// Z registers (16 lanes, AVX-512) or Y registers (8 lanes, AVX2 and FMA).
//
// Registers: DI, SI the rows of y and x, BX gamma, R14 LayerNorm's beta,
// R8 the rows left, CX the byte offset in the row, AX and DX scratch; R9
// the bytes of a row, R10 of its whole groups of unroll vectors, R11 of
// its whole vectors. The partial vector at a row's end has a mask: K1
// (all clear when there is none), or with 8 lanes Y9, whose lanes in the
// row are all ones (VMASKMOVPS). With store=stream, the output sweep
// starts where the row of y reaches a boundary of a vector's size: the
// elements before it are one masked vector (K2, Y10), R12 and R13 end
// its groups and vectors, and K3 (Y11) masks its partial vector.
func (k kernel) asmFile() []byte {
	if (k.lanes != asmLanes && k.lanes != asmLanesAVX2) || (k.lanes == asmLanesAVX2 && k.unroll > k.asmMaxUnrollAVX2()) {
		panic(fmt.Sprintf("norm: no assembly for %s %s", k.kind.name, k.cfg))
	}
	a := newAsmWriter(k)
	a.WriteString(goasm.Header)
	if data := k.regData(); data != nil {
		a.WriteString("\n" + strings.Join(data, "\n") + "\n")
	}
	a.prologue()
	a.label("row")
	if k.layer {
		a.layerStats()
	} else {
		a.rmsStats()
	}
	a.outSweep()
	a.w("ADDQ R9, SI")
	a.w("ADDQ R9, DI")
	a.w("DECQ R8")
	a.w("JNZ row")
	a.label("done")
	if k.stream {
		a.w("SFENCE // order the non-temporal stores before the caller's")
	}
	a.w("VZEROUPPER")
	a.w("RET")
	a.lines(a.slow)
	if k.layer {
		a.layerSlow()
	} else {
		a.rmsSlow()
	}
	return []byte(a.String())
}

// asmMaxUnrollAVX2 is the most vectors in flight of k's assembly on Y
// registers: LayerNorm's keeps x[0] and the mean in two of them, and its
// one-pass sweep two accumulators a vector.
func (k kind) asmMaxUnrollAVX2() int {
	if k.layer {
		return asmMaxUnrollAVX2Layer
	}
	return asmMaxUnrollAVX2
}

// asmWriter writes the .s file of one kernel (asmFile).
type asmWriter struct {
	kernel
	strings.Builder
	zmm   bool
	es    int // bytes of an element in memory
	vb    int // bytes of a vector in memory
	group int // bytes of unroll vectors
	h     goasm.Reg16
	// The vector registers of x (then of y) from xBase, and of 1/rms or
	// 1/σ; with 8 lanes the masks also take vector registers (rowMask,
	// headMask, tailMask).
	xBase, inv                  int
	rowMask, headMask, tailMask string
	ne                          []goasm.NE // the vectors of convert=cvtne's stores since the last checkNE
	labels                      int        // of checkNE's checks, numbered for their labels
	slow                        []string   // their rounding of vectors holding a subnormal, after RET
}

func newAsmWriter(k kernel) *asmWriter {
	a := &asmWriter{kernel: k, zmm: k.lanes == asmLanes, es: 4, h: k.reg16(),
		xBase: regX, inv: regInv, rowMask: "K1", headMask: "K2", tailMask: "K3"}
	if k.reg {
		a.es = 2
	}
	a.vb = a.es * k.lanes
	a.group = a.vb * k.unroll
	if !a.zmm {
		a.xBase, a.inv = 4, 8
		a.rowMask, a.headMask, a.tailMask = "Y9", "Y10", "Y11"
	}
	return a
}

func (a *asmWriter) w(format string, args ...any) { fmt.Fprintf(a, "\t"+format+"\n", args...) }
func (a *asmWriter) label(l string)               { fmt.Fprintf(a, "%s:\n", l) }

func (a *asmWriter) lines(ls []string) {
	for _, l := range ls {
		a.w("%s", l)
	}
}

// vr is vector register n.
func (a *asmWriter) vr(n int) string {
	if a.zmm {
		return fmt.Sprintf("Z%d", n)
	}
	return fmt.Sprintf("Y%d", n)
}

// at is the address of vector u of the row at base, from CX.
func (a *asmWriter) at(base string, u int) string {
	return fmt.Sprintf("%d(%s)(CX*1)", a.vb*u, base)
}

// at32 is at for a float32 row that a 16-bit kernel's offset CX indexes
// (widenVecs' gamma and beta): twice the offset.
func (a *asmWriter) at32(base string, u int) string {
	return fmt.Sprintf("%d(%s)(CX*2)", 4*a.lanes*u, base)
}

// mask sets the mask km to the lanes below the element count in CX,
// which is less than lanes; it clobbers CX and DX (and Y12, Y13).
func (a *asmWriter) mask(km string) {
	if a.zmm {
		a.w("MOVL $1, DX")
		a.w("SHLL CX, DX")
		a.w("DECL DX")
		a.w("KMOVW DX, %s", km)
		return
	}
	a.w("MOVQ $0x0706050403020100, DX")
	a.w("VMOVQ DX, X12")
	a.w("VPMOVSXBD X12, Y12 // 0, 1, …, 7")
	a.w("VMOVD CX, X13")
	a.w("VPBROADCASTD X13, Y13")
	a.w("VPCMPGTD Y12, Y13, %s", km)
}

// prologue loads the arguments and the row's sizes, and builds rowMask.
func (a *asmWriter) prologue() {
	args, frame := "y, x, gamma, rows", 32
	if a.layer {
		args, frame = "y, x, gamma, beta, rows", 40
	}
	if a.generic {
		args, frame = args+", cols", frame+8
	}
	fmt.Fprintf(a, "\n// func %s(%s)\n", a.asmFn(), args)
	fmt.Fprintf(a, "// %s of each row in %s.\n", a.opName(), a.asmSweeps())
	fmt.Fprintf(a, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", a.asmFn(), frame)
	a.w("MOVQ y+0(FP), DI")
	a.w("MOVQ x+8(FP), SI")
	a.w("MOVQ gamma+16(FP), BX")
	next := 24
	if a.layer {
		a.w("MOVQ beta+24(FP), R14")
		next += 8
	}
	a.w("MOVQ rows+%d(FP), R8", next)
	if a.generic {
		a.w("MOVQ cols+%d(FP), R9", next+8)
		a.w("SHLQ $%d, R9", a.es/2)
	} else {
		a.w("MOVQ $%d, R9", a.es*a.cols)
	}
	a.w("MOVQ R9, R11")
	a.w("ANDQ $-%d, R11", a.vb)
	a.w("MOVQ R9, R10")
	a.w("ANDQ $-%d, R10", a.group)
	a.w("MOVQ R9, CX")
	a.w("SUBQ R11, CX")
	a.w("SHRQ $%d, CX // elements in the partial vector", a.es/2)
	a.mask(a.rowMask)
	a.w("TESTQ R8, R8")
	a.w("JZ done")
}

// sweep writes the loops of one sweep from the offset in CX: groups of
// unroll vectors up to groupEnd, their bodies interleaved step by step;
// single vectors up to vecEnd; then the partial vector, masked by km,
// whose body gets masked set.
func (a *asmWriter) sweep(name, groupEnd, vecEnd, km string, body func(u int, masked bool) []string) {
	if a.unroll > 1 {
		a.label(name + "_group")
		a.w("CMPQ CX, %s", groupEnd)
		a.w("JGE %s_vec", name)
		bodies := make([][]string, a.unroll)
		for u := range bodies {
			bodies[u] = body(u, false)
		}
		for i := range bodies[0] {
			for u := range bodies {
				a.w("%s", bodies[u][i])
			}
		}
		a.checkNE()
		a.w("ADDQ $%d, CX", a.group)
		a.w("JMP %s_group", name)
	}
	a.label(name + "_vec")
	a.w("CMPQ CX, %s", vecEnd)
	a.w("JGE %s_tail", name)
	a.lines(body(0, false))
	a.checkNE()
	a.w("ADDQ $%d, CX", a.vb)
	a.w("JMP %s_vec", name)
	a.label(name + "_tail")
	if a.zmm {
		a.w("KORTESTW %s, %s", km, km)
		a.w("JZ %s_end", name)
	} else {
		a.w("CMPQ CX, R9 // no partial vector")
		a.w("JGE %s_end", name)
	}
	a.lines(body(0, true))
	a.checkNE()
	a.label(name + "_end")
}

// checkNE ends the vectors of convert=cvtne's stores since the last
// call: those holding a subnormal stored again (goasm.Reg16.CheckNE),
// out of line, after RET.
func (a *asmWriter) checkNE() {
	if len(a.ne) == 0 {
		return
	}
	a.labels++
	inline, slow := a.h.CheckNE(a.ne, fmt.Sprintf("ne%d", a.labels))
	a.lines(inline)
	a.slow, a.ne = append(a.slow, slow...), nil
}

// load returns the instructions that set x to the vector u of row base,
// zero in the lanes km masks off; with convert=reg the partial vector on
// Y registers is moved a word at a time, the loop labelled l in a generic
// kernel.
func (a *asmWriter) load(base string, u int, masked bool, km, x, l string) []string {
	switch {
	case a.reg && !masked:
		return a.h.Load(a.at(base, u), x, "")
	case a.reg && a.zmm:
		return a.h.Load(a.at(base, u), x, km)
	case a.reg:
		words := goasm.Words(xOf(x), base, a.cols%a.lanes)
		if a.generic {
			words = goasm.WordsTo(xOf(x), base, "R9", "AX", l)
		}
		return append(words, a.h.Widen(xOf(x), x)...)
	case !masked:
		return []string{fmt.Sprintf("VMOVUPS %s, %s", a.at(base, u), x)}
	case a.zmm:
		return []string{fmt.Sprintf("VMOVUPS.Z %s, %s, %s", a.at(base, u), km, x)}
	default:
		return []string{fmt.Sprintf("VMASKMOVPS %s, %s, %s", a.at(base, u), km, x)}
	}
}

// zeroAccs zeroes the accumulators from vector register base.
func (a *asmWriter) zeroAccs(base int) {
	for u := range a.unroll {
		r := base + u
		if a.zmm {
			a.w("VPXORD Z%d, Z%d, Z%d", r, r, r)
		} else {
			a.w("VXORPS Y%d, Y%d, Y%d", r, r, r)
		}
	}
}

// sum adds the accumulators from vector register base into X register
// base's lowest lane, through vector register scratch.
func (a *asmWriter) sum(base, scratch int) {
	a.tree(base)
	a.hsum(base, scratch)
}

// tree adds the accumulators from vector register base into the first.
func (a *asmWriter) tree(base int) {
	for step := 1; step < a.unroll; step *= 2 {
		for u := 0; u+step < a.unroll; u += 2 * step {
			a.w("VADDPS %s, %s, %s", a.vr(base+u+step), a.vr(base+u), a.vr(base+u))
		}
	}
}

// hsum adds the lanes of vector register r (below 16) into X register
// r's lowest lane, through vector register scratch.
func (a *asmWriter) hsum(r, scratch int) {
	if a.zmm {
		a.w("VEXTRACTF64X4 $1, Z%d, Y%d", r, scratch)
		a.w("VADDPS Y%d, Y%d, Y%d", scratch, r, r)
	}
	a.w("VEXTRACTF128 $1, Y%d, X%d", r, scratch)
	a.w("VADDPS X%[1]d, X%[2]d, X%[2]d", scratch, r)
	a.w("VPERMILPS $0x4e, X%d, X%d", r, scratch)
	a.w("VADDPS X%[1]d, X%[2]d, X%[2]d", scratch, r)
	a.w("VPERMILPS $0xb1, X%d, X%d", r, scratch)
	a.w("VADDPS X%[1]d, X%[2]d, X%[2]d", scratch, r)
}

// overflow sends a row whose float32 sum in X register x is not finite
// to the float64 path, clobbering AX and X1.
func (a *asmWriter) overflow(x string) {
	a.w("MOVL $0x%08x, AX // MaxFloat32", math.Float32bits(math.MaxFloat32))
	a.w("VMOVD AX, X1")
	a.w("VUCOMISS %s, X1", x)
	a.w("JCS slow // the float32 sum overflowed (or is NaN): again in float64")
}

// loadN sets X register x to the float64 of the elements of a row.
func (a *asmWriter) loadN(x string) {
	if a.generic {
		a.w("MOVQ R9, AX")
		a.w("SHRQ $%d, AX", a.es/2)
		a.w("VCVTSI2SDQ AX, %[1]s, %[1]s", x)
		return
	}
	a.w("MOVQ $0x%016x, AX // n = %d", math.Float64bits(float64(a.cols)), a.cols)
	a.w("VMOVQ AX, %s", x)
}

// invSqrt broadcasts float32(1/√(X0+eps)), X0 a float64, into inv.
func (a *asmWriter) invSqrt() {
	a.w("MOVQ $0x%016x, AX // eps = %g", math.Float64bits(a.eps), a.eps)
	a.w("VMOVQ AX, X1")
	a.w("VADDSD X1, X0, X0")
	a.w("VSQRTSD X0, X0, X0")
	a.w("MOVQ $0x%016x, AX // 1", math.Float64bits(1))
	a.w("VMOVQ AX, X1")
	a.w("VDIVSD X0, X1, X0")
	a.w("VCVTSD2SS X0, X0, X0")
	a.w("VBROADCASTSS X0, %s", a.vr(a.inv))
}

// rmsStats writes RMSNorm's statistics of the row at SI: 1/rms in inv.
func (a *asmWriter) rmsStats() {
	// The sum of squares, in float32 lanes.
	a.zeroAccs(0)
	a.w("XORQ CX, CX")
	a.sweep("sum", "R10", "R11", a.rowMask, func(u int, masked bool) []string {
		x := a.vr(a.xBase + u)
		return append(a.load("SI", u, masked, a.rowMask, x, "sum_x"), fmt.Sprintf("VFMADD231PS %s, %s, %s", x, x, a.vr(u)))
	})
	a.sum(0, 1)
	a.overflow("X0")
	a.w("VCVTSS2SD X0, X0, X0")

	// 1/rms = 1/√(sum/n + eps) in float64, as the Go rows compute it.
	a.label("scale")
	a.loadN("X1")
	a.w("VDIVSD X1, X0, X0")
	a.invSqrt()
}

// rmsSlow writes the float64 path of a row whose float32 sum of squares
// overflowed: the sum again, in float64, one element at a time, as the Go
// rows' slow path does.
func (a *asmWriter) rmsSlow() {
	a.label("slow")
	a.w("VXORPD X0, X0, X0")
	a.w("XORQ CX, CX")
	a.label("slow_loop")
	a.lines(a.slowLoad())
	a.w("VFMADD231SD X1, X1, X0")
	a.w("ADDQ $%d, CX", a.es)
	a.w("CMPQ CX, R9")
	a.w("JLT slow_loop")
	a.w("JMP scale")
}

// outSweep writes the output sweep of the row, y from x and inv.
func (a *asmWriter) outSweep() {
	if a.stream {
		a.lines(a.regSetup()) // through AX, which the head's bytes take next
		a.w("MOVQ DI, AX")
		a.w("NEGQ AX")
		a.w("ANDQ $%d, AX", a.vb-1)
		a.w("CMPQ AX, R9")
		a.w("CMOVQGT R9, AX // AX: the bytes of y before its first %d-byte boundary in the row", a.vb)
		a.w("MOVQ R9, R13")
		a.w("SUBQ AX, R13")
		a.w("MOVQ R13, CX")
		a.w("ANDQ $-%d, R13", a.vb)
		if a.unroll > 1 {
			a.w("MOVQ CX, R12")
			a.w("ANDQ $-%d, R12", a.group)
			a.w("ADDQ AX, R12")
		}
		a.w("SUBQ R13, CX")
		a.w("SHRQ $%d, CX", a.es/2)
		a.mask(a.tailMask)
		a.w("ADDQ AX, R13")
		a.w("MOVQ AX, CX")
		a.w("SHRQ $%d, CX", a.es/2)
		a.mask(a.headMask)
		a.w("XORQ CX, CX")
		a.lines(a.out(a.headMask, "")(0, true))
		a.checkNE()
		a.w("MOVQ AX, CX")
		a.prefetchNext()
		a.h.Stream = a.reg // the whole vectors of the 16-bit forms (goasm.Reg16.Stream)
		a.sweep("out", "R12", "R13", a.tailMask, a.out(a.tailMask, "VMOVNTPS"))
		a.h.Stream = false
		return
	}
	a.w("XORQ CX, CX")
	a.prefetchNext()
	a.lines(a.regSetup())
	a.sweep("out", "R10", "R11", a.rowMask, a.out(a.rowMask, "VMOVUPS"))
}

func (a *asmWriter) prefetchNext() {
	if a.prefetch {
		a.w("LEAQ (SI)(R9*1), DX // the next row of x, fetched during the output sweep")
	}
}

// out returns the body of an output sweep, stored with op, the partial
// vector masked by km.
func (a *asmWriter) out(km, op string) func(u int, masked bool) []string {
	return func(u int, masked bool) []string {
		var body []string
		if a.layer {
			body = a.layerOut(u, masked, km, op)
		} else {
			body = a.rmsOut(u, masked, km, op)
		}
		if a.prefetch && !masked {
			body = append(body, fmt.Sprintf("PREFETCHT0 %s", a.at("DX", u)))
		}
		return body
	}
}

// rmsOut is RMSNorm's output body: y = x·(1/rms)·gamma.
func (a *asmWriter) rmsOut(u int, masked bool, km, op string) []string {
	x := a.vr(a.xBase + u)
	body := append(a.load("SI", u, masked, km, x, "out_x"), fmt.Sprintf("VMULPS %s, %s, %s", a.vr(a.inv), x, x))
	switch {
	case a.reg:
		// gamma widened, whole vectors (widenVecs).
		body = append(body, fmt.Sprintf("VMULPS %s, %s, %s", a.at32("BX", u), x, x))
		return append(body, a.regStore(u, masked, km, x, a.vr(a.regGamma(u)))...)
	case !masked:
		return append(body,
			fmt.Sprintf("VMULPS %s, %s, %s", a.at("BX", u), x, x),
			fmt.Sprintf("%s %s, %s", op, x, a.at("DI", u)))
	case a.zmm:
		return append(body,
			fmt.Sprintf("VMULPS.Z %s, %s, %s, %s", a.at("BX", u), x, km, x),
			fmt.Sprintf("VMOVUPS %s, %s, %s", x, km, a.at("DI", u)))
	default:
		return append(body,
			fmt.Sprintf("VMASKMOVPS %s, %s, Y14", a.at("BX", u), km),
			"VMULPS Y14, "+x+", "+x,
			fmt.Sprintf("VMASKMOVPS %s, %s, %s", x, km, a.at("DI", u)))
	}
}
