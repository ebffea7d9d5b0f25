package kernels

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// A Template is one op on one backend: the op it implements (embedded, so
// t.Args and t.Reference are the op's), its knob space on a target, how to
// emit code for a config, analytic features for the cost model, and a
// version. It is data plus a few functions; an op package (kernels/<op>)
// declares one per backend in a file of its own (cpu.go) and registers it.
//
// Kernels are specialised to one shape: the shape is a compile-time constant
// in the generated code, as in TVM, so the compiler sees exact trip counts.
// A CPU template also emits shape-generic kernels (EmitGoGeneric), the same
// knobs with the shape an argument, so that a config tuned for one shape
// serves every shape.
type Template struct {
	Op
	Backend Backend
	// Version identifies the template's code and knob space. The tuning
	// database keys records by it, so change it whenever the emitted code or
	// the space changes; records of another version are never the best.
	Version string
	// Earlier are earlier revisions of the template whose spaces differ
	// from Space, kept so that landscapes recorded with them still replay
	// (tune.FindRecording): each has its Version, Space and Default, and
	// nothing else is used. Nothing is tuned, emitted or looked up with
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
	// Default, when set, returns the config to use for shape on target
	// when nothing of the op was tuned there: one the template's author
	// expects to be reasonable everywhere. Lookups fall back to the
	// space's first valid config when Default is unset or its config is
	// not valid for the shape.
	Default func(shape []int, target device.Target) schedule.Config

	// The CPU backend's parts; a CPU template needs EmitGo.

	// EmitGo adds to f a documented function with the given name that
	// computes the op for shape with cfg: func name(out, in0, ... []float32).
	// The code may use simd/archsimd; it is built with GOEXPERIMENT=simd.
	// cfg is a valid point of Space(shape, target).
	EmitGo func(f *jen.File, name string, shape []int, cfg schedule.Config)
	// EmitAsm, when set, returns the Go assembly for amd64 that the code
	// EmitGo wrote for the same name, shape and cfg declares (functions
	// without a body), or nil when that config needs none. It is built
	// as a .s file of the same package (codegen/goasm renders it).
	EmitAsm func(name string, shape []int, cfg schedule.Config) []byte
	// EmitGoGeneric adds to f a documented function with the given name
	// that computes the op with cfg for any shape, given at run time:
	//
	//	func name(out, in0, ... []float32, d0, d1, ... int)
	//
	// the output, the inputs in the order Args gives, then the extents in
	// the order of Dims (softmax: rows, cols; gemm: m, n, k; attention: b,
	// h, s, d). Every knob stays a compile-time constant (vector width,
	// tiles, blocks, unroll, threads); every tail is handled at run time.
	// cfg is a valid point of Space(shape, target) for some shape, usually
	// the one it was tuned on, and the kernel is correct for every shape
	// whose extents are ≥ 1: a knob whose constraint depended on the tuned
	// shape (a block larger than an extent, more threads than units of
	// work) is clamped at run time, as each template's doc says. The kernel
	// panics when a slice is shorter than the shape needs.
	EmitGoGeneric func(f *jen.File, name string, cfg schedule.Config)
	// EmitAsmGeneric is EmitAsm for the code EmitGoGeneric wrote for the
	// same name and cfg, or nil when that config needs no assembly.
	//
	// The generic code is not part of Version: the tuner measures
	// specialised kernels only, and a tuned config is applied to the
	// generic emitter as it is. Each template's golden files of generic
	// code carry a revision of their own.
	EmitAsmGeneric func(name string, cfg schedule.Config) []byte
	// EmitGoPlain, when set, is EmitGo (EmitGoGeneric when shape is nil)
	// for a config that has assembly (EmitAsm, EmitAsmGeneric), with
	// everything around the assembly in plain Go: the code does not
	// import simd/archsimd, so it builds without GOEXPERIMENT=simd, and
	// calls the same assembly, which EmitAsm (EmitAsmGeneric) returns for
	// the same name, shape and cfg. It is not part of Version either: the
	// tuner measures the archsimd code, and generated packages (package
	// gen) run this form in builds without the experiment. It panics for
	// a config without assembly.
	EmitGoPlain func(f *jen.File, name string, shape []int, cfg schedule.Config)
	// Baselines are the op's implementations as a user of this backend
	// would write them (plain Go loops, a library call), which `autotune
	// bench` runs side by side with the tuned kernel. Op-independent
	// baselines (the memory-copy floor, the FMA peak) belong to the bench
	// harness.
	Baselines []Baseline

	// The CUDA backend's parts.

	// EmitCUDA returns the CUDA C of a kernel that computes the op for
	// shape with cfg, with the given name as its entry point, and how to
	// launch it. cfg is a valid point of Space(shape, target) for a CUDA
	// target.
	EmitCUDA func(name string, shape []int, cfg schedule.Config) CUDAKernel
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
// op's row-major float32 array of the size Op.Args gives, and nothing
// else, since the shape is baked into the code as constants (as for the
// CPU). The source includes no headers, so NVRTC needs no include path.
type CUDAKernel struct {
	Source string
	Entry  string
	// Grid and Block are the launch dimensions, X first; SharedBytes is
	// the dynamic shared memory per block (static shared memory is in
	// Source).
	Grid, Block [3]int
	SharedBytes int
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

	// KnownWrong names the op's input sets (InputSet.Name) on which the
	// baseline is known to be wrong, a library that does not handle them
	// (oneDNN's layer normalization on rows near 1e18): autotune bench
	// does not check it on them, and says so in its line, instead of
	// refusing to time it. The first set, the one bench times, must not
	// be among them. Nil checks every set.
	KnownWrong []string

	// Note, when set, returns a line about this process's environment
	// that keeps the baseline from its best speed (a variable that makes
	// a library choose slower code), or "" when there is none; autotune
	// bench prints it with the results.
	Note func() string
}

// Skipped returns why b is left out of a bench of shape, or "".
func (b Baseline) Skipped(shape []int) string {
	if b.Skip == nil {
		return ""
	}
	return b.Skip(shape)
}
