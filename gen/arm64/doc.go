// Package arm64 is the arm64 part of the Go packages that package gen
// writes for the CPU, beside gen/amd64: what in them knows arm64.
//
// A config tuned on arm64 whose kernels call Go assembly
// (kernels.GoEmitter.Asm) has a NEON form there: its arm64 kernel
// (kernels.ARM64), plain Go around NEON assembly (gemm's and attention's
// tiles, attention's online softmax, the rows of softmax and the norms).
// A generated package
// compiles it twice: the NEON form under Tag, installed at start-up in
// every arm64 build, and its scalar form, which every other build runs.
// The build tag is the capability check: NEON (ASIMD) is part of ARMv8-A,
// and every arm64 CPU Go runs on has it. A config without assembly is
// scalar Go, its only form.
package arm64
