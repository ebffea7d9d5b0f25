package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
)

// Half writes the conversions between float32 and a 16-bit dtype (bf16 or
// f16) that a kernel storing its elements in 16 bits needs, named after
// Prefix:
//
//	func PrefixDecode(dst []float32, src []uint16) // dst[i] = the value of src[i]
//	func PrefixEncode(dst []uint16, src []float32) // dst[i] = src[i] rounded to nearest, ties to even
//
// for i < len(src), and the scalar functions they share, PrefixToF32 and
// PrefixFromF32. They compute what package dtype's conversions compute
// (generated code imports only the standard library, so it carries its
// own), bit for bit: exact decoding, round to nearest even, Inf past the
// largest finite value, subnormals kept, NaN stays NaN.
//
// With Asm, whole vectors of 8 go to the Go assembly routines of
// goasm.Half (AVX2, and F16C for f16) and only the rest to scalar Go; the
// kernel's .s file must then hold them.
type Half struct {
	Prefix string
	DType  dtype.DType
	Asm    bool
}

// HalfLanes is the elements the assembly routines of Half convert at a
// time: one Y register of float32.
const HalfLanes = 8

func (h Half) toF32() string   { return h.Prefix + "ToF32" }
func (h Half) fromF32() string { return h.Prefix + "FromF32" }

// Decode and Encode name the slice conversions.
func (h Half) Decode() string { return h.Prefix + "Decode" }
func (h Half) Encode() string { return h.Prefix + "Encode" }

// AsmDecode and AsmEncode name the assembly routines (goasm.Half).
func (h Half) AsmDecode() string { return h.Prefix + "DecodeAsm" }
func (h Half) AsmEncode() string { return h.Prefix + "EncodeAsm" }

// Emit adds the conversions to f.
func (h Half) Emit(f *jen.File) {
	switch h.DType {
	case dtype.BF16:
		h.emitBF16(f)
	case dtype.F16:
		h.emitF16(f)
	default:
		panic(fmt.Sprintf("golang: Half of %q, which is not 16 bits wide", h.DType))
	}
	h.emitSlices(f)
}

// hex writes n as a hexadecimal literal, as bit patterns read best.
func hex(n int) *jen.Statement { return jen.Op(fmt.Sprintf("%#x", n)) }

func bits(x jen.Code) *jen.Statement { return jen.Qual("math", "Float32bits").Call(x) }
func frombits(b jen.Code) *jen.Statement {
	return jen.Qual("math", "Float32frombits").Call(b)
}

func (h Half) emitBF16(f *jen.File) {
	f.Comment(h.toF32() + " returns the value of bfloat16 bits x, exactly.")
	f.Func().Id(h.toF32()).Params(jen.Id("x").Uint16()).Float32().Block(
		jen.Return(frombits(jen.Uint32().Call(jen.Id("x")).Op("<<").Lit(16))),
	)
	f.Add(Comment(h.fromF32() + " returns the bfloat16 bits of the value nearest to x, ties to even: " +
		"adding 0x7fff rounds the dropped half up past its middle, the kept half's last bit breaks a tie, " +
		"and a carry steps the exponent, up to Inf. A NaN stays a quiet NaN."))
	b := jen.Id("b")
	f.Func().Id(h.fromF32()).Params(jen.Id("x").Float32()).Uint16().Block(
		jen.Add(b).Op(":=").Add(bits(jen.Id("x"))),
		jen.If(jen.Add(b).Op("&").Add(hex(0x7fffffff)).Op(">").Add(hex(0x7f800000))).Block(
			jen.Return(jen.Uint16().Call(jen.Add(b).Op(">>").Lit(16)).Op("|").Add(hex(0x40))),
		),
		jen.Add(b).Op("+=").Add(hex(0x7fff)).Op("+").Parens(jen.Add(b).Op(">>").Lit(16)).Op("&").Lit(1),
		jen.Return(jen.Uint16().Call(jen.Add(b).Op(">>").Lit(16))),
	)
}

func (h Half) emitF16(f *jen.File) {
	sign, exp, mant := jen.Id("sign"), jen.Id("exp"), jen.Id("mant")
	f.Comment(h.toF32() + " returns the value of binary16 bits x, exactly.")
	f.Func().Id(h.toF32()).Params(jen.Id("x").Uint16()).Float32().Block(
		jen.Add(sign).Op(":=").Uint32().Call(jen.Id("x").Op("&").Add(hex(0x8000))).Op("<<").Lit(16),
		jen.Add(exp).Op(":=").Uint32().Call(jen.Id("x").Op(">>").Lit(10)).Op("&").Add(hex(0x1f)),
		jen.Add(mant).Op(":=").Uint32().Call(jen.Id("x").Op("&").Add(hex(0x3ff))),
		jen.Switch().Block(
			jen.Case(jen.Add(exp).Op("==").Add(hex(0x1f))).Block(
				jen.Comment("±Inf, NaN"),
				jen.Return(frombits(jen.Add(sign).Op("|").Add(hex(0x7f800000)).Op("|").Add(mant).Op("<<").Lit(13))),
			),
			jen.Case(jen.Add(exp).Op("==").Lit(0)).Block(
				jen.Comment("±0 and subnormals: mant units of 2^-24, exact in float32"),
				jen.Id("v").Op(":=").Float32().Call(mant).Op("*").Op("0x1p-24"),
				jen.If(jen.Add(sign).Op("!=").Lit(0)).Block(jen.Id("v").Op("=").Op("-").Id("v")),
				jen.Return(jen.Id("v")),
			),
		),
		jen.Return(frombits(jen.Add(sign).Op("|").Parens(jen.Add(exp).Op("+").Lit(112)).Op("<<").Lit(23).Op("|").Add(mant).Op("<<").Lit(13))),
	)

	f.Add(Comment(h.fromF32() + " returns the binary16 bits of the value nearest to x, ties to even: " +
		"subnormal halves below 2^-14, ±Inf past 65504, a quiet NaN for a NaN."))
	b, e, q, rem, half, s := jen.Id("b"), jen.Id("e"), jen.Id("q"), jen.Id("rem"), jen.Id("half"), jen.Id("s")
	// round sets q to v >> shift, rounded to nearest even.
	round := func(v, shift jen.Code) []jen.Code {
		return []jen.Code{
			jen.List(q, rem, half).Op(":=").List(jen.Parens(v).Op(">>").Add(shift), jen.Parens(v).Op("&").Parens(jen.Lit(1).Op("<<").Add(shift).Op("-").Lit(1)), jen.Uint32().Call(jen.Lit(1)).Op("<<").Parens(jen.Add(shift).Op("-").Lit(1))),
			jen.If(jen.Add(rem).Op(">").Add(half).Op("||").Add(rem).Op("==").Add(half).Op("&&").Add(q).Op("&").Lit(1).Op("==").Lit(1)).Block(jen.Add(q).Op("++")),
		}
	}
	subnormal := append([]jen.Code{
		jen.Comment("Subnormal or zero: the significand in units of 2^-24. Rounding up from the largest subnormal gives 0x400, the smallest normal, which is right."),
		jen.Add(s).Op(":=").Uint32().Call(jen.Lit(14).Op("-").Add(e)),
		jen.If(jen.Add(s).Op(">").Lit(24)).Block(jen.Return(jen.Add(sign)).Comment("below half the smallest subnormal")),
	}, round(jen.Add(mant).Op("|").Add(hex(0x800000)), s)...)
	subnormal = append(subnormal, jen.Return(jen.Add(sign).Op("|").Uint16().Call(q)))
	normal := append([]jen.Code{jen.Comment("Normal: drop 13 bits; a carry steps the exponent, up to 0x7c00 (Inf) past 65504.")},
		round(jen.Uint32().Call(e).Op("<<").Lit(23).Op("|").Add(mant), jen.Lit(13))...)
	normal = append(normal, jen.Return(jen.Add(sign).Op("|").Uint16().Call(q)))
	body := []jen.Code{
		jen.Add(b).Op(":=").Add(bits(jen.Id("x"))),
		jen.Add(sign).Op(":=").Uint16().Call(jen.Add(b).Op(">>").Lit(16)).Op("&").Add(hex(0x8000)),
		jen.Add(mant).Op(":=").Add(b).Op("&").Add(hex(0x7fffff)),
		jen.Add(e).Op(":=").Int().Call(jen.Add(b).Op(">>").Lit(23).Op("&").Add(hex(0xff))).Op("-").Lit(112).Comment("binary16's biased exponent"),
		jen.Switch().Block(
			jen.Case(jen.Add(e).Op("==").Add(hex(0xff)).Op("-").Lit(112).Op("&&").Add(mant).Op("!=").Lit(0)).Block(
				jen.Return(jen.Add(sign).Op("|").Add(hex(0x7e00)).Op("|").Uint16().Call(jen.Add(mant).Op(">>").Lit(13))),
			),
			jen.Case(jen.Add(e).Op(">=").Add(hex(0x1f))).Block(jen.Return(jen.Add(sign).Op("|").Add(hex(0x7c00)))),
			jen.Case(jen.Add(e).Op("<=").Lit(0)).Block(subnormal...),
		),
	}
	body = append(body, normal...)
	f.Func().Id(h.fromF32()).Params(jen.Id("x").Float32()).Uint16().Block(body...)
}

// emitSlices writes Decode and Encode: the assembly for whole vectors when
// Asm, scalar Go for the rest.
func (h Half) emitSlices(f *jen.File) {
	i, n := jen.Id("i"), jen.Id("n")
	conv := func(name, asm, what string, dst, src jen.Code, scalar string) {
		body := []jen.Code{jen.Add(n).Op(":=").Len(jen.Id("src")), jen.Id("dst").Op("=").Id("dst").Index(jen.Empty(), n), jen.Add(i).Op(":=").Lit(0)}
		if h.Asm {
			f.Comment("//go:noescape")
			f.Func().Id(asm).Params(jen.Id("dst").Op("*").Add(dst), jen.Id("src").Op("*").Add(src), jen.Id("n").Int())
			body = append(body,
				jen.If(jen.Add(i).Op("=").Add(n).Op("&^").Lit(HalfLanes-1), jen.Add(i).Op(">").Lit(0)).Block(
					jen.Id(asm).Call(jen.Op("&").Id("dst").Index(jen.Lit(0)), jen.Op("&").Id("src").Index(jen.Lit(0)), i),
				))
		}
		body = append(body, jen.For(jen.Op(";").Add(i).Op("<").Add(n).Op(";").Add(i).Op("++")).Block(
			jen.Id("dst").Index(i).Op("=").Id(scalar).Call(jen.Id("src").Index(i)),
		))
		f.Comment(what)
		f.Func().Id(name).Params(jen.Id("dst").Index().Add(dst), jen.Id("src").Index().Add(src)).Block(body...)
	}
	conv(h.Decode(), h.AsmDecode(), fmt.Sprintf("%s sets dst[i] to the value of the %s bits src[i].", h.Decode(), h.DType),
		jen.Float32(), jen.Uint16(), h.toF32())
	conv(h.Encode(), h.AsmEncode(), fmt.Sprintf("%s sets dst[i] to the %s bits of src[i], rounded to nearest even.", h.Encode(), h.DType),
		jen.Uint16(), jen.Float32(), h.fromF32())
}
