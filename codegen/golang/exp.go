package golang

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"
)

// expPoly holds, by degree, the coefficients c0…cd of p(r) ≈ e^r on
// [-ln2/2, ln2/2], lowest first: minimax for relative error (Remez exchange
// in 50-digit arithmetic), then rounded to float32. The measured error of the
// whole exp is in the package doc.
var expPoly = map[int][]float32{
	4: {0.99999928, 0.9999634, 0.50004357, 0.16790907, 0.041458607},
	5: {1.0000001, 0.9999997, 0.49998894, 0.16667575, 0.041915383, 0.0082976557},
}

// Exp emits float32 e^x at one vector width, by one of two methods:
//
//   - degree 0: math.Exp in float64, lane by lane, rounded to float32;
//   - degree d: range reduction x = n·ln2 + r with |r| ≤ ln2/2, 2^n built
//     from exponent bits, and a degree-d polynomial for e^r.
//
// The polynomial variants clamp x at expMin = -88, below which e^x is
// exactly 0, so -Inf and huge negative arguments give 0 rather than garbage.
// They are meant for x ≤ 0, which is all softmax and attention compute
// (x - max); x above 88 overflows the exponent bits and is not handled.
type Exp struct {
	v      F32
	degree int
}

// NewExp returns the exp emitter of the given degree (0, 4 or 5) at v's
// width. It panics for other degrees.
func NewExp(v F32, degree int) Exp {
	if _, ok := expPoly[degree]; !ok && degree != 0 {
		panic(fmt.Sprintf("golang: no exp polynomial of degree %d", degree))
	}
	return Exp{v, degree}
}

// ExpConst is one constant of the polynomial exp: its name in generated
// code, why it has its value (or ""), and the value.
type ExpConst struct {
	Name, Why string
	Val       float32
}

// exp2Poly3 holds the coefficients c0…c3 of p(f) ≈ 2^f on [-1/2, 1/2],
// lowest first, minimax for relative error (7.5e-5; Remez exchange in
// float64), rounded to float32: the degree-3 exp of codegen/goasm, which
// reduces x·log2e rather than x (ExpConsts).
var exp2Poly3 = []float32{0.999928057, 0.693260968, 0.242611125, 0.0551716685}

// ExpConsts returns the constants of the polynomial exp of the given degree
// (4 or 5), in the order Consts declares them: expMin, expLog2e, expShift,
// expNegLn2Hi, expNegLn2Lo, then the coefficients expC0… lowest first.
// codegen/goasm emits the same operations on the same constants, so that
// its exp and this one give the same bits.
//
// Degree 3 is codegen/goasm's alone (NewExp has no such degree): e^x as
// 2^t with t = x·log2e, n = round(t) and f = t - n from one fused
// multiply-subtract, 2^f a degree-3 polynomial, so its constants are
// expMin, expLog2e, expShift and expC0…expC3, without ln2's parts. Its
// error, about 8e-5, is below the rounding of a bf16 or f16 result, not of
// a float32 one. ExpConsts panics for other degrees.
func ExpConsts(degree int) []ExpConst {
	poly, ok := expPoly[degree]
	if degree == 3 {
		poly, ok = exp2Poly3, true
	}
	if !ok {
		panic(fmt.Sprintf("golang: no exp polynomial of degree %d", degree))
	}
	defs := []ExpConst{
		{"expMin", "e^x rounds to 0 below: 2^n is 0 for n = -127", -88},
		{"expLog2e", "", 1.442695},
		{"expShift", "1.5·2^23 + 127: x·log2e + expShift rounds to an integer, n+127 in the low mantissa bits", 0x1.8p23 + 127},
	}
	first := "e^r on [-ln2/2, ln2/2], minimax for relative error"
	if degree == 3 {
		first = "2^f on [-1/2, 1/2], minimax for relative error"
	} else {
		defs = append(defs,
			ExpConst{"expNegLn2Hi", "-ln2 in two parts, the first exact when multiplied by n", -0.693359375},
			ExpConst{"expNegLn2Lo", "", 2.12194440e-4})
	}
	for i, c := range poly {
		why := ""
		if i == 0 {
			why = first
		}
		defs = append(defs, ExpConst{"expC" + strconv.Itoa(i), why, c})
	}
	return defs
}

// Consts returns the declarations of the constants Emit uses, to be placed
// once before the loops that call exp: archsimd constants are vectors that
// Go would otherwise rebuild (load and broadcast) at every use inside a loop.
// Scalar code gets a const block, and degree 0 needs nothing.
func (e Exp) Consts() []jen.Code {
	if e.degree == 0 {
		return nil
	}
	var lines []jen.Code
	for _, d := range ExpConsts(e.degree) {
		var val jen.Code = f32Lit(d.Val)
		if !e.v.Scalar() {
			val = e.v.Splat(val)
		}
		l := jen.Id(d.Name).Op("=").Add(val)
		if d.Why != "" {
			l.Comment(d.Why)
		}
		lines = append(lines, l)
	}
	if e.v.Scalar() {
		return []jen.Code{jen.Const().Defs(lines...)}
	}
	return []jen.Code{jen.Var().Defs(lines...)}
}

// Emit returns statements that declare dst and set it to e^x, where x is a
// variable of e's vector type. Temporaries are named k, n, r (or lanes) with
// suffix appended, so that several exps can share a scope.
func (e Exp) Emit(dst, x, suffix string) []jen.Code {
	v := e.v
	if e.degree == 0 {
		return e.emitF64(dst, x, suffix)
	}
	d, k, n, r := jen.Id(dst), jen.Id("k"+suffix), jen.Id("n"+suffix), jen.Id("r"+suffix)
	c := func(i int) jen.Code { return jen.Id("expC" + strconv.Itoa(i)) }
	out := []jen.Code{
		jen.Commentf("%s = e^%s", dst, x),
		jen.Add(d).Op(":=").Add(v.Max(jen.Id(x), jen.Id("expMin"))),
		jen.Add(k).Op(":=").Add(v.MulAdd(d, jen.Id("expLog2e"), jen.Id("expShift"))),
		jen.Add(n).Op(":=").Add(v.Sub(k, jen.Id("expShift"))),
		jen.Add(r).Op(":=").Add(v.MulAdd(n, jen.Id("expNegLn2Hi"), d)),
		jen.Add(r).Op("=").Add(v.MulAdd(n, jen.Id("expNegLn2Lo"), r)),
		jen.Add(d).Op("=").Add(v.MulAdd(r, c(e.degree), c(e.degree-1))),
	}
	for i := e.degree - 2; i >= 0; i-- {
		out = append(out, jen.Add(d).Op("=").Add(v.MulAdd(d, r, c(i))))
	}
	// 2^n: shifting k's bits left by 23 drops the 1.5·2^23 and leaves n+127
	// in the exponent field.
	var pow2 jen.Code
	if v.Scalar() {
		pow2 = jen.Qual("math", "Float32frombits").Call(jen.Qual("math", "Float32bits").Call(k).Op("<<").Lit(23))
	} else {
		pow2 = jen.Add(k).Dot("As" + v.intName()).Call().Dot("ShiftAllLeft").Call(jen.Lit(23)).Dot("As" + v.Name()).Call()
	}
	return append(out, jen.Add(d).Op("=").Add(v.Mul(d, pow2)))
}

func (e Exp) emitF64(dst, x, suffix string) []jen.Code {
	exp := func(x jen.Code) jen.Code {
		return jen.Float32().Call(jen.Qual("math", "Exp").Call(jen.Float64().Call(x)))
	}
	if e.v.Scalar() {
		return []jen.Code{jen.Id(dst).Op(":=").Add(exp(jen.Id(x)))}
	}
	lanes := jen.Id("lanes" + suffix)
	return []jen.Code{
		jen.Commentf("%s = e^%s, computed in float64 lane by lane", dst, x),
		jen.Var().Add(lanes).Index(jen.Lit(e.v.lanes)).Float32(),
		jen.Id(x).Dot("Store").Call(jen.Op("&").Add(lanes)),
		jen.For(jen.List(jen.Id("i"), jen.Id("x")).Op(":=").Range().Add(lanes)).Block(
			jen.Add(lanes).Index(jen.Id("i")).Op("=").Add(exp(jen.Id("x"))),
		),
		jen.Id(dst).Op(":=").Qual(ArchSIMD, "Load"+e.v.Name()).Call(jen.Op("&").Add(lanes)),
	}
}
