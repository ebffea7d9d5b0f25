// Package device describes the targets that generated kernels run on: the host CPU ("cpu") and
// the CUDA architectures ("sm_70" … "sm_90").
//
// A [Target] is plain data. Templates in kernels read it as constraints on their knob spaces: a
// CPU's [ISA] decides which vector widths are valid (Float32x16 needs AVX-512; NEON's four lanes
// need arm64, whose extensions, ASIMD, FP16, BF16, I8MM and the SVE length, come from the hardware
// capabilities through golang.org/x/sys/cpu and /proc/cpuinfo), a GPU's [Limits]
// bound threads, shared memory and registers per block. The tuning database keys its records by
// [Target.Fingerprint], so a measurement is never applied to a different machine or architecture.
//
// [Resolve] turns the name a user typed into a Target. "cpu" describes this machine, detected once
// per process by [Host]; "sm_XX" comes from a fixed table of the CUDA programming guide's
// per-compute-capability limits; "auto" picks the local GPU when there is one and the CPU
// otherwise. Finding the local GPU needs the CUDA driver, which this package does not load: the
// caller passes a [Probe] (measure/cuda has one), and [Lookup] is Resolve without one. The package
// imports nothing from the project, so every other package may use it.
package device
