package kernels

import (
	"math/rand/v2"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// A Template is everything the tuner knows about one op: its knob space, how
// to emit code for a config, the float64 reference that decides whether that
// code is correct, and the work one call does. It is data plus a few
// functions; a template package (kernels/<op>) exports one.
//
// Kernels are specialised to one shape: the shape is a compile-time constant
// in the generated code, as in TVM, so the compiler sees exact trip counts.
//
// Every kernel, whatever the op, is called as fn(out, in0, in1, ...): the
// output slice first, then the inputs in the order Args gives, all float32.
type Template struct {
	Op Op

	// Version identifies the template's code and knob space. The tuning
	// database keys records by it, so change it whenever the emitted code or
	// the space changes; records of another version are never the best.
	Version string

	// Space returns the knobs for a shape on a target, with the constraints
	// the target imposes (a 16-lane vector needs AVX-512, for instance).
	Space func(shape []int, target device.Target) *schedule.Space

	// Args returns the element counts of the kernel's inputs, in argument
	// order, and of its output.
	Args func(shape []int) (ins []int, out int)

	// Reference computes the output in float64 from the float32 inputs.
	Reference func(shape []int, ins [][]float32, out []float64)

	// Tolerance bounds the error of a correct float32 kernel: an output is
	// wrong where |got-want| > abs + rel*|want|. It may depend on the shape
	// because rounding error grows with the reduction length.
	Tolerance func(shape []int) (rel, abs float64)

	// FLOPs is the floating-point work of one call; Bytes the minimum bytes
	// one call must move (each input read and the output written once), for
	// GB/s and the roofline.
	FLOPs func(shape []int) float64
	Bytes func(shape []int) float64

	// EmitGo adds to f a documented function with the given name that
	// computes the op for shape with cfg: func name(out, in0, ... []float32).
	// The code may use simd/archsimd; it is built with GOEXPERIMENT=simd.
	// cfg is a valid point of Space(shape, target).
	EmitGo func(f *jen.File, name string, shape []int, cfg schedule.Config)

	// Features, when set, returns analytic features of cfg for shape on
	// target, the same number for every call: quantities the cost model
	// would otherwise have to learn from the knobs, such as the size of a
	// register tile or whether a block fits a cache. The tuner appends
	// them to the knobs' own encoding (schedule.Space.Features).
	Features func(shape []int, target device.Target, cfg schedule.Config) []float64

	// EmitAsm, when set, returns the Go assembly for amd64 that the code
	// EmitGo wrote for the same name, shape and cfg declares (functions
	// without a body), or nil when that config needs none. It is built
	// as a .s file of the same package (codegen/goasm renders it).
	EmitAsm func(name string, shape []int, cfg schedule.Config) []byte

	// Inputs are the input sets every candidate is checked on, each with
	// its reference output: the distributions of the inputs are part of
	// the op's semantics (softmax logits in the hundreds, rows with -Inf).
	// Candidates are timed on the first. Nil means DefaultInputs.
	Inputs []InputSet

	// Baselines are the op's reference implementations as a user would
	// write them (plain Go loops, a library call), which `autotune bench`
	// runs side by side with the tuned kernel. Op-independent baselines
	// (the memory-copy floor, the FMA peak) belong to the bench harness.
	Baselines []Baseline
}

// A Baseline is code the tuned kernel is compared with.
type Baseline struct {
	Name string // short and lower-case: "naive", "gonum"
	Doc  string // one line for tables and help

	// EmitGo adds to f a function with the given name and the kernel
	// calling convention, func name(out, in0, ... []float32).
	EmitGo func(f *jen.File, name string, shape []int)

	// Requires lists the modules, beyond the standard library, whose
	// packages the emitted code imports ("gonum.org/v1/gonum"). The bench
	// module requires each at the version of autotune's own go.mod (see
	// package github.com/autotune-dev/autotune), so each must be a
	// requirement of it. Nil for plain Go.
	Requires []string

	// Cgo says the emitted code uses cgo (a C library such as OpenBLAS):
	// the bench module is then built with CGO_ENABLED=1.
	Cgo bool

	// Skip, when set, returns why the baseline is left out of a bench of
	// shape, or "" to run it: a baseline far too slow for large shapes.
	Skip func(shape []int) string
}

// Skipped returns why b is left out of a bench of shape, or "".
func (b Baseline) Skipped(shape []int) string {
	if b.Skip == nil {
		return ""
	}
	return b.Skip(shape)
}

// An InputSet is one distribution of a kernel's inputs.
type InputSet struct {
	Name string // short and lower-case: "uniform", "large"

	// Fill draws every input of shape from r, in argument order; ins[i]
	// has the length Args gives it. Zeros hide bugs (a skipped term of a
	// sum, a wrong operand), so a set should draw none.
	Fill func(shape []int, r *rand.Rand, ins [][]float32)

	// Tolerance, when set, replaces Template.Tolerance for this set: a
	// template whose error bound assumes the inputs' magnitude (GEMM's
	// does) needs another bound for larger inputs.
	Tolerance func(shape []int) (rel, abs float64)
}

// InputSets returns t's input sets: t.Inputs, or DefaultInputs.
func (t Template) InputSets() []InputSet {
	if len(t.Inputs) == 0 {
		return DefaultInputs
	}
	return t.Inputs
}

// DefaultInputs are the input sets of a template that declares none:
// "uniform", ±[0.125, 4], the range the templates' error bounds assume,
// and "large", the same range times 256. A template whose tolerance
// depends on the inputs' magnitude declares its own.
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
	}}
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
