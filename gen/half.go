package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// A package of bf16 or f16 kernels (Options.DType) defines its element
// type, since Go has none: BF16 or F16, a uint16 holding the bits, with
// conversions to and from float32 that round to nearest even
// (golang.Half, the same algorithms as package dtype). Its exported
// functions take slices of that type and hand the kernels the same memory
// as []uint16, which is what the kernels of every template take
// (kernels.GoElem); nothing is copied.

// half reports whether the package's kernels store 16-bit elements.
func (p *plan) half() bool { return p.o.DType.Size() == 2 }

// elemName is the element type of the exported functions: float32, or
// the package's BF16 or F16.
func (p *plan) elemName() string {
	if p.half() {
		return strings.ToUpper(string(p.o.DType))
	}
	return "float32"
}

// elem is elemName as code.
func (p *plan) elem() jen.Code {
	if p.half() {
		return jen.Id(p.elemName())
	}
	return jen.Float32()
}

// kernelElem is the element type of the kernels' slices.
func (op *opPlan) kernelElem() jen.Code { return kernels.GoElem(op.dtype) }

// bitsFn and fromBitsFn name the views of a []BF16 as []uint16 and back.
func (p *plan) bitsFn() string     { return strings.ToLower(p.elemName()) + "Bits" }
func (p *plan) fromBitsFn() string { return "as" + p.elemName() }

// conv is the package's scalar conversions, unexported.
func (p *plan) conv() golang.Half {
	return golang.Half{Prefix: strings.ToLower(p.elemName()), DType: p.o.DType}
}

// halfFile returns dtype.go: the element type, its conversions and the
// views of its slices.
func (p *plan) halfFile() *jen.File {
	f := p.newFile("")
	t, dt := p.elemName(), p.o.DType
	c := p.conv()
	what := map[string]string{"bf16": "a bfloat16 value (float32's exponent, 8 significant bits)",
		"f16": "an IEEE 754 binary16 value (11 significant bits, at most 65504)"}[string(dt)]
	f.Add(golang.Comment(fmt.Sprintf("%s is %s, stored as its 16 bits: the element type of this package's kernels, which compute in float32.", t, what)))
	f.Type().Id(t).Uint16()
	f.Commentf("Float32 returns the value of x, exactly.")
	f.Func().Params(jen.Id("x").Id(t)).Id("Float32").Params().Float32().Block(
		jen.Return(jen.Id(c.Prefix + "ToF32").Call(jen.Uint16().Call(jen.Id("x")))))
	f.Commentf("To%s returns the %s nearest to x, ties to even: ±Inf beyond the largest finite value, a NaN for a NaN.", t, t)
	f.Func().Id("To" + t).Params(jen.Id("x").Float32()).Id(t).Block(
		jen.Return(jen.Id(t).Call(jen.Id(c.Prefix + "FromF32").Call(jen.Id("x")))))
	f.Commentf("Encode%s sets dst[i] to To%s(src[i]) for every i of src; dst must be at least as long.", t, t)
	f.Func().Id("Encode"+t).Params(jen.Id("dst").Index().Id(t), jen.Id("src").Index().Float32()).Block(
		jen.Id(c.Encode()).Call(jen.Id(p.bitsFn()).Call(jen.Id("dst")), jen.Id("src")))
	f.Commentf("Decode%s sets dst[i] to src[i].Float32() for every i of src; dst must be at least as long.", t)
	f.Func().Id("Decode"+t).Params(jen.Id("dst").Index().Float32(), jen.Id("src").Index().Id(t)).Block(
		jen.Id(c.Decode()).Call(jen.Id("dst"), jen.Id(p.bitsFn()).Call(jen.Id("src"))))
	c.Emit(f)
	view := func(name, from, to string) {
		f.Commentf("%s is s as []%s: the same memory, nothing copied.", name, to)
		f.Func().Id(name).Params(jen.Id("s").Index().Id(from)).Index().Id(to).Block(
			jen.Return(jen.Qual("unsafe", "Slice").Call(
				jen.Parens(jen.Op("*").Id(to)).Call(jen.Qual("unsafe", "Pointer").Call(jen.Qual("unsafe", "SliceData").Call(jen.Id("s")))),
				jen.Len(jen.Id("s")))))
	}
	view(p.bitsFn(), t, "uint16")
	view(p.fromBitsFn(), "uint16", t)
	return f
}
