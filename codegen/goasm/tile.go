package goasm

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
)

// Init is how a tile's accumulators start.
type Init int

const (
	Zero   Init = iota // at zero: C = A·B
	Load               // from C: C += A·B
	Scaled             // from C times the vectors at scale: C = C·scale + A·B
)

// A Tile is an outer-product micro-kernel over Depth steps:
//
//	C[r][j] = init + Σ_t a(r, t) · B(t)[j]     r < MR, j < NV
//
// where B(t)[j] is vector j (Lanes float32s) of the NV contiguous vectors
// at b + t·BStep bytes, a(r, t) the float32 at a + r·ARow + t·AStep bytes,
// broadcast, and row r of C the NV contiguous vectors at c + r·CRow bytes.
// With Init Scaled, vector j of row r starts as C[r][j]·scale[j], the NV
// vectors at scale. Its Go declaration is
//
//	func Name(c, a, b *float32[, scale *float32][, depth int])
//
// with scale for Init Scaled and depth when Depth is 0 (the number of
// steps then comes at run time and may be 0). A stride set to Runtime
// comes at run time too, as an int argument in float32 elements (not
// bytes) before depth, in the order arow, astep, bstep, crow:
//
//	func Name(c, a, b *float32[, scale *float32][, bias *float32][, arow, astep, bstep, crow int][, depth int])
//
// which is what a shape-generic kernel needs: its rows are k or n floats
// apart, and k and n are arguments. ARow and AStep cannot both be Runtime,
// and a tile with ARow or CRow at Runtime has at most 12 rows (the rows'
// offsets are multiples of the stride held in six registers).
type Tile struct {
	Name  string
	Lanes int // 8: AVX2 Y registers (16 of them); 16: AVX-512 Z registers (32); 4: arm64's NEON V registers (32), which codegen/neon emits
	MR    int // broadcast rows
	NV    int // vectors per row
	Depth int // steps; 0 for a depth argument

	ARow, AStep int // bytes between rows of a; bytes a advances per step
	BStep       int // bytes b advances per step
	CRow        int // bytes between rows of C
	Init        Init

	// Bias adds the NV vectors at bias to every row before the store, and
	// ReLU then clamps at 0 (ReLU needs Bias): gemm's fused epilogue,
	// applied while the tile is in registers.
	Bias, ReLU bool

	// Tiles makes the function compute a column of tiles, as many as its
	// int argument tiles (after the strides, before depth; 0 computes
	// none): tile i is the tile above with a and c moved down by i·MR
	// rows, and the same b (and scale, bias). One call then does what a
	// loop in Go would call the tile for, without a call per tile. It
	// takes AStep as a constant.
	Tiles bool

	// Dot makes every step two steps of K in bf16 (AVX512-BF16, 16 lanes
	// only): a(r, t) and each float32 lane of B(t) hold a pair of bf16,
	// K index 2t in the low half and 2t+1 in the high one, and the
	// multiply-add is VDPBF16PS, which adds both products of a lane's
	// pairs to its float32 accumulator. The Go assembler has no name for
	// the instruction, so it is written as its bytes (dpbf16ps).
	Dot bool

	// Out, bf16 or f16, stores the tile rounded to that type to nearest
	// even (Reg16.Narrow) at out, a *uint16 argument after bias, its rows
	// ORow bytes apart, instead of as float32 at c, which Init Load and
	// Scaled still read: the tile of the last slice of K of a 16-bit
	// kernel, which narrows C as it stores it rather than in a pass over
	// a float32 copy. Constant strides only, and not with Tiles.
	Out  dtype.DType
	ORow int
}

// Runtime, as a stride of a Tile, makes it an argument of the function.
const Runtime = -1

// maxRuntimeRows is the most rows a tile whose rows are a run-time stride
// apart may have: rows 0 to 11 are at r·stride = m·stride·scale for m in
// 1, 3, 5, 7, 9, 11 (the multiples rowRegs holds) and scale in 1, 2, 4, 8.
const maxRuntimeRows = 12

// Registers returns the number of vector registers a tile of mr×nv vectors
// needs: its accumulators, the nv vectors of a step and two broadcasts, so
// that one broadcast loads while the other multiplies.
func Registers(mr, nv int) int { return mr*nv + nv + 2 }

// Available returns the number of vector registers of vectors of lanes
// float32s: 32 with AVX-512 (Float32x16) and with arm64's NEON (4 lanes),
// 16 with AVX2 (Float32x8).
func Available(lanes int) int {
	if lanes == 16 || lanes == 4 {
		return 32
	}
	return 16
}

// Fits reports whether an mr×nv tile of vectors of lanes float32s keeps
// everything in registers.
func Fits(lanes, mr, nv int) bool { return Registers(mr, nv) <= Available(lanes) }

// check panics on a Tile no template should build.
func (t Tile) check() {
	switch {
	case t.Name == "":
		panic("goasm: tile without a name")
	case t.Lanes != 4 && t.Lanes != 8 && t.Lanes != 16:
		panic(fmt.Sprintf("goasm: %s: %d lanes, want 4, 8 or 16", t.Name, t.Lanes))
	case t.MR < 1 || t.NV < 1 || t.Depth < 0:
		panic(fmt.Sprintf("goasm: %s: tile %dx%d, depth %d", t.Name, t.MR, t.NV, t.Depth))
	case t.ReLU && !t.Bias:
		panic(fmt.Sprintf("goasm: %s: ReLU without Bias", t.Name))
	case t.ARow == Runtime && t.AStep == Runtime:
		panic(fmt.Sprintf("goasm: %s: both strides of a at run time", t.Name))
	case (t.ARow == Runtime || t.CRow == Runtime) && t.MR > maxRuntimeRows:
		panic(fmt.Sprintf("goasm: %s: %d rows a run-time stride apart, at most %d", t.Name, t.MR, maxRuntimeRows))
	case t.Tiles && t.AStep == Runtime:
		panic(fmt.Sprintf("goasm: %s: a column of tiles with the steps of a at run time", t.Name))
	case t.Dot && t.Lanes != 16:
		panic(fmt.Sprintf("goasm: %s: VDPBF16PS tiles have 16 lanes, not %d", t.Name, t.Lanes))
	case t.Out != "" && t.Out.Size() != 2:
		panic(fmt.Sprintf("goasm: %s: stores %s, want a 16-bit type", t.Name, t.Out))
	case t.Out != "" && (t.Tiles || t.Lanes == 4 || t.ORow <= 0 || t.ARow == Runtime || t.AStep == Runtime || t.BStep == Runtime || t.CRow == Runtime):
		panic(fmt.Sprintf("goasm: %s: a 16-bit store takes constant strides, 8 or 16 lanes and no column of tiles", t.Name))
	case !Fits(t.Lanes, t.MR, t.NV):
		panic(fmt.Sprintf("goasm: %s: a %dx%d tile needs %d registers, %d-lane vectors have %d",
			t.Name, t.MR, t.NV, Registers(t.MR, t.NV), t.Lanes, Available(t.Lanes)))
	}
}

// params returns the names of the Go parameters, in order, all 8 bytes.
func (t Tile) params() []string {
	p := []string{"c", "a", "b"}
	if t.Init == Scaled {
		p = append(p, "scale")
	}
	if t.Bias {
		p = append(p, "bias")
	}
	if t.Out != "" {
		p = append(p, "out")
	}
	for _, s := range t.strides() {
		if s.bytes == Runtime {
			p = append(p, s.name)
		}
	}
	if t.Tiles {
		p = append(p, "tiles")
	}
	if t.Depth == 0 {
		p = append(p, "depth")
	}
	return p
}

// stride is one of a tile's strides, with the name of its argument.
type stride struct {
	name  string
	bytes int
}

func (t Tile) strides() []stride {
	return []stride{{"arow", t.ARow}, {"astep", t.AStep}, {"bstep", t.BStep}, {"crow", t.CRow}}
}

// ints reports whether p is an int parameter rather than a pointer.
func ints(p string) bool {
	switch p {
	case "arow", "astep", "bstep", "crow", "tiles", "depth":
		return true
	}
	return false
}

// Decl returns the Go declaration of the tile, with a doc comment and
// //go:noescape: the assembly keeps no pointer.
func (t Tile) Decl() jen.Code {
	t.check()
	var ptrs, nums []jen.Code
	for _, p := range t.params() {
		switch {
		case ints(p):
			nums = append(nums, jen.Id(p))
		case p != "out":
			ptrs = append(ptrs, jen.Id(p))
		}
	}
	params := []jen.Code{jen.List(ptrs...).Op("*").Float32()}
	if t.Out != "" {
		params = append(params, jen.Id("out").Op("*").Uint16()) // after the float32 pointers, as in params
	}
	if nums != nil {
		params = append(params, jen.List(nums...).Int())
	}
	return jen.Comment(t.doc()).Line().
		Comment("").Line().
		Comment("It is Go assembly, in the kernel's .s file; the caller checks the bounds.").Line().
		Comment("//go:noescape").Line().
		Func().Id(t.Name).Params(params...)
}

// doc describes what the tile computes, for its declaration.
func (t Tile) doc() string {
	s := t.tileDoc()
	if t.Tiles {
		s += fmt.Sprintf(" It computes tiles such tiles, each %d rows of a and c below the one before.", t.MR)
	}
	if t.Dot {
		s += " Every step is two of K: a's elements and b's lanes hold bf16 pairs, multiplied and summed pairwise (VDPBF16PS)."
	}
	if t.Out != "" {
		s += fmt.Sprintf(" It stores the result not in c but rounded to %s (nearest even) at out, row r at out[r·%d:].", t.Out, t.ORow/2)
	}
	return s
}

// tileDoc describes one tile.
func (t Tile) tileDoc() string {
	depth := fmt.Sprint(t.Depth)
	if t.Depth == 0 {
		depth = "depth"
	}
	init := map[Init]string{Zero: "=", Load: "+=", Scaled: "= c·scale +"}[t.Init]
	if t.ARow == Runtime || t.AStep == Runtime || t.BStep == Runtime || t.CRow == Runtime {
		return t.runtimeDoc(depth, init)
	}
	epi := ""
	switch {
	case t.ReLU:
		epi = ", then c[r] = max(c[r]+bias, 0)"
	case t.Bias:
		epi = ", then c[r] += bias"
	}
	return fmt.Sprintf("%s computes a %d×%d-vector tile of Float32x%d, c[r] %s Σ_t a[r·%d+t·%d]·b[t·%d:][:%d] for r < %d "+
		"over %s steps%s, row r of c at c[r·%d:] (offsets in float32s).",
		t.Name, t.MR, t.NV, t.Lanes, init, t.ARow/4, t.AStep/4, t.BStep/4, t.NV*t.Lanes, t.MR, depth, epi, t.CRow/4)
}

// runtimeDoc is doc for a tile with strides given at run time.
func (t Tile) runtimeDoc(depth, init string) string {
	el := func(s stride) string {
		if s.bytes == Runtime {
			return s.name
		}
		return fmt.Sprint(s.bytes / 4)
	}
	st := t.strides()
	epi := ""
	switch {
	case t.ReLU:
		epi = ", then c[r] = max(c[r]+bias, 0)"
	case t.Bias:
		epi = ", then c[r] += bias"
	}
	return fmt.Sprintf("%s computes a %d×%d-vector tile of Float32x%d, c[r] %s Σ_t a[r·%s+t·%s]·b[t·%s:][:%d] for r < %d "+
		"over %s steps%s, row r of c at c[r·%s:] (offsets and strides in float32s).",
		t.Name, t.MR, t.NV, t.Lanes, init, el(st[0]), el(st[1]), el(st[2]), t.NV*t.Lanes, t.MR, depth, epi, el(st[3]))
}

// Header starts every .s file of generated kernels: the line tools
// recognise as generated, and the include of the TEXT flags.
const Header = "// Code generated by autotune. DO NOT EDIT.\n\n#include \"textflag.h\"\n"

// File returns the amd64 assembly source of the tiles, one .s file of
// package code; nil for no tiles. Tiles of 4 lanes are arm64's
// (codegen/neon.File).
func File(tiles ...Tile) []byte {
	if len(tiles) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(Header)
	for _, t := range tiles {
		t.check()
		if t.Lanes == 4 {
			panic(fmt.Sprintf("goasm: %s: a 4-lane tile is arm64's (codegen/neon)", t.Name))
		}
		b.WriteString("\n")
		t.emit(&b)
		if data := t.outData(); data != nil {
			b.WriteString("\n" + strings.Join(data, "\n") + "\n")
		}
	}
	return []byte(b.String())
}

// emit writes the TEXT block of t. Registers: DI c, SI a, DX b, AX scale,
// BX bias, CX the steps left; vectors 0…NV-1 the step's b, NV and NV+1 the
// broadcasts, the accumulators after them.
func (t Tile) emit(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, "\t"+format+"\n", args...) }
	reg := func(n int) string {
		if t.Lanes == 16 {
			return fmt.Sprintf("Z%d", n)
		}
		return fmt.Sprintf("Y%d", n)
	}
	acc := func(r, j int) string { return reg(t.NV + 2 + r*t.NV + j) }
	xor := "VXORPS" // zeroes a register: AVX for Y, AVX-512F's VPXORD for Z (VXORPS of Z needs DQ)
	if t.Lanes == 16 {
		xor = "VPXORD"
	}
	vec := 4 * t.Lanes // bytes per vector
	params := t.params()
	fmt.Fprintf(b, "// func %s(%s)\n", t.Name, strings.Join(params, ", "))
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", t.Name, 8*len(params))
	w("MOVQ c+0(FP), DI")
	w("MOVQ a+8(FP), SI")
	w("MOVQ b+16(FP), DX")
	off := 24
	if t.Init == Scaled {
		w("MOVQ scale+%d(FP), AX", off)
		off += 8
	}
	if t.Bias {
		w("MOVQ bias+%d(FP), BX", off)
		off += 8
	}
	outArg := off
	if t.Out != "" {
		off += 8
	}
	// Run-time strides stay in their argument slots until needed: the rows
	// of c and of a share the registers of rowRegs, and bstep goes to AX
	// once scale is loaded.
	arg := make(map[string]int)
	for _, s := range t.strides() {
		if s.bytes == Runtime {
			arg[s.name] = off
			off += 8
		}
	}
	tilesArg := off
	if t.Tiles {
		off += 8
	}
	depthArg := off
	// loadDepth sets CX to the number of steps.
	loadDepth := func() {
		if t.Depth == 0 {
			w("MOVQ depth+%d(FP), CX", depthArg)
		} else {
			w("MOVQ $%d, CX", t.Depth)
		}
	}
	if t.Tiles {
		// R14 counts the tiles left, R15 keeps b for each.
		w("MOVQ tiles+%d(FP), R14", tilesArg)
		w("TESTQ R14, R14")
		w("JZ end")
		w("MOVQ DX, R15")
		b.WriteString("tile:\n")
		if t.Init == Scaled && t.BStep == Runtime {
			w("MOVQ scale+24(FP), AX") // bstep took AX in the tile before
		}
	}
	loadDepth()
	// rows loads a run-time row stride into R8 (in bytes) and its odd
	// multiples the tile's rows need into R9–R13.
	rows := func(name string) {
		w("MOVQ %s+%d(FP), R8", name, arg[name])
		w("SHLQ $2, R8")
		lea := []string{"LEAQ (R8)(R8*2), R9", "LEAQ (R8)(R8*4), R10", "LEAQ (R9)(R8*4), R11", "LEAQ (R8)(R8*8), R12", "LEAQ (R9)(R8*8), R13"}
		for i, l := range lea {
			if t.MR > 2*i+3 {
				w("%s", l)
			}
		}
	}
	// cAt is the operand of row r's vector j of c.
	cAt := func(r, j int) string {
		if t.CRow == Runtime {
			return rowOperand(j*vec, "DI", r)
		}
		return fmt.Sprintf("%d(DI)", r*t.CRow+j*vec)
	}
	if t.CRow == Runtime && t.Init != Zero {
		rows("crow")
	}
	for j := range t.NV {
		if t.Init == Scaled {
			w("VMOVUPS %d(AX), %s", j*vec, reg(j))
		}
		for r := range t.MR {
			a, at := acc(r, j), cAt(r, j)
			switch t.Init {
			case Zero:
				w("%s %s, %s, %s", xor, a, a, a)
			case Load:
				w("VMOVUPS %s, %s", at, a)
			case Scaled:
				w("VMULPS %s, %s, %s", at, reg(j), a)
			}
		}
	}
	switch {
	case t.ARow == Runtime:
		rows("arow")
	case t.AStep == Runtime:
		w("MOVQ astep+%d(FP), R8", arg["astep"])
		w("SHLQ $2, R8")
	}
	if t.BStep == Runtime {
		w("MOVQ bstep+%d(FP), AX", arg["bstep"])
		w("SHLQ $2, AX")
	}
	if t.Depth == 0 {
		w("TESTQ CX, CX")
		w("JZ done")
	}
	b.WriteString("loop:\n")
	for j := range t.NV {
		w("VMOVUPS %d(DX), %s", j*vec, reg(j))
	}
	for r := range t.MR {
		x := reg(t.NV + r%2)
		if t.ARow == Runtime {
			w("VBROADCASTSS %s, %s", rowOperand(0, "SI", r), x)
		} else {
			w("VBROADCASTSS %d(SI), %s", r*t.ARow, x)
		}
		for j := range t.NV {
			if t.Dot {
				w("%s", dpbf16ps(t.NV+2+r*t.NV+j, j, t.NV+r%2))
				continue
			}
			w("VFMADD231PS %s, %s, %s", x, reg(j), acc(r, j))
		}
	}
	if t.AStep == Runtime {
		w("ADDQ R8, SI")
	} else {
		w("ADDQ $%d, SI", t.AStep)
	}
	if t.BStep == Runtime {
		w("ADDQ AX, DX")
	} else {
		w("ADDQ $%d, DX", t.BStep)
	}
	w("DECQ CX")
	w("JNZ loop")
	if t.Depth == 0 {
		b.WriteString("done:\n")
	}
	if t.Bias {
		// The step's registers are free now: the bias vectors, and a zero.
		for j := range t.NV {
			w("VMOVUPS %d(BX), %s", j*vec, reg(j))
		}
		zero := reg(t.NV)
		if t.ReLU {
			w("%s %s, %s, %s", xor, zero, zero, zero)
		}
		for r := range t.MR {
			for j := range t.NV {
				w("VADDPS %s, %s, %s", reg(j), acc(r, j), acc(r, j))
				if t.ReLU {
					w("VMAXPS %s, %s, %s", zero, acc(r, j), acc(r, j))
				}
			}
		}
	}
	if t.CRow == Runtime {
		rows("crow") // the loop used R8–R13 for a's rows, or astep
	}
	if t.Out != "" {
		t.narrowStore(w, acc, reg, outArg)
	} else {
		for r := range t.MR {
			for j := range t.NV {
				w("VMOVUPS %s, %s", acc(r, j), cAt(r, j))
			}
		}
	}
	if t.Tiles {
		t.nextTile(w, arg, loadDepth)
		b.WriteString("end:\n")
	}
	w("VZEROUPPER")
	w("RET")
}

// narrowStore writes the stores of Out: each accumulator rounded by
// Reg16.Narrow into row r of out (R14), through the step's registers,
// free now (at least three: NV+2), with bf16's constants in a table of
// the tile's own (outData).
func (t Tile) narrowStore(w func(string, ...any), acc func(r, j int) string, reg func(int) string, outArg int) {
	w("MOVQ out+%d(FP), R14", outArg)
	h := Reg16{DType: t.Out, Lanes: t.Lanes, Consts: h16Consts(t.outSym(), t.Lanes)}
	for r := range t.MR {
		for j := range t.NV {
			addr := fmt.Sprintf("%d(R14)", r*t.ORow+j*2*t.Lanes)
			for _, l := range h.Narrow(acc(r, j), reg(0), reg(1), reg(2), "K1", addr, "") {
				w("%s", l)
			}
		}
	}
}

// outSym names the table of bf16's rounding constants of a tile with Out.
func (t Tile) outSym() string { return t.Name + "BF16<>" }

// outData returns the table outSym holds, vectors of the tile's lanes;
// none for f16, whose rounding is one instruction.
func (t Tile) outData() []string {
	if t.Out != dtype.BF16 {
		return nil
	}
	return Reg16{Lanes: t.Lanes}.Data(t.outSym())
}

// dpbf16ps returns VDPBF16PS Zsrc2, Zsrc1, Zdst (dst += the pairwise
// products of src1's and src2's bf16 pairs) as BYTE directives: EVEX.512.F3.0F38.W0 52 /r,
// register operands only.
func dpbf16ps(dst, src1, src2 int) string {
	inv := func(reg, bit int) int { return ^reg >> bit & 1 }                         // EVEX stores register bits inverted
	p0 := inv(dst, 3)<<7 | inv(src2, 4)<<6 | inv(src2, 3)<<5 | inv(dst, 4)<<4 | 0b10 // R X B R' 0 0 mm=0F38
	p1 := 0<<7 | (^src1&15)<<3 | 1<<2 | 0b10                                         // W=0 vvvv 1 pp=F3
	p2 := 0b10<<5 | inv(src1, 4)<<3                                                  // z=0 L'L=512 b=0 V' aaa=0
	modrm := 0b11<<6 | (dst&7)<<3 | src2&7
	return fmt.Sprintf("BYTE $0x62; BYTE $%#02x; BYTE $%#02x; BYTE $%#02x; BYTE $0x52; BYTE $%#02x // VDPBF16PS Z%d, Z%d, Z%d",
		p0, p1, p2, modrm, src2, src1, dst)
}

// nextTile writes the end of a tile of a column (Tiles): b back to its
// start (R15), a back by the steps it took and down MR rows, c down MR
// rows, and the loop over the tiles left (R14). CX is free after the
// steps.
func (t Tile) nextTile(w func(string, ...any), arg map[string]int, loadDepth func()) {
	w("MOVQ R15, DX")
	loadDepth()
	w("IMULQ $%d, CX", t.AStep)
	w("SUBQ CX, SI")
	down := func(reg string, stride stride) {
		if stride.bytes == Runtime {
			w("MOVQ %s+%d(FP), CX", stride.name, arg[stride.name])
			w("IMULQ $%d, CX", 4*t.MR) // the argument is in float32s
			w("ADDQ CX, %s", reg)
			return
		}
		w("ADDQ $%d, %s", t.MR*stride.bytes, reg)
	}
	st := t.strides()
	down("SI", st[0]) // arow
	down("DI", st[3]) // crow
	w("DECQ R14")
	w("JNZ tile")
}

// rowOperand returns the operand of the byte off of row r of base, whose
// rows are R8 bytes apart, with R9–R13 holding 3, 5, 7, 9 and 11 times R8:
// r·R8 as one of them times a scale of 1, 2, 4 or 8.
func rowOperand(off int, base string, r int) string {
	var index string
	switch r {
	case 0:
		return fmt.Sprintf("%d(%s)", off, base)
	case 1, 2, 4, 8:
		index = fmt.Sprintf("R8*%d", r)
	case 3, 6, 12:
		index = fmt.Sprintf("R9*%d", r/3)
	case 5, 10:
		index = fmt.Sprintf("R10*%d", r/5)
	case 7:
		index = "R11*1"
	case 9:
		index = "R12*1"
	case 11:
		index = "R13*1"
	default:
		panic(fmt.Sprintf("goasm: row %d a run-time stride apart", r))
	}
	return fmt.Sprintf("%d(%s)(%s)", off, base, index)
}
