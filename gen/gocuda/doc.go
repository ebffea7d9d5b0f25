// Package gocuda writes a Go package of tuned CUDA kernels
// (`autotune gen --device sm_80,sm_90`): the consumer of gen's plan for
// CUDA, beside gen's own Go/CPU writer.
//
// For each op with a CUDA template and each architecture asked for,
// gen.Select plans from the tuning records of that architecture (any GPU
// of it): the winner of every tuned shape, specialised to it; the
// shape-generic kernels (kernels.Kernel without a Shape) of the winners
// that win the most shapes; and the template's default, generic, the last
// resort. Each kernel's CUDA C is compiled to PTX for its architecture by
// a Compiler (NVRTC where installed, else clang, as the PTX check does)
// and written under ptx/ beside its source under cu/; manifest.json
// records the command, the compiler, the template versions, each
// kernel's config and the hashes of its source and PTX.
//
// The generated package embeds them (go:embed) and holds a small run time
// (runtime.go.txt, the same in every package): libcuda is loaded with
// purego at the first launch, so the package builds with CGO_ENABLED=0;
// each kernel's module is loaded lazily per context; a launch takes a
// stream and device pointers (uintptr) the caller owns, computes a
// shape-generic kernel's grid and dynamic shared memory from the extents
// (the kernels.CUDALaunch of the template, written out as data), sets the
// dynamic shared memory attribute above 48 KiB, and allocates nothing once
// the kernel is loaded. Dispatch per architecture goes exact → nearest
// generic that can run the shape → default; a device of a newer
// architecture than the package's runs the PTX of the newest older one,
// JIT-compiled by the driver (Arch says so). Its tests check the embedded
// files against the manifest and the dispatch; on a GPU, TestGPU runs
// every op at its tuned shapes and at odd ones against the op's float64
// reference (kernels.Op.EmitReference, reference_test.go) on NaN-poisoned
// output, and without a driver it skips, saying so (examples/fastcuda's
// passed on an H100 on 2026-11-27). This package's tests run it against
// the fake libcuda of measure/cuda/driver, where it must find the output
// unwritten. BenchmarkGPU times each op at its tuned shapes.
//
// LoadTuning re-ranks the compiled kernels from a tuning log of the
// package's architectures, as the CPU package's does. The kernels are
// float32.
package gocuda
