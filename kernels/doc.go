// Package kernels is the registry of the operators autotune knows and of
// their templates, one per backend.
//
// An [Op] is what is computed, independent of where: a name, the dimensions
// of its shape, argument sizes, the float64 reference, the tolerance of a
// correct float32 kernel, FLOPs and bytes. A [Template] implements one op on
// one [Backend] (cpu or cuda): the knob space for a shape on a target,
// analytic features, a default and a version, which every backend shares,
// and the backend's emitter ([GoEmitter], [CUDAEmitter]), which turns a
// [Kernel] (a name, a shape or none for shape-generic code, a dtype, a
// config and an [Arch]) into source. Specialised, shape-generic and plain
// kernels are modes of one emitter, asked for by the Kernel.
//
// Each op lives in a package of its own, kernels/<op>, with the op in
// op.go and one file per backend (cpu.go, cuda.go); its init function registers both
// ([RegisterOp], [Register]). The package kernels/all imports every op
// package, so adding an op is one new package and one import line there.
// The command line, the tuner and every other consumer ask the registry
// ([Lookup], [Resolve], [TemplateFor]) and never name an op; variants such
// as `--op attention --causal` are data of the op ([Op.Variants]).
package kernels
