package kernels

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
)

// An InputSet is one distribution of a kernel's inputs.
type InputSet struct {
	Name string // short and lower-case: "uniform", "large"

	// Fill draws every input of shape from r, in argument order; ins[i]
	// has the length Args gives it. Zeros hide bugs (a skipped term of a
	// sum, a wrong operand), so a set should draw none.
	Fill func(shape []int, r *rand.Rand, ins [][]float32)

	// Tolerance, when set, replaces Op.Tolerance for this set: an op
	// whose error bound assumes the inputs' magnitude (GEMM's does) needs
	// another bound for larger inputs.
	Tolerance func(shape []int, dt dtype.DType) (rel, abs float64)

	// EmitFill, when set, adds to f a function with the given name that
	// draws what Fill draws, in plain Go importing only the standard
	// library (math/rand/v2 for the generator):
	//
	//	func name(shape []int, r *rand.Rand, ins [][]float32)
	//
	// Generated packages (autotune gen) check their kernels on the sets
	// that have one.
	EmitFill func(f *jen.File, name string)

	// DTypes, when set, are the only dtypes the set is drawn for: a set
	// of magnitudes a dtype cannot hold (1e18 is Inf in f16, 1e-18 is 0)
	// names those that can, and the op adds sets fitted to the others.
	// Nil: every dtype.
	DTypes []dtype.DType
}

// For reports whether s is drawn for dt ("" is dtype.Default).
func (s InputSet) For(dt dtype.DType) bool {
	return len(s.DTypes) == 0 || slices.Contains(s.DTypes, cmp.Or(dt, dtype.Default))
}

// InputSets returns op's input sets: op.Inputs, or DefaultInputs.
func (op Op) InputSets() []InputSet {
	if len(op.Inputs) == 0 {
		return DefaultInputs
	}
	return op.Inputs
}

// InputSetsFor returns the input sets of op drawn for dt (InputSet.For),
// in order: the sets a kernel of dt is checked on.
func (op Op) InputSetsFor(dt dtype.DType) []InputSet {
	var sets []InputSet
	for _, s := range op.InputSets() {
		if s.For(dt) {
			sets = append(sets, s)
		}
	}
	return sets
}

// DefaultInputs are the input sets of an op that declares none:
// "uniform", ±[0.125, 4], the range the ops' error bounds assume, and
// "large", the same range times 256. An op whose tolerance depends on the
// inputs' magnitude declares its own.
var DefaultInputs = []InputSet{Uniform("uniform", 0.125, 4), Uniform("large", 32, 1024)}

// Uniform returns the input set name that draws every input uniformly
// from ±[lo, hi], each sign with probability 1/2.
func Uniform(name string, lo, hi float64) InputSet {
	return InputSet{Name: name, Fill: func(_ []int, r *rand.Rand, ins [][]float32) {
		for _, in := range ins {
			for i := range in {
				in[i] = SignedUniform(r, lo, hi)
			}
		}
	}, EmitFill: func(f *jen.File, fn string) {
		id := jen.Id
		f.Func().Id(fn).Params(id("_").Index().Int(), id("r").Op("*").Qual("math/rand/v2", "Rand"), id("ins").Index().Index().Float32()).Block(
			jen.For(jen.List(id("_"), id("in")).Op(":=").Range().Id("ins")).Block(
				jen.For(id("i").Op(":=").Range().Id("in")).Block(
					id("in").Index(id("i")).Op("=").Add(EmitSignedUniform(id("r"), lo, hi)),
				),
			),
		)
	}}
}

// EmitSignedUniform returns a Go expression that draws what SignedUniform
// draws from r (an expression of type *rand.Rand from math/rand/v2), in
// the same order of calls on r.
func EmitSignedUniform(r jen.Code, lo, hi float64) jen.Code {
	return jen.Func().Params().Float32().Block(
		jen.Id("v").Op(":=").Float32().Call(jen.Lit(lo).Op("+").Lit(hi-lo).Op("*").Add(r).Dot("Float64").Call()),
		jen.If(jen.Add(r).Dot("IntN").Call(jen.Lit(2)).Op("==").Lit(0)).Block(jen.Id("v").Op("=").Op("-").Id("v")),
		jen.Return(jen.Id("v")),
	).Call()
}

// SignedUniform draws from ±[lo, hi] with r: uniform magnitude, each sign
// with probability 1/2.
func SignedUniform(r *rand.Rand, lo, hi float64) float32 {
	v := float32(lo + (hi-lo)*r.Float64())
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// SetNames returns the names of sets, in order: the KnownWrong of a
// baseline wrong on every one (kernels.Baseline.KnownWrong).
func SetNames(sets []InputSet) []string {
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
	}
	return names
}
