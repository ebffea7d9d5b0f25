// Package gen writes a Go package of tuned kernels from tuning records
// (`autotune gen`).
//
// Generate plans, for each op (and the ops of its variants: attention
// brings attention_causal, run by its causal flag), the kernels to
// compile: the winner of every tuned workload of the device, specialised to
// its shape; the shape-generic form (a kernels.Kernel without a Shape) of
// the Options.Variants winners that win the most shapes; and the
// template's default config, generic (kernels.Template.DefaultConfig).
// This plan knows no architecture: the architecture's part of the writer,
// package gen/amd64 (gen/arm64 for records of an arm64 CPU: a NEON form
// under the arm64 build tag, and the scalar form), says in which forms
// each config is compiled (a vector
// form that the CPU may lack, a scalar form every build has, a plain form
// of a config with Go assembly for builds without GOEXPERIMENT=simd) and
// writes what is x86 in the package: build tags, the dispatch conditions,
// the CPU detection of the plain forms and the "Builds" part of its doc.
// The kernels themselves come from each template's Go emitter
// (kernels.GoEmitter), asked for a kernels.Kernel in each form.
//
// The generated package imports only the standard library (and
// simd/archsimd under its tag). Its kernels are of one dtype
// (Options.DType); a package of bf16 or f16 defines that type (BF16 or
// F16: the 16 bits in a uint16, with conversions that round to nearest
// even, half.go), its exported functions take slices of it, and its tests
// check the kernels on inputs rounded to it through float32 adapters
// (runHalf). Such a package has no BenchmarkSideBySide yet. Its exported functions are named by the
// ops (kernels.Op.API) and check their slices' lengths against the
// extents, which kernels.Op.Args gives as products of extents. Its
// dispatch (runtime.go.txt, the same in every package) goes exact tuned
// shape → specialised kernel; else, for a shape inside a tuned range
// (tunedb.Range), the generic kernel of the winner of its nearest bucket,
// which every bucket's winner gets; else the generic kernel of the
// nearest tuned shape that has one (tunedb.ShapeDistance, ties as
// tunedb.Nearest); else the default: the rule of tunedb.Serve, by which
// package lookup answers too; and LoadTuning re-ranks the
// compiled kernels from a JSON Lines log. Its tests check every kernel, both forms, against the op's
// float64 reference (kernels.Op.EmitReference) on every input set that can
// be emitted (kernels.InputSet.EmitFill), at the tuned shapes and at
// shapes never tuned (a range's corners, the shapes just outside it and
// those between its buckets among them), and check that Variant agrees
// with what tunedb.Serve says here. Write puts the files in place, rewriting only
// what changed and removing only stale files of its own; it writes every
// file in full beside its target before renaming any into place, so a
// failed or killed gen never leaves a truncated file in the package.
//
// Select is the part of this plan that knows no backend (the winner of
// each tuned shape, the generic winners ranked by the shapes they win,
// the default; Selection.AddRanges adds the tuned ranges and their
// buckets' winners): package gen/gocuda, the writer of Go packages of CUDA
// kernels, plans with it, beside this package's Go/CPU writer.
package gen
