package softmax

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/schedule"
)

// With code=asm the three passes over each row are Go assembly on
// AVX-512 (see the package doc): the Go function of the rows checks the
// slices and calls it a block of rows at a time.

// asmLanes is the vector width of the assembly: AVX-512's Z registers.
const asmLanes = 16

// asmBlock is the most elements of src one call of the assembly covers,
// unless one row is longer (a call covers at least a whole row): a
// goroutine cannot be preempted inside assembly, so a call is kept to a
// few tens of microseconds. (The generated comment of the rows' function
// states the bound without that exception; it is fixed with the next
// change of the template's code.)
const asmBlock = 1 << 16

// Vector registers of the assembly: per unrolled vector u < 4, the
// argument x, the exp's k and its result p, and an accumulator (maxima,
// then sums); the exp's constants from expFirst on; and the constants of
// the row.
const (
	regK, regP, regAcc = 4, 8, 12
	expFirst           = 16 // to 26 at most: degree 5 has 11 constants
	regLowest          = 27 // -MaxFloat32, where running maxima start
	regOne             = 28
	regMax             = 30 // the row's maximum, broadcast
	regScale           = 31 // 1/sum, broadcast
)

// asmMaxUnroll is the largest unroll the assembly takes: four vectors of
// four registers each (x, k, p, accumulator) below the constants.
const asmMaxUnroll = 4

// emitAsm is goEmitter's assembly: the assembly of the kernel of cfg, or nil
// for code=go.
func emitAsm(name string, shape []int, cfg schedule.Config) []byte {
	k := newKernel(name, cfg)
	if !k.asm {
		return nil
	}
	_, k.cols = checkShape(shape)
	k.unroll = min(k.unroll, max(1, k.cols/asmLanes)) // as emitGo caps it
	return k.asmFile()
}

// emitAsmGeneric is goEmitter's assembly of a generic kernel: the same with cols an
// argument.
func emitAsmGeneric(name string, cfg schedule.Config) []byte {
	k := newKernel(name, cfg)
	if !k.asm {
		return nil
	}
	k.generic = true
	return k.asmFile()
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
			id("block").Op("=").Lit(max(1, asmBlock/k.cols)).Comment(fmt.Sprintf("rows per call: at most %d elements", asmBlock)),
		))
	}
	call := []jen.Code{jen.Op("&").Id("d").Index(jen.Lit(0)), jen.Op("&").Id("s").Index(jen.Lit(0)), id("n")}
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
	f.Add(golang.Comment(fmt.Sprintf("%s computes rows lo to hi-1 with %s, a block of rows at a time: "+
		"a goroutine cannot be preempted in assembly, so a call covers at most %d elements.", k.rowsFn(), k.asmFn(), asmBlock)))
	ints := []jen.Code{id("lo"), id("hi")}
	if k.generic {
		ints = append([]jen.Code{id("cols")}, ints...)
	}
	f.Func().Id(k.rowsFn()).Params(jen.List(id("dst"), id("src")).Index().Float32(), jen.List(ints...).Int()).Block(body...)

	params := []jen.Code{jen.List(id("dst"), id("src")).Op("*").Float32(), id("rows").Int()}
	what := fmt.Sprintf("rows rows of %d elements", k.cols)
	if k.generic {
		params[1] = jen.List(id("rows"), id("cols")).Int()
		what = "rows rows of cols elements"
	}
	f.Add(golang.Comment(fmt.Sprintf("%s writes the softmax of %s from src to dst in %s. "+
		"It is Go assembly on AVX-512, in the kernel's .s file; the caller checks the bounds.", k.asmFn(), what, k.asmPasses())))
	f.Comment("//go:noescape")
	f.Func().Id(k.asmFn()).Params(params...)
}

// asmPasses describes the passes of the assembly, for comments.
func (k kernel) asmPasses() string {
	pass := "three passes: the maximum; e^(x-max) into dst and its sum; dst scaled by 1/sum"
	if k.prefetch {
		pass += "; the sums fetch the next row of src"
	}
	return pass
}

// asmFile returns the .s file of k: one function, a loop over rows.
//
// Registers: DI and SI the rows of dst and src, R8 the rows left, CX the
// byte offset in the row, AX and DX scratch, K1 the mask of the partial
// vector at a row's end (all clear when there is none); for a generic
// kernel R9 the bytes of a row, R10 of its whole groups of unroll vectors,
// R11 of its whole vectors, which a specialised kernel has as constants.
func (k kernel) asmFile() []byte {
	if k.v.Lanes() != asmLanes || k.unroll > asmMaxUnroll {
		panic(fmt.Sprintf("softmax: no assembly for %s", k.cfg))
	}
	var b strings.Builder
	b.WriteString(goasm.Header)
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	label := func(l string) { fmt.Fprintf(&b, "%s:\n", l) }
	exp := goasm.Exp{Lanes: asmLanes, Degree: expDegree[k.cfg.Str("exp")], First: expFirst}

	args := "dst, src, rows"
	frame := 24
	if k.generic {
		args += ", cols"
		frame += 8
	}
	fmt.Fprintf(&b, "\n// func %s(%s)\n", k.asmFn(), args)
	fmt.Fprintf(&b, "// The softmax of each row in %s.\n", k.asmPasses())
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", k.asmFn(), frame)
	w("MOVQ dst+0(FP), DI")
	w("MOVQ src+8(FP), SI")
	w("MOVQ rows+16(FP), R8")

	group := 64 * k.unroll
	var rowBytes, groupBytes, vecBytes string
	tail := true // whether a row may end in a partial vector
	if k.generic {
		rowBytes, groupBytes, vecBytes = "R9", "R10", "R11"
		w("MOVQ cols+24(FP), R9")
		w("MOVQ R9, R11")
		w("ANDQ $-%d, R11 // elements in whole vectors", asmLanes)
		w("MOVQ R9, CX")
		w("SUBQ R11, CX // elements in the partial vector")
		w("MOVL $1, DX")
		w("SHLL CX, DX")
		w("DECL DX")
		w("KMOVW DX, K1")
		w("SHLQ $2, R11")
		w("MOVQ R11, R10")
		w("ANDQ $-%d, R10", group)
		w("SHLQ $2, R9")
	} else {
		n := k.cols / asmLanes * 64
		rowBytes, groupBytes, vecBytes = fmt.Sprintf("$%d", 4*k.cols), fmt.Sprintf("$%d", n/group*group), fmt.Sprintf("$%d", n)
		if t := k.cols % asmLanes; t != 0 {
			w("MOVL $0x%x, DX // the %d elements of the partial vector", 1<<t-1, t)
			w("KMOVW DX, K1")
		} else {
			tail = false
		}
	}
	for _, l := range exp.Load() {
		w("%s", l)
	}
	for _, c := range []struct {
		reg  int
		val  float32
		what string
	}{{regLowest, -math.MaxFloat32, "-MaxFloat32: running maxima start here, not at -Inf, since -Inf-(-Inf) would be NaN"}, {regOne, 1, "1"}} {
		w("MOVL $0x%08x, AX // %s", math.Float32bits(c.val), c.what)
		w("VMOVD AX, X%d", c.reg)
		w("VPBROADCASTD X%d, Z%d", c.reg, c.reg)
	}
	w("TESTQ R8, R8")
	w("JZ done")

	z := func(n int) string { return fmt.Sprintf("Z%d", n) }
	at := func(base string, u int) string { return fmt.Sprintf("%d(%s)(CX*1)", 64*u, base) }
	// sweep writes the loops of one pass: groups of unroll vectors,
	// their bodies interleaved step by step so that the unroll's exps
	// overlap; then single vectors; then the partial vector, whose body
	// gets masked set.
	sweep := func(name string, body func(u int, masked bool) []string) {
		// A specialised kernel leaves out the loops its row length skips.
		n := k.cols / asmLanes
		groups, ones := k.generic || n >= k.unroll, k.unroll > 1 && (k.generic || n%k.unroll != 0)
		w("XORQ CX, CX")
		if groups {
			if k.generic {
				next := name + "_vec"
				if !ones {
					next = name + "_tail"
				}
				w("CMPQ CX, %s", groupBytes)
				w("JGE %s", next)
			}
			label(name + "_group")
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
			w("CMPQ CX, %s", groupBytes)
			w("JLT %s_group", name)
		}
		if ones {
			label(name + "_vec")
			if k.generic {
				w("CMPQ CX, %s", vecBytes)
				w("JGE %s_tail", name)
			}
			label(name + "_one")
			for _, l := range body(0, false) {
				w("%s", l)
			}
			w("ADDQ $64, CX")
			w("CMPQ CX, %s", vecBytes)
			w("JLT %s_one", name)
		}
		if !tail {
			return
		}
		label(name + "_tail")
		if k.generic {
			w("KORTESTW K1, K1")
			w("JZ %s_end", name)
		}
		for _, l := range body(0, true) {
			w("%s", l)
		}
		if k.generic {
			label(name + "_end")
		}
	}
	// reduce folds the accumulators into the low lane of X12 with op,
	// then broadcasts it to dst.
	reduce := func(op string, dst int) {
		for step := 1; step < k.unroll; step *= 2 {
			for u := 0; u+step < k.unroll; u += 2 * step {
				w("%s Z%d, Z%d, Z%d", op, regAcc+u+step, regAcc+u, regAcc+u)
			}
		}
		w("VEXTRACTF64X4 $1, Z12, Y13")
		w("%s Y13, Y12, Y12", op)
		w("VEXTRACTF128 $1, Y12, X13")
		w("%s X13, X12, X12", op)
		w("VPERMILPS $0x4e, X12, X13")
		w("%s X13, X12, X12", op)
		w("VPERMILPS $0xb1, X12, X13")
		w("%s X13, X12, X12", op)
		w("VBROADCASTSS X12, Z%d", dst)
	}
	// load returns the instructions that set x to src's vector u minus
	// the row's maximum, zero in the lanes masked off.
	load := func(u int, masked bool, x string) []string {
		ld := fmt.Sprintf("VMOVUPS %s, %s", at("SI", u), x)
		if masked {
			ld = fmt.Sprintf("VMOVUPS.Z %s, K1, %s", at("SI", u), x)
		}
		return []string{ld, fmt.Sprintf("VSUBPS Z%d, %s, %s", regMax, x, x)}
	}
	store := func(u int, masked bool, p string) string {
		if masked {
			return fmt.Sprintf("VMOVUPS %s, K1, %s", p, at("DI", u))
		}
		return fmt.Sprintf("VMOVUPS %s, %s", p, at("DI", u))
	}

	label("row")
	if k.prefetch {
		if k.generic {
			w("LEAQ (SI)(R9*1), R12 // the next row of src, fetched during the sums")
		} else {
			w("LEAQ %d(SI), R12 // the next row of src, fetched during the sums", 4*k.cols)
		}
	}
	// The row's maximum.
	for u := range k.unroll {
		w("VMOVAPS Z%d, Z%d", regLowest, regAcc+u)
	}
	sweep("max", func(u int, masked bool) []string {
		acc := z(regAcc + u)
		if masked {
			return []string{fmt.Sprintf("VMAXPS %s, %s, K1, %s", at("SI", u), acc, acc)}
		}
		return []string{fmt.Sprintf("VMAXPS %s, %s, %s", at("SI", u), acc, acc)}
	})
	reduce("VMAXPS", regMax)

	// e^(x-m) into dst, and its sum.
	for u := range k.unroll {
		w("VPXORD Z%d, Z%d, Z%d", regAcc+u, regAcc+u, regAcc+u)
	}
	sweep("sum", func(u int, masked bool) []string {
		x, kk, p, acc := z(u), z(regK+u), z(regP+u), z(regAcc+u)
		out := load(u, masked, x)
		if k.prefetch && !masked {
			out = append(out, fmt.Sprintf("PREFETCHT0 %s", at("R12", u)))
		}
		out = append(out, exp.Emit(x, kk, p)...)
		out = append(out, store(u, masked, p))
		if masked {
			return append(out, fmt.Sprintf("VADDPS %s, %s, K1, %s", p, acc, acc))
		}
		return append(out, fmt.Sprintf("VADDPS %s, %s, %s", p, acc, acc))
	})
	reduce("VADDPS", regAcc)
	w("VDIVPS Z%d, Z%d, Z%d", regAcc, regOne, regScale)

	// dst *= 1/sum.
	sweep("scale", func(u int, masked bool) []string {
		x := z(u)
		if masked {
			return []string{fmt.Sprintf("VMULPS.Z %s, Z%d, K1, %s", at("DI", u), regScale, x), store(u, true, x)}
		}
		return []string{fmt.Sprintf("VMULPS %s, Z%d, %s", at("DI", u), regScale, x), store(u, false, x)}
	})
	w("ADDQ %s, SI", rowBytes)
	w("ADDQ %s, DI", rowBytes)
	w("DECQ R8")
	w("JNZ row")
	label("done")
	w("VZEROUPPER")
	w("RET")
	return []byte(b.String())
}
