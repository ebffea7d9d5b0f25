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

// With code=asm RMSNorm's rows are Go assembly on AVX-512, or on AVX2
// and FMA (see the package doc): the Go function of the rows checks the
// slices and calls it a block of rows at a time.

// asmLanes is the vector width of the assembly on AVX-512's Z registers,
// asmLanesAVX2 on AVX2's Y registers, of which there are 16: the unroll's
// accumulators and vectors of x take at most 8 (asmMaxUnrollAVX2).
const (
	asmLanes         = 16
	asmLanesAVX2     = 8
	asmMaxUnrollAVX2 = 4
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
// the unroll from Z0, the vectors of x (then of y) from regX, 1/rms
// broadcast in regInv (asmFile has those of Y registers).
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
	call := []jen.Code{jen.Op("&").Id("d").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0)), jen.Op("&").Id("gamma").Index(jen.Lit(0))}
	if k.layer {
		call = append(call, jen.Op("&").Id("beta").Index(jen.Lit(0)))
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
	decl := []jen.Code{jen.List(ptrs...).Op("*").Add(elem), id("rows").Int()}
	what := fmt.Sprintf("rows rows of %d elements", k.cols)
	if k.generic {
		decl[1] = jen.List(id("rows"), id("cols")).Int()
		what = "rows rows of cols elements"
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
	if k.layer {
		if k.onepass {
			return "two sweeps of t = x-x[0]: Σt and Σt², for the mean and the variance, in float64 where Σt² overflows float32; y"
		}
		return "three sweeps of t = x-x[0]: Σt, for the mean; the sum of squared deviations, in float64 where it overflows float32; y"
	}
	s := "two sweeps: the sum of squares, in float64 where its float32 sum overflows; y = x·(1/rms)·gamma"
	if k.stream {
		s += fmt.Sprintf(", stored with non-temporal stores where y is %d-byte aligned", 4*k.lanes)
	}
	if k.prefetch {
		s += "; the output sweep fetches the next row of x"
	}
	return s
}

// asmFile returns the .s file of k: one function, a loop over rows, on
// Z registers (16 lanes, AVX-512) or Y registers (8 lanes, AVX2 and FMA).
//
// Registers: DI, SI the rows of y and x, BX gamma, R8 the rows left, CX
// the byte offset in the row, AX and DX scratch; R9 the bytes of a row,
// R10 of its whole groups of unroll vectors, R11 of its whole vectors.
// The partial vector at a row's end has a mask: K1 (all clear when there
// is none), or with 8 lanes Y9, whose lanes in the row are all ones
// (VMASKMOVPS). With store=stream, the output sweep starts where the row
// of y reaches a boundary of a vector's size: the elements before it are
// one masked vector (K2, Y10), R12 and R13 end its groups and vectors,
// and K3 (Y11) masks its partial vector.
func (k kernel) asmFile() []byte {
	lanes := k.lanes
	if k.layer || (lanes != asmLanes && lanes != asmLanesAVX2) || (lanes == asmLanesAVX2 && k.unroll > asmMaxUnrollAVX2) {
		panic(fmt.Sprintf("norm: no assembly for %s %s", k.kind.name, k.cfg))
	}
	zmm := lanes == asmLanes
	es := 4 // bytes of an element in memory
	if k.reg {
		es = 2
	}
	vb := es * lanes // bytes of a vector in memory
	h := k.reg16()
	var b strings.Builder
	b.WriteString(goasm.Header)
	if data := k.regData(); data != nil {
		b.WriteString("\n" + strings.Join(data, "\n") + "\n")
	}
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	label := func(l string) { fmt.Fprintf(&b, "%s:\n", l) }
	// The vector registers of the accumulators (from 0), of x and of
	// 1/rms; with 8 lanes also the masks (rowMask, headMask, tailMask),
	// the scratch of building one, and gamma's partial vector.
	xBase, inv := regX, regInv
	rowMask, headMask, tailMask := "K1", "K2", "K3"
	if !zmm {
		xBase, inv = 4, 8
		rowMask, headMask, tailMask = "Y9", "Y10", "Y11"
	}
	vr := func(n int) string {
		if zmm {
			return fmt.Sprintf("Z%d", n)
		}
		return fmt.Sprintf("Y%d", n)
	}
	at := func(base string, u int) string { return fmt.Sprintf("%d(%s)(CX*1)", vb*u, base) }
	// mask sets the mask km to the lanes below the element count in CX,
	// which is less than lanes; it clobbers CX and DX (and Y12, Y13).
	mask := func(km string) {
		if zmm {
			w("MOVL $1, DX")
			w("SHLL CX, DX")
			w("DECL DX")
			w("KMOVW DX, %s", km)
			return
		}
		w("MOVQ $0x0706050403020100, DX")
		w("VMOVQ DX, X12")
		w("VPMOVSXBD X12, Y12 // 0, 1, …, 7")
		w("VMOVD CX, X13")
		w("VPBROADCASTD X13, Y13")
		w("VPCMPGTD Y12, Y13, %s", km)
	}

	args, frame := "y, x, gamma, rows", 32
	if k.generic {
		args, frame = args+", cols", 40
	}
	fmt.Fprintf(&b, "\n// func %s(%s)\n", k.asmFn(), args)
	fmt.Fprintf(&b, "// RMSNorm of each row in %s.\n", k.asmSweeps())
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", k.asmFn(), frame)
	w("MOVQ y+0(FP), DI")
	w("MOVQ x+8(FP), SI")
	w("MOVQ gamma+16(FP), BX")
	w("MOVQ rows+24(FP), R8")
	group := vb * k.unroll
	if k.generic {
		w("MOVQ cols+32(FP), R9")
		w("SHLQ $%d, R9", es/2)
	} else {
		w("MOVQ $%d, R9", es*k.cols)
	}
	w("MOVQ R9, R11")
	w("ANDQ $-%d, R11", vb)
	w("MOVQ R9, R10")
	w("ANDQ $-%d, R10", group)
	w("MOVQ R9, CX")
	w("SUBQ R11, CX")
	w("SHRQ $%d, CX // elements in the partial vector", es/2)
	mask(rowMask)
	w("TESTQ R8, R8")
	w("JZ done")

	// sweep writes the loops of one sweep from the offset in CX: groups
	// of unroll vectors up to groupEnd, their bodies interleaved step by
	// step; single vectors up to vecEnd; then the partial vector, masked
	// by km, whose body gets masked set.
	sweep := func(name, groupEnd, vecEnd, km string, body func(u int, masked bool) []string) {
		if k.unroll > 1 {
			label(name + "_group")
			w("CMPQ CX, %s", groupEnd)
			w("JGE %s_vec", name)
			bodies := make([][]string, k.unroll)
			for u := range bodies {
				bodies[u] = body(u, false)
			}
			for i := range bodies[0] {
				for u := range bodies {
					w("%s", bodies[u][i])
				}
			}
			w("ADDQ $%d, CX", group)
			w("JMP %s_group", name)
		}
		label(name + "_vec")
		w("CMPQ CX, %s", vecEnd)
		w("JGE %s_tail", name)
		for _, l := range body(0, false) {
			w("%s", l)
		}
		w("ADDQ $%d, CX", vb)
		w("JMP %s_vec", name)
		label(name + "_tail")
		if zmm {
			w("KORTESTW %s, %s", km, km)
			w("JZ %s_end", name)
		} else {
			w("CMPQ CX, R9 // no partial vector")
			w("JGE %s_end", name)
		}
		for _, l := range body(0, true) {
			w("%s", l)
		}
		label(name + "_end")
	}
	// load returns the instructions that set x to the vector u of row
	// base, zero in the lanes km masks off; with convert=reg the partial
	// vector on Y registers is moved a word at a time, the loop labelled
	// l in a generic kernel.
	load := func(base string, u int, masked bool, km, x, l string) []string {
		switch {
		case k.reg && !masked:
			return h.Load(at(base, u), x, "")
		case k.reg && zmm:
			return h.Load(at(base, u), x, km)
		case k.reg:
			words := goasm.Words(xOf(x), base, k.cols%lanes)
			if k.generic {
				words = goasm.WordsTo(xOf(x), base, "R9", "AX", l)
			}
			return append(words, h.Widen(xOf(x), x)...)
		case !masked:
			return []string{fmt.Sprintf("VMOVUPS %s, %s", at(base, u), x)}
		case zmm:
			return []string{fmt.Sprintf("VMOVUPS.Z %s, %s, %s", at(base, u), km, x)}
		default:
			return []string{fmt.Sprintf("VMASKMOVPS %s, %s, %s", at(base, u), km, x)}
		}
	}
	// out returns the body of an output sweep: y = x·(1/rms)·gamma,
	// stored with op.
	out := func(km, op string) func(u int, masked bool) []string {
		return func(u int, masked bool) []string {
			x := vr(xBase + u)
			body := append(load("SI", u, masked, km, x, "out_x"), fmt.Sprintf("VMULPS %s, %s, %s", vr(inv), x, x))
			switch {
			case k.reg:
				g := vr(k.regGamma(u))
				body = append(body, load("BX", u, masked, km, g, "out_g")...)
				body = append(body, k.regStore(u, masked, h, vr, x, g, at("DI", u))...)
			case !masked:
				body = append(body,
					fmt.Sprintf("VMULPS %s, %s, %s", at("BX", u), x, x),
					fmt.Sprintf("%s %s, %s", op, x, at("DI", u)))
			case zmm:
				body = append(body,
					fmt.Sprintf("VMULPS.Z %s, %s, %s, %s", at("BX", u), x, km, x),
					fmt.Sprintf("VMOVUPS %s, %s, %s", x, km, at("DI", u)))
			default:
				body = append(body,
					fmt.Sprintf("VMASKMOVPS %s, %s, Y14", at("BX", u), km),
					"VMULPS Y14, "+x+", "+x,
					fmt.Sprintf("VMASKMOVPS %s, %s, %s", x, km, at("DI", u)))
			}
			if k.prefetch && !masked {
				body = append(body, fmt.Sprintf("PREFETCHT0 %s", at("DX", u)))
			}
			return body
		}
	}

	label("row")
	// The sum of squares, in float32 lanes.
	for u := range k.unroll {
		if zmm {
			w("VPXORD Z%d, Z%d, Z%d", u, u, u)
		} else {
			w("VXORPS Y%d, Y%d, Y%d", u, u, u)
		}
	}
	w("XORQ CX, CX")
	sweep("sum", "R10", "R11", rowMask, func(u int, masked bool) []string {
		x := vr(xBase + u)
		return append(load("SI", u, masked, rowMask, x, "sum_x"), fmt.Sprintf("VFMADD231PS %s, %s, %s", x, x, vr(u)))
	})
	for step := 1; step < k.unroll; step *= 2 {
		for u := 0; u+step < k.unroll; u += 2 * step {
			w("VADDPS %s, %s, %s", vr(u+step), vr(u), vr(u))
		}
	}
	if zmm {
		w("VEXTRACTF64X4 $1, Z0, Y1")
		w("VADDPS Y1, Y0, Y0")
	}
	w("VEXTRACTF128 $1, Y0, X1")
	w("VADDPS X1, X0, X0")
	w("VPERMILPS $0x4e, X0, X1")
	w("VADDPS X1, X0, X0")
	w("VPERMILPS $0xb1, X0, X1")
	w("VADDPS X1, X0, X0")
	w("MOVL $0x%08x, AX // MaxFloat32", math.Float32bits(math.MaxFloat32))
	w("VMOVD AX, X1")
	w("VUCOMISS X0, X1")
	w("JCS slow // the float32 sum overflowed (or is NaN): again in float64")
	w("VCVTSS2SD X0, X0, X0")

	// 1/rms = 1/√(sum/n + eps) in float64, as the Go rows compute it.
	label("scale")
	if k.generic {
		w("MOVQ R9, AX")
		w("SHRQ $%d, AX", es/2)
		w("VCVTSI2SDQ AX, X1, X1")
	} else {
		w("MOVQ $0x%016x, AX // n = %d", math.Float64bits(float64(k.cols)), k.cols)
		w("VMOVQ AX, X1")
	}
	w("VDIVSD X1, X0, X0")
	w("MOVQ $0x%016x, AX // eps = %g", math.Float64bits(k.eps), k.eps)
	w("VMOVQ AX, X1")
	w("VADDSD X1, X0, X0")
	w("VSQRTSD X0, X0, X0")
	w("MOVQ $0x%016x, AX // 1", math.Float64bits(1))
	w("VMOVQ AX, X1")
	w("VDIVSD X0, X1, X0")
	w("VCVTSD2SS X0, X0, X0")
	w("VBROADCASTSS X0, %s", vr(inv))

	// y = x·(1/rms)·gamma.
	if k.stream {
		w("MOVQ DI, AX")
		w("NEGQ AX")
		w("ANDQ $%d, AX", vb-1)
		w("CMPQ AX, R9")
		w("CMOVQGT R9, AX // AX: the bytes of y before its first %d-byte boundary in the row", vb)
		w("MOVQ R9, R13")
		w("SUBQ AX, R13")
		w("MOVQ R13, CX")
		w("ANDQ $-%d, R13", vb)
		if k.unroll > 1 {
			w("MOVQ CX, R12")
			w("ANDQ $-%d, R12", group)
			w("ADDQ AX, R12")
		}
		w("SUBQ R13, CX")
		w("SHRQ $2, CX")
		mask(tailMask)
		w("ADDQ AX, R13")
		w("MOVQ AX, CX")
		w("SHRQ $2, CX")
		mask(headMask)
		w("XORQ CX, CX")
		for _, l := range out(headMask, "")(0, true) {
			w("%s", l)
		}
		w("MOVQ AX, CX")
		if k.prefetch {
			w("LEAQ (SI)(R9*1), DX // the next row of x, fetched during the output sweep")
		}
		sweep("out", "R12", "R13", tailMask, out(tailMask, "VMOVNTPS"))
	} else {
		w("XORQ CX, CX")
		if k.prefetch {
			w("LEAQ (SI)(R9*1), DX // the next row of x, fetched during the output sweep")
		}
		for _, l := range k.regSetup() {
			w("%s", l)
		}
		sweep("out", "R10", "R11", rowMask, out(rowMask, "VMOVUPS"))
	}
	w("ADDQ R9, SI")
	w("ADDQ R9, DI")
	w("DECQ R8")
	w("JNZ row")
	label("done")
	if k.stream {
		w("SFENCE // order the non-temporal stores before the caller's")
	}
	w("VZEROUPPER")
	w("RET")

	// A row whose float32 sum of squares overflowed: the sum again, in
	// float64, one element at a time, as the Go rows' slow path does.
	label("slow")
	w("VXORPD X0, X0, X0")
	w("XORQ CX, CX")
	label("slow_loop")
	for _, l := range k.slowLoad() {
		w("%s", l)
	}
	w("VFMADD231SD X1, X1, X0")
	w("ADDQ $%d, CX", es)
	w("CMPQ CX, R9")
	w("JLT slow_loop")
	w("JMP scale")
	return []byte(b.String())
}
