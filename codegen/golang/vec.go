package golang

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
)

// ArchSIMD is the import path of Go's experimental SIMD package. It exists
// only on amd64 and only in builds with GOEXPERIMENT=simd.
const ArchSIMD = "simd/archsimd"

// F32 emits float32 code at one vector width: 1 lane is plain scalar Go,
// 8 lanes archsimd.Float32x8 (AVX2 and FMA), 16 lanes archsimd.Float32x16
// (AVX-512). Its methods return the same operation for every width, so an
// emitter written once against F32 serves every value of a vec knob.
//
// The arithmetic methods take operands that are names, calls or index
// expressions: scalar code renders them with Go operators, so a compound
// operand would take the precedence of its surroundings. Assign compound
// values to variables first.
type F32 struct{ lanes int }

// Float32 returns the emitter for the given number of lanes. It panics unless
// lanes is 1, 8 or 16: a template offering another width is a bug.
func Float32(lanes int) F32 {
	switch lanes {
	case 1, 8, 16:
		return F32{lanes}
	}
	panic(fmt.Sprintf("golang: no float32 vector of %d lanes", lanes))
}

// Lanes returns the number of float32 values one vector holds.
func (v F32) Lanes() int { return v.lanes }

// Scalar reports whether v is plain Go float32 code.
func (v F32) Scalar() bool { return v.lanes == 1 }

// Name returns the archsimd type name, e.g. "Float32x16", or "float32".
func (v F32) Name() string {
	if v.Scalar() {
		return "float32"
	}
	return "Float32x" + strconv.Itoa(v.lanes)
}

// Type returns the Go type of a vector.
func (v F32) Type() *jen.Statement {
	if v.Scalar() {
		return jen.Float32()
	}
	return jen.Qual(ArchSIMD, v.Name())
}

// Goroutine returns func() { body }, the function a kernel hands to a new
// goroutine. In vector code it ends by clearing the upper halves of the
// vector registers (VZEROUPPER): archsimd code leaves them dirty, and the
// SSE-encoded scalar Go of whatever goroutine runs next on that OS thread
// then runs several times slower. Scalar code is left as it is, so that it
// never imports archsimd.
func (v F32) Goroutine(body ...jen.Code) *jen.Statement {
	if !v.Scalar() {
		body = append(body, jen.Qual(ArchSIMD, "ClearAVXUpperBits").Call())
	}
	return jen.Func().Params().Block(body...)
}

// intName is the archsimd integer vector with v's lanes, e.g. "Int32x16".
func (v F32) intName() string { return "Int32x" + strconv.Itoa(v.lanes) }

// Splat returns a vector with the float32 x in every lane.
func (v F32) Splat(x jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Float32().Call(x)
	}
	return jen.Qual(ArchSIMD, "Broadcast"+v.Name()).Call(x)
}

// Load returns the vector s[i:i+lanes].
func (v F32) Load(s, i jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Add(s).Index(i)
	}
	return jen.Qual(ArchSIMD, "Load"+v.Name()+"Slice").Call(jen.Add(s).Index(i, jen.Empty()))
}

// LoadPart returns s[i:] in the first lanes of a vector and zeros in the
// others; s[i:] may be shorter than a vector. A nil i loads s itself.
// Scalar code has no partial vectors, so LoadPart panics for it.
func (v F32) LoadPart(s, i jen.Code) *jen.Statement {
	v.mustVector("LoadPart")
	if i != nil {
		s = jen.Add(s).Index(i, jen.Empty())
	}
	return jen.Qual(ArchSIMD, "Load"+v.Name()+"SlicePart").Call(s)
}

// Store returns the statement that writes x to s[i:i+lanes].
func (v F32) Store(x, s, i jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Add(s).Index(i).Op("=").Add(x)
	}
	return jen.Add(x).Dot("StoreSlice").Call(jen.Add(s).Index(i, jen.Empty()))
}

// StorePart returns the statement that writes as many of x's lanes as fit
// in s[i:]. It panics for scalar code, like LoadPart.
func (v F32) StorePart(x, s, i jen.Code) *jen.Statement {
	v.mustVector("StorePart")
	return jen.Add(x).Dot("StoreSlicePart").Call(jen.Add(s).Index(i, jen.Empty()))
}

// TailMask returns a mask with the first n lanes set, for the partial vector
// at the end of a row. Mask32x8FromBits needs AVX-512, so 8 lanes build it
// from an integer vector instead, which AVX2 can.
func (v F32) TailMask(n int) *jen.Statement {
	v.mustVector("TailMask")
	if n < 1 || n >= v.lanes {
		panic(fmt.Sprintf("golang: tail mask of %d lanes for %s", n, v.Name()))
	}
	if v.lanes == 16 {
		return jen.Qual(ArchSIMD, "Mask32x16FromBits").Call(jen.Lit(1<<n - 1))
	}
	ones := make([]jen.Code, n)
	for i := range ones {
		ones[i] = jen.Lit(1)
	}
	arr := jen.Index(jen.Lit(v.lanes)).Int32().Values(ones...)
	return jen.Qual(ArchSIMD, "Load"+v.intName()).Call(jen.Op("&").Add(arr)).Dot("ToMask").Call()
}

// Add returns a+b.
func (v F32) Add(a, b jen.Code) *jen.Statement { return v.binary("+", "Add", a, b) }

// Sub returns a-b.
func (v F32) Sub(a, b jen.Code) *jen.Statement { return v.binary("-", "Sub", a, b) }

// Mul returns a*b.
func (v F32) Mul(a, b jen.Code) *jen.Statement { return v.binary("*", "Mul", a, b) }

// Max returns the larger of a and b, lane by lane.
func (v F32) Max(a, b jen.Code) *jen.Statement { return v.builtin("max", "Max", a, b) }

// Min returns the smaller of a and b, lane by lane.
func (v F32) Min(a, b jen.Code) *jen.Statement { return v.builtin("min", "Min", a, b) }

// MulAdd returns a*b+c, fused (one rounding) in vector code. Scalar Go rounds
// twice unless the compiler fuses it (GOAMD64=v3 and later do).
func (v F32) MulAdd(a, b, c jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Add(a).Op("*").Add(b).Op("+").Add(c)
	}
	return jen.Add(a).Dot("MulAdd").Call(b, c)
}

func (v F32) binary(op, method string, a, b jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Add(a).Op(op).Add(b)
	}
	return jen.Add(a).Dot(method).Call(b)
}

func (v F32) builtin(fn, method string, a, b jen.Code) *jen.Statement {
	if v.Scalar() {
		return jen.Id(fn).Call(a, b)
	}
	return jen.Add(a).Dot(method).Call(b)
}

// Reduction is an associative operation that combines vectors or lanes.
type Reduction int

const (
	ReduceMax Reduction = iota // the largest
	ReduceSum                  // the sum
)

// Tree combines xs with r in a balanced tree, ((x0 r x1) r (x2 r x3)), so
// that independent accumulators meet in a few steps rather than one long
// chain. Scalar maxima become one call of the max builtin.
func (v F32) Tree(r Reduction, xs ...jen.Code) jen.Code {
	if len(xs) == 0 {
		panic("golang: Tree of nothing")
	}
	if v.Scalar() && r == ReduceMax && len(xs) > 1 {
		return jen.Id("max").Call(xs...)
	}
	for len(xs) > 1 {
		var next []jen.Code
		for i := 0; i+1 < len(xs); i += 2 {
			var c jen.Code
			if r == ReduceMax {
				c = v.Max(xs[i], xs[i+1])
			} else {
				c = v.Add(xs[i], xs[i+1])
			}
			if v.Scalar() && len(xs) > 2 {
				c = jen.Parens(c) // keep the pairing: a+b+c+d would be a chain
			}
			next = append(next, c)
		}
		if len(xs)%2 == 1 {
			next = append(next, xs[len(xs)-1])
		}
		xs = next
	}
	return xs[0]
}

// HorizontalFunc returns the declaration of a function name(v) float32 that
// reduces the lanes of a vector with r. It halves the vector twice with
// archsimd operations and finishes the last four lanes in scalar code:
// archsimd has no horizontal reduction of a whole vector. It panics for
// scalar code, which has nothing to reduce.
func (v F32) HorizontalFunc(name string, r Reduction) jen.Code {
	v.mustVector("HorizontalFunc")
	method, what := "Max", "the largest of v's lanes"
	if r == ReduceSum {
		method, what = "Add", "the sum of v's lanes"
	}
	var body []jen.Code
	half := jen.Id("v")
	for n := v.lanes / 2; n >= 4; n /= 2 {
		id := "v" + strconv.Itoa(n)
		body = append(body, jen.Id(id).Op(":=").Add(half).Dot("GetLo").Call().Dot(method).Call(jen.Add(half).Dot("GetHi").Call()))
		half = jen.Id(id)
	}
	lane := func(i int) jen.Code { return jen.Id("lanes").Index(jen.Lit(i)) }
	var result jen.Code = jen.Id("max").Call(lane(0), lane(1), lane(2), lane(3))
	if r == ReduceSum {
		result = jen.Parens(jen.Add(lane(0)).Op("+").Add(lane(1))).Op("+").Parens(jen.Add(lane(2)).Op("+").Add(lane(3)))
	}
	body = append(body,
		jen.Var().Id("lanes").Index(jen.Lit(4)).Float32(),
		jen.Add(half).Dot("Store").Call(jen.Op("&").Id("lanes")),
		jen.Return(result),
	)
	return jen.Commentf("%s returns %s.", name, what).Line().
		Func().Id(name).Params(jen.Id("v").Add(v.Type())).Float32().Block(body...)
}

func (v F32) mustVector(what string) {
	if v.Scalar() {
		panic("golang: " + what + " of scalar float32")
	}
}

// f32Lit returns x as a literal that converts back to exactly x: the
// shortest decimal that rounds to x as a float32, with a decimal point so
// that it is a floating-point constant.
func f32Lit(x float32) jen.Code {
	s := strconv.FormatFloat(float64(x), 'g', -1, 32)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return jen.Id(s)
}

// InfTail returns the declarations of a table and a function name(s) that
// loads s, shorter than a vector, into the first len(s) lanes and -Inf into
// the others, for a partial vector whose length is known only at run time
// (TailMask needs it at compile time): e^-Inf adds nothing to a sum and
// -Inf changes no maximum. The table holds lanes zeros, then lanes -Infs;
// the function adds its window at lanes-len(s) to the zero-padded load,
// which needs no mask and so no AVX-512 at 8 lanes. It panics for scalar
// code.
func (v F32) InfTail(name string) jen.Code {
	v.mustVector("InfTail")
	table := name + "Pad"
	pad := make([]jen.Code, 2*v.lanes)
	for i := range pad {
		if i < v.lanes {
			pad[i] = jen.Lit(0)
		} else {
			pad[i] = jen.Id("negInf")
		}
	}
	return jen.Commentf("%s holds %d zeros and %d -Infs: a window of it pads a partial vector with -Inf.", table, v.lanes, v.lanes).Line().
		Var().Id(table).Op("=").Func().Params().Index(jen.Lit(2*v.lanes)).Float32().Block(
		jen.Id("negInf").Op(":=").Float32().Call(jen.Qual("math", "Inf").Call(jen.Lit(-1))),
		jen.Return(jen.Index(jen.Lit(2*v.lanes)).Float32().Values(pad...)),
	).Call().Line().Line().
		Commentf("%s returns s, shorter than a vector, in the first len(s) lanes and -Inf in the others.", name).Line().
		Func().Id(name).Params(jen.Id("s").Index().Float32()).Add(v.Type()).Block(
		jen.Return(v.LoadPart(jen.Id("s"), nil).Dot("Add").Call(
			v.Load(jen.Id(table), jen.Lit(v.lanes).Op("-").Len(jen.Id("s"))))),
	)
}
