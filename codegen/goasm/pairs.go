package goasm

import (
	"fmt"
	"strings"
)

// PairLanes is the pairs one Z register holds: the columns of a strip of
// Pairs come in multiples of it.
const PairLanes = 16

// A PairStrip is the routine that packs a strip of Cols columns of a
// row-major 16-bit matrix (bf16) as the pairs of rows a Dot tile reads
// from B, Cols a multiple of PairLanes:
//
//	func Name(dst *float32, src *uint16, ld, steps int)
//
// For t < steps and j < Cols, dst[t·Cols+j]'s bits are src[2t·ld+j] in
// the low half and src[(2t+1)·ld+j] in the high one: step t of the strip
// holds rows 2t and 2t+1, ld elements apart. Each vector widens 16
// elements of each row (VPMOVZXWD), shifts the second row's into the high
// halves and ORs them (AVX-512F, like the tiles that read them). One call
// packs a whole strip: called per step and 16 columns, as before gemm-8,
// the calls cost more than the packing (8% of a bf16 GEMM 1024³ in a
// profile).
type PairStrip struct {
	Name string
	Cols int
	// Swapped puts the first row of a step in the high halves instead:
	// the wrong layout, for tests that must catch it.
	Swapped bool
}

// Text returns the TEXT block of the routine.
func (p PairStrip) Text() string {
	if p.Cols <= 0 || p.Cols%PairLanes != 0 {
		panic(fmt.Sprintf("goasm: %s: a strip of %d columns, want a multiple of %d", p.Name, p.Cols, PairLanes))
	}
	lo, hi := "SI", "DX"
	if p.Swapped {
		lo, hi = hi, lo
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	fmt.Fprintf(&b, "\n// func %s(dst *float32, src *uint16, ld, steps int)\nTEXT ·%s(SB), NOSPLIT, $0-32\n", p.Name, p.Name)
	w("MOVQ dst+0(FP), DI")
	w("MOVQ src+8(FP), SI")
	w("MOVQ ld+16(FP), R8")
	w("MOVQ steps+24(FP), CX")
	w("SHLQ $1, R8")         // bytes between rows
	w("LEAQ (SI)(R8*1), DX") // the second row of a step
	w("SHLQ $1, R8")         // bytes between steps: two rows
	w("TESTQ CX, CX")
	w("JZ %s_done", p.Name)
	fmt.Fprintf(&b, "%s_loop:\n", p.Name)
	for v := range p.Cols / PairLanes {
		pairVector(w, v, lo, hi)
	}
	w("ADDQ R8, SI")
	w("ADDQ R8, DX")
	w("ADDQ $%d, DI", 4*p.Cols)
	w("DECQ CX")
	w("JNZ %s_loop", p.Name)
	fmt.Fprintf(&b, "%s_done:\n", p.Name)
	w("VZEROUPPER")
	w("RET")
	return b.String()
}

// pairVector writes the instructions that interleave vector v of the
// 16-bit rows at lo and hi into vector v of DI.
func pairVector(w func(string, ...any), v int, lo, hi string) {
	w("VPMOVZXWD %d(%s), Z0", 2*PairLanes*v, lo)
	w("VPMOVZXWD %d(%s), Z1", 2*PairLanes*v, hi)
	w("VPSLLD $16, Z1, Z1")
	w("VPORD Z1, Z0, Z0")
	w("VMOVDQU32 Z0, %d(DI)", 4*PairLanes*v)
}

// Pairs returns the TEXT block of the routine that interleaves two rows of
// 16-bit elements into pairs, as PairStrip does for one step, on n
// elements, n a multiple of PairLanes, where the rows are not a fixed
// stride apart or the pairs not a strip (attention's values):
//
//	func name(dst *float32, lo, hi *uint16, n int)
//
// dst[j]'s bits are lo[j] in the low half and hi[j] in the high one.
func Pairs(name string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	fmt.Fprintf(&b, "\n// func %s(dst *float32, lo, hi *uint16, n int)\nTEXT ·%s(SB), NOSPLIT, $0-32\n", name, name)
	w("MOVQ dst+0(FP), DI")
	w("MOVQ lo+8(FP), SI")
	w("MOVQ hi+16(FP), DX")
	w("MOVQ n+24(FP), CX")
	w("SHRQ $4, CX")
	w("JZ %s_done", name)
	fmt.Fprintf(&b, "%s_loop:\n", name)
	pairVector(w, 0, "SI", "DX")
	w("ADDQ $%d, SI", 2*PairLanes)
	w("ADDQ $%d, DX", 2*PairLanes)
	w("ADDQ $%d, DI", 4*PairLanes)
	w("DECQ CX")
	w("JNZ %s_loop", name)
	fmt.Fprintf(&b, "%s_done:\n", name)
	w("VZEROUPPER")
	w("RET")
	return b.String()
}
