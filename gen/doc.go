// Package gen writes a Go package of tuned kernels from tuning records
// (`autotune gen`).
//
// Generate plans, for each op (and the ops of its variants: attention
// brings attention_causal, run by its causal flag), the kernels to
// compile: the winner of every tuned workload of the device, specialised to
// its shape; the shape-generic form (a kernels.Kernel without a Shape) of
// the Options.Variants winners that win the most shapes; and the
// template's default config, generic. Each kernel whose config needs
// vectors (the templates' vec knob: AVX2 and FMA at 8 lanes, AVX-512 at
// 16) is emitted twice: as it was tuned, under the build tag
// goexperiment.simd && amd64, installed at start-up only when the CPU has
// the instructions, and as the same config with vec=1 in plain Go (the
// template's default for a CPU without vectors where that is not a valid
// config), which every build has. A kernel whose vector form has Go
// assembly (kernels.GoEmitter.Asm) is emitted a third time, in its plain
// form (kernels.AMD64Plain): the same assembly tiles with
// plain Go around them, under the same name and the build tag
// !goexperiment.simd && amd64. The assembly (op_amd64.s) is then in every
// amd64 build, and a build without the experiment installs each plain
// form at start-up when the CPU has the tiles' instructions, read by
// CPUID and XGETBV in the package's own assembly (cpu_amd64.go.txt and
// .s.txt, the same in every package) as Go's runtime reads them, GODEBUG's
// cpu settings included; a generated test checks that reading against
// archsimd.X86 in a build with the experiment.
//
// The generated package imports only the standard library (and
// simd/archsimd under its tag). Its exported functions are named by the
// ops (kernels.Op.API) and check their slices' lengths against the
// extents, which kernels.Op.Args gives as products of extents. Its
// dispatch (runtime.go.txt, the same in every package) goes exact tuned
// shape → specialised kernel; else the generic kernel of the nearest tuned
// shape that has one (tunedb.ShapeDistance, ties as tunedb.Nearest); else
// the default; and LoadTuning re-ranks the compiled kernels from a JSON
// Lines log. Its tests check every kernel, both forms, against the op's
// float64 reference (kernels.Op.EmitReference) on every input set that can
// be emitted (kernels.InputSet.EmitFill), at the tuned shapes and at
// shapes never tuned, and check that Variant agrees with what
// tunedb.Nearest says here. Write puts the files in place, rewriting only
// what changed and removing only stale files of its own.
package gen
