package goasm

import (
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
)

// WithHalf returns asm, a kernel's assembly (nil for none), with the
// routines of h appended when h converts whole vectors in assembly.
func WithHalf(asm []byte, h golang.Half) []byte {
	if !h.Asm {
		return asm
	}
	if asm == nil {
		asm = []byte(Header)
	}
	return append(asm, Half(h.DType, h.AsmDecode(), h.AsmEncode())...)
}

// Half returns the TEXT blocks of the assembly routines a golang.Half
// with Asm calls, decode (16-bit elements to float32) and encode (float32
// to 16 bits, rounded to nearest even), each on n elements, n a multiple
// of 8, as
//
//	func decode(dst *float32, src *uint16, n int)
//	func encode(dst *uint16, src *float32, n int)
//
// on Y registers: AVX2 for bf16, AVX2 and F16C for f16 (every AVX2 CPU has
// F16C). bf16 decodes by widening each element into the top half of a
// float32 (VPMOVZXWD, VPSLLD) and encodes by the integer rounding of
// golang.Half (add 0x7fff and the kept half's last bit, shift, pack with
// VPACKUSDW, which cannot saturate there), a NaN by keeping its top half,
// made quiet, since the rounding could carry a NaN's payload into Inf or
// the sign; f16 uses VCVTPH2PS and VCVTPS2PH with rounding control 0 (to
// nearest even). Both agree bit for bit with package dtype (TestHalf).
func Half(dt dtype.DType, decode, encode string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, "\t"+format+"\n", args...) }
	head := func(name, dst, src string) {
		fmt.Fprintf(&b, "\n// func %s(dst *%s, src *%s, n int)\nTEXT ·%s(SB), NOSPLIT, $0-24\n", name, dst, src, name)
		w("MOVQ dst+0(FP), DI")
		w("MOVQ src+8(FP), SI")
		w("MOVQ n+16(FP), CX")
		w("SHRQ $3, CX")
		w("JZ %s_done", name)
	}
	tail := func(name string, srcStep, dstStep int) {
		w("ADDQ $%d, SI", srcStep)
		w("ADDQ $%d, DI", dstStep)
		w("DECQ CX")
		w("JNZ %s_loop", name)
		fmt.Fprintf(&b, "%s_done:\n", name)
		w("VZEROUPPER")
		w("RET")
	}
	switch dt {
	case dtype.BF16:
		head(decode, "float32", "uint16")
		fmt.Fprintf(&b, "%s_loop:\n", decode)
		w("VPMOVZXWD (SI), Y0")
		w("VPSLLD $16, Y0, Y0")
		w("VMOVDQU Y0, (DI)")
		tail(decode, 16, 32)

		head(encode, "uint16", "float32")
		w("MOVL $0x7fff, AX")
		w("MOVQ AX, X4")
		w("VPBROADCASTD X4, Y4")
		w("MOVL $1, AX")
		w("MOVQ AX, X5")
		w("VPBROADCASTD X5, Y5")
		w("MOVL $0x40, AX")
		w("MOVQ AX, X7")
		w("VPBROADCASTD X7, Y7")
		fmt.Fprintf(&b, "%s_loop:\n", encode)
		w("VMOVDQU (SI), Y0")
		w("VCMPPS $3, Y0, Y0, Y2") // unordered: all ones where x is NaN
		w("VPSRLD $16, Y0, Y6")
		w("VPOR Y7, Y6, Y6") // a NaN's top half, made quiet
		w("VPAND Y5, Y6, Y1")
		w("VPADDD Y4, Y0, Y0")
		w("VPADDD Y1, Y0, Y0")
		w("VPSRLD $16, Y0, Y0")
		w("VBLENDVPS Y2, Y6, Y0, Y0")
		w("VEXTRACTI128 $1, Y0, X1")
		w("VPACKUSDW X1, X0, X0")
		w("VMOVDQU X0, (DI)")
		tail(encode, 32, 16)
	case dtype.F16:
		head(decode, "float32", "uint16")
		fmt.Fprintf(&b, "%s_loop:\n", decode)
		w("VCVTPH2PS (SI), Y0")
		w("VMOVUPS Y0, (DI)")
		tail(decode, 16, 32)

		head(encode, "uint16", "float32")
		fmt.Fprintf(&b, "%s_loop:\n", encode)
		w("VMOVUPS (SI), Y0")
		w("VCVTPS2PH $0, Y0, (DI)")
		tail(encode, 32, 16)
	default:
		panic(fmt.Sprintf("goasm: Half of %q, which is not 16 bits wide", dt))
	}
	return b.String()
}
