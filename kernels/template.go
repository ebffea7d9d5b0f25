package kernels

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// A Template is one op on one backend: the core every backend shares (the
// op it implements, embedded so that t.Args and t.Reference are the op's;
// a version; the knob space on a target; analytic features; a default;
// baselines) and the backend's emitter, which turns a [Kernel] into
// source. It is data plus a few functions; an op package (kernels/<op>)
// declares one per backend in a file of its own (cpu.go, cuda.go) and
// registers it.
//
// Kernels are specialised to one shape: the shape is a compile-time constant
// in the generated code, as in TVM, so the compiler sees exact trip counts.
// Every template also emits shape-generic kernels (a Kernel whose Shape is
// nil), the same knobs with the shape an argument, so that a config tuned
// for one shape serves every shape.
//
// To add a template for a new op on the CPU, write one type with the two
// methods of [GoEmitter]: EmitGo switches on k.Shape == nil (generic) and
// k.Arch.Plain (no archsimd around the assembly) and returns the assembly
// the Go declares; Asm says which configs have assembly. On CUDA, one
// method ([CUDAEmitter]). Every other part is shared by all backends.
type Template struct {
	Op
	Backend Backend
	// Version identifies the template's code and knob space. The tuning
	// database keys records by it, so change it whenever the emitted code or
	// the space changes; records of another version are never the best.
	Version string
	// Earlier are earlier revisions of the template whose spaces differ
	// from Space, kept so that landscapes recorded with them still replay
	// (tune.FindRecording): each has its Version, Space, Default,
	// Dominated and Estimate, and nothing else is used. Nothing is tuned, emitted or looked up with
	// them: the tuning database never applies their records to today's
	// code. Nil when every recorded revision had today's space.
	Earlier []Template
	// Space returns the knobs for a shape on a target, with the constraints
	// the target imposes (a 16-lane vector needs AVX-512, for instance).
	Space func(shape []int, target device.Target) *schedule.Space
	// Features, when set, returns analytic features of cfg for shape on
	// target, the same number for every call: quantities the cost model
	// would otherwise have to learn from the knobs, such as the size of a
	// register tile or whether a block fits a cache. The tuner appends
	// them to the knobs' own encoding (schedule.Space.Features).
	Features func(shape []int, target device.Target, cfg schedule.Config) []float64
	// Dominated, when set, reports that cfg is certainly slower for shape
	// on target than other configs of the space, by the template's own
	// analysis rather than by measurement: a scalar loop where the
	// target has vectors, say. A search spends its first batch, when it
	// has no model yet, and the model-ranked part of later ones on the
	// others (search.Prior). Such configs stay in the space, valid: the
	// search's exploring share and a grid still reach them. Be conservative: a config that may win somewhere is not
	// dominated.
	Dominated func(shape []int, target device.Target, cfg schedule.Config) bool
	// Estimate, when set, returns a rough time per call of cfg for shape
	// on target, in nanoseconds, from the template's own quantities
	// (FLOPs, bytes through each cache, register and cache footprints,
	// tails, threads against cores), without building or measuring
	// anything. Only its order among the configs of one shape matters:
	// a search uses it to filter and order its first batches before its
	// model has data (search.Estimator), and trusts it less as
	// measurements arrive. It must be cheap (a search asks it of
	// thousands of configs) and accept the configs of every revision in
	// Earlier that sets it.
	Estimate func(shape []int, target device.Target, cfg schedule.Config) float64
	// SearchConstraints, when set, returns what a search of element type
	// dt adds to the space (SearchSpace): points whose kernels in dt are
	// another point's code under another name, which a search would time
	// twice, or that dt's kernel cannot run on target where another
	// dtype's can. Space, which gen and lookup validate records against,
	// keeps them.
	SearchConstraints func(shape []int, dt dtype.DType, target device.Target) []schedule.Constraint
	// Default, when set, returns the config to use for shape on target
	// when nothing of the op was tuned there: one the template's author
	// expects to be reasonable everywhere. DefaultConfig falls back to the
	// space's first valid config when Default is unset or its config is
	// not valid for the shape.
	Default func(shape []int, target device.Target) schedule.Config
	// Baselines are the op's implementations as a user of this backend
	// would write them (plain Go loops, a library call), which `autotune
	// bench` runs side by side with the tuned kernel. Op-independent
	// baselines (the memory-copy floor, the FMA peak) belong to the bench
	// harness.
	Baselines []Baseline

	// Go is the CPU backend's emitter; a CPU template needs it.
	Go GoEmitter
	// CUDA is the CUDA backend's emitter; a CUDA template needs it.
	CUDA CUDAEmitter
}

// A Kernel is what an emitter is asked for: one config of a template for
// one shape (or every shape), element type and architecture.
type Kernel struct {
	// Name is the Go function (CPU) or entry point (CUDA) to define.
	Name string
	// Shape is the shape the kernel is specialised to: its extents are
	// compile-time constants. Nil asks for the shape-generic kernel,
	// whose extents are arguments (see GoEmitter).
	Shape []int
	// DType is the element type of the arguments in memory; the zero
	// value means dtype.Default.
	DType dtype.DType
	// Config is a valid point of the template's Space for a target the
	// kernel is for (for a generic kernel: for some shape, usually the
	// one it was tuned on).
	Config schedule.Config
	// Arch is the architecture and form of the code.
	Arch Arch
}

// An Arch is the instruction set a kernel is written for and the form of
// its code there.
type Arch struct {
	// ISA is the instruction set: "amd64" or "arm64" for the CPU templates; a
	// CUDA kernel's architecture is its target's (sm_XX), and the zero
	// value is all a CUDA emitter is asked with.
	ISA string
	// Plain asks for the plain form of a kernel that calls Go assembly
	// (GoEmitter.Asm): everything around the assembly in plain Go that
	// does not import simd/archsimd, so that it builds without
	// GOEXPERIMENT=simd, calling the same assembly. The tuner measures
	// the archsimd form; generated packages (package gen) run the plain
	// form in builds without the experiment.
	Plain bool
}

// AMD64 is the architecture of the CPU templates' kernels: Go with
// simd/archsimd, and Go assembly for amd64.
var AMD64 = Arch{ISA: "amd64"}

// AMD64Plain is the architecture of the plain forms of the CPU templates'
// kernels that call Go assembly.
var AMD64Plain = Arch{ISA: "amd64", Plain: true}

// ARM64 is the architecture of the CPU templates' kernels on arm64: there
// is no archsimd there, so every form is plain Go, around Go assembly for
// NEON (codegen/neon) in the configs of a template that has it.
var ARM64 = Arch{ISA: "arm64", Plain: true}

// ArchOf returns the architecture of the kernels for a CPU target:
// ARM64 for an arm64 CPU, else AMD64.
func ArchOf(t device.Target) Arch {
	if t.CPU != nil && t.CPU.ISA.Arch() == "arm64" {
		return ARM64
	}
	return AMD64
}

// A GoEmitter writes the Go (and Go assembly) of a template's kernels.
type GoEmitter interface {
	// EmitGo adds to f a documented function named k.Name that computes
	// the op with k.Config. For a shape it has the kernel calling
	// convention, func name(out, in0, ... []float32); the code may use
	// simd/archsimd (it is built with GOEXPERIMENT=simd) unless
	// k.Arch.Plain. For a nil Shape it is shape-generic:
	//
	//	func name(out, in0, ... []float32, d0, d1, ... int)
	//
	// the output, the inputs in the order Args gives, then the extents in
	// the order of Dims (softmax: rows, cols; gemm: m, n, k; attention: b,
	// h, s, d). Every knob stays a compile-time constant (vector width,
	// tiles, blocks, unroll, threads); every tail is handled at run time,
	// and a knob whose constraint depended on the tuned shape (a block
	// larger than an extent, more threads than units of work) is clamped
	// at run time, as each template's doc says. The generic kernel panics
	// when a slice is shorter than the shape needs.
	//
	// EmitGo returns the Go assembly for k.Arch that the functions it
	// wrote declare (functions without a body), or nil when the kernel has
	// none; it is built as a .s file of the same package (codegen/goasm
	// renders it). The plain form declares the same assembly as the
	// archsimd form and returns it too. EmitGo panics for a config that is
	// not a point of the template's space, and for a plain form of a
	// config without assembly.
	//
	// The generic and plain forms are not part of Version: the tuner
	// measures specialised archsimd kernels only, and a tuned config is
	// applied to the other forms as it is. Each template's golden files
	// of those forms carry a revision of their own.
	EmitGo(f *jen.File, k Kernel) (asm []byte)
	// Asm reports whether the kernels of cfg call Go assembly, whatever
	// their shape; those configs, and only those, have a plain form.
	Asm(cfg schedule.Config) bool
}

// GoFunc is a GoEmitter that is a function, for a template whose kernels
// call no Go assembly, or whose assembly has no plain form: Asm reports
// false for every config, so nothing asks for a plain form.
type GoFunc func(f *jen.File, k Kernel) (asm []byte)

// EmitGo returns fn(f, k).
func (fn GoFunc) EmitGo(f *jen.File, k Kernel) []byte { return fn(f, k) }

// Asm reports false.
func (GoFunc) Asm(schedule.Config) bool { return false }

// A CUDAEmitter writes the CUDA C of a template's kernels.
type CUDAEmitter interface {
	// EmitCUDA returns the CUDA C of a kernel that computes the op for
	// k.Shape with k.Config, with k.Name as its entry point, and how to
	// launch it. k.Config is a valid point of Space(k.Shape, target) for
	// a CUDA target.
	//
	// For a nil Shape the kernel is shape-generic (k.Config a valid point
	// for some shape, usually the one it was tuned on): its extents are
	// int arguments after the pointers, in the order of Dims, every tail
	// is handled at run time, and CUDAKernel.Generic says how the host
	// computes the launch from them. A knob whose constraint depended on
	// the tuned shape is clamped in the generic code, or becomes a limit
	// of Generic (Multiple, Max), as each template's doc says. The
	// generic form is not part of Version (the tuner measures specialised
	// kernels); each template's golden files of it carry a revision of
	// their own.
	EmitCUDA(k Kernel) CUDAKernel
}

// CUDAFunc is a CUDAEmitter that is a function.
type CUDAFunc func(k Kernel) CUDAKernel

// EmitCUDA returns f(k).
func (f CUDAFunc) EmitCUDA(k Kernel) CUDAKernel { return f(k) }

// ConvertKnob is the knob of the CPU templates that places the conversion
// of 16-bit elements to and from float32 (in blocks, in registers, while
// packing, ...). Its first value is the one that constrains nothing else.
// Its value ConvertDot, where a template has it, multiplies bf16 pairs
// with VDPBF16PS, which has no f16 form.
const ConvertKnob = "convert"

// ConvertDot is the value of ConvertKnob that names the VDPBF16PS forms.
const ConvertDot = "dot"

// ConvertCVTNE is the value of ConvertKnob that names the forms whose bf16
// stores round with VCVTNEPS2BF16; its f16 kernels are another value's.
const ConvertCVTNE = "cvtne"

// SearchSpace is the space a search explores for shape and element type
// dt on target: Space, with ConvertKnob pinned to its first value when
// dt's elements are 32-bit, since every value then names the same float32
// kernel and a search would time it once per name; without ConvertDot and
// ConvertCVTNE for f16, whose kernels of those values are those of another
// (each template's doc says which); and with the template's
// SearchConstraints for dt.
func (t Template) SearchSpace(shape []int, dt dtype.DType, target device.Target) *schedule.Space {
	space := t.Space(shape, target)
	switch dt = cmp.Or(dt, dtype.Default); {
	case dt.Size() == 4:
		space = space.Pin(ConvertKnob)
	case dt != dtype.BF16:
		space = space.With(schedule.Constraint{Name: "dot_needs_bf16", OK: func(c schedule.Config) bool {
			v, ok := c.Lookup(ConvertKnob)
			return !ok || v.Str() != ConvertDot
		}}, schedule.Constraint{Name: "cvtne_needs_bf16", OK: func(c schedule.Config) bool {
			v, ok := c.Lookup(ConvertKnob)
			return !ok || v.Str() != ConvertCVTNE
		}})
	}
	if t.SearchConstraints != nil {
		space = space.With(t.SearchConstraints(shape, dt, target)...)
	}
	return space
}

// DefaultConfig is the config for shape on target when nothing of the op
// was tuned there (lookup's and gen's last resort): Default's when it is
// valid there, else the first valid config of the space, or an error when
// the space has none.
func (t Template) DefaultConfig(shape []int, target device.Target) (schedule.Config, error) {
	space := t.Space(shape, target)
	if t.Default != nil {
		if c := t.Default(shape, target); space.Valid(c) {
			return c, nil
		}
	}
	for i := int64(0); i < space.Size(); i++ {
		if c := space.At(i); space.Valid(c) {
			return c, nil
		}
	}
	return schedule.Config{}, fmt.Errorf("kernels: %s %s has no valid config on %s", t.Op.Name, FormatShape(shape), target.Fingerprint())
}

// Revision returns t if version is t's, else the earlier revision of t
// with that version (Earlier), and whether there is one.
func (t Template) Revision(version string) (Template, bool) {
	if version == t.Version {
		return t, true
	}
	for _, e := range t.Earlier {
		if e.Version == version {
			return e, true
		}
	}
	return Template{}, false
}

// CUDAKernel is one generated CUDA kernel and its launch geometry. Source
// defines `extern "C" __global__ void Entry(float *out, const float *in0,
// ...)`: the output and then the inputs, each a device pointer to the
// op's row-major array of the size Op.Args gives (float32, or the 16 bits
// of a bf16 or f16 element), and nothing else, since the shape is baked
// into the code as constants (as for the CPU); a shape-generic kernel
// takes the extents after them, `int d0, int d1, ...`. The source
// includes no headers, so NVRTC needs no include path.
type CUDAKernel struct {
	Source string
	Entry  string
	// Grid and Block are the launch dimensions, X first; SharedBytes is
	// the dynamic shared memory per block (static shared memory is in
	// Source). Zero for a shape-generic kernel.
	Grid, Block [3]int
	SharedBytes int
	// Generic is how to launch a shape-generic kernel; nil for a
	// specialised one.
	Generic *CUDALaunch
}

// A Baseline is code the tuned kernel is compared with.
type Baseline struct {
	Name string // short and lower-case: "naive", "gonum"
	Doc  string // one line for tables and help

	// EmitGo adds to f a function with the given name and the kernel
	// calling convention of DType: func name(out, in0, ... []float32) for
	// float32, whose baselines run on a workload of a 16-bit dtype too,
	// on the same values, decoded (see package measure/cpu's Bench);
	// []uint16 for bf16 and f16 (GoElem).
	EmitGo func(f *jen.File, name string, shape []int)

	// DType is the element type EmitGo's kernel reads and writes: zero
	// for float32; bf16 or f16 for a baseline that runs only on
	// workloads of that dtype, on their 16-bit buffers (a library's own
	// half-precision primitive). See For.
	DType dtype.DType

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

	// KnownWrong names the op's input sets (InputSet.Name) on which the
	// baseline is known to be wrong, a library that does not handle them
	// (oneDNN's layer normalization on rows near 1e18): autotune bench
	// does not check it on them, and says so in its line, instead of
	// refusing to time it. The first set, the one bench times, must not
	// be among them, but for a 16-bit baseline, which may be wrong on
	// every set of its dtype: a library that rounds an intermediate to 16
	// bits (oneDNN's bf16 softmax writes exp(x−max) to its destination
	// and scales it there, rounding twice), where the tolerance allows
	// one rounding of a float32 result; bench then times it unchecked.
	// Nil checks every set.
	KnownWrong []string

	// Note, when set, returns a line about this process's environment
	// that keeps the baseline from its best speed (a variable that makes
	// a library choose slower code), or "" when there is none; autotune
	// bench prints it with the results.
	Note func() string
}

// For reports whether b runs on workloads of dt: a float32 baseline on
// every dtype's, a 16-bit one on its own dtype's only.
func (b Baseline) For(dt dtype.DType) bool {
	return b.DType == "" || b.DType == dtype.F32 || b.DType == cmp.Or(dt, dtype.Default)
}

// Skipped returns why b is left out of a bench of shape, or "".
func (b Baseline) Skipped(shape []int) string {
	if b.Skip == nil {
		return ""
	}
	return b.Skip(shape)
}

// Want panics unless k asks for code in isa and one of the element types
// dts (a zero DType is dtype.Default): an emitter calls it first, so that
// a request for an architecture or element type it does not write fails
// loudly instead of getting another's code.
func (k Kernel) Want(isa string, dts ...dtype.DType) {
	d := cmp.Or(k.DType, dtype.Default)
	if k.Arch.ISA != isa || !slices.Contains(dts, d) {
		panic(fmt.Sprintf("kernels: %s: no %s kernel for %s (the emitter writes %s for %s)", k.Name, d, k.Arch.ISA, dtype.List(dts), isa))
	}
}
