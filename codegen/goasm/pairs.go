package goasm

import (
	"fmt"
	"strings"
)

// PairLanes is the pairs the routine of Pairs writes at a time: one Z
// register of them.
const PairLanes = 16

// Pairs returns the TEXT block of the routine that interleaves two rows of
// 16-bit elements into the pairs a Dot tile reads from B, on n elements, n
// a multiple of PairLanes:
//
//	func name(dst *float32, lo, hi *uint16, n int)
//
// dst[j]'s bits are lo[j] in the low half and hi[j] in the high one. Each
// step widens 16 elements of each row (VPMOVZXWD), shifts hi's into the
// high halves and ORs them (AVX-512F, like the tiles that read them).
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
	w("VPMOVZXWD (SI), Z0")
	w("VPMOVZXWD (DX), Z1")
	w("VPSLLD $16, Z1, Z1")
	w("VPORD Z1, Z0, Z0")
	w("VMOVDQU32 Z0, (DI)")
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
