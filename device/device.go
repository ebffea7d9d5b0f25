package device

import (
	"fmt"
	"strings"
)

// Target is where generated code runs. Exactly one of CPU and GPU is non-nil.
type Target struct {
	Name string // "cpu" or "sm_86"; the name a user typed, after resolving "auto"
	CPU  *CPU
	GPU  *GPU
}

// IsCUDA reports whether t is a CUDA architecture rather than the host CPU.
func (t Target) IsCUDA() bool { return t.GPU != nil }

// String returns the target's name, so that flags and logs show what the user typed.
func (t Target) String() string { return t.Name }

// Fingerprint returns the key under which the tuning database stores records for t:
//
//	cpu/<model>/<isa>/<cores>c   e.g. cpu/Intel(R) Xeon(R) Processor @ 2.80GHz/sse4.2+avx2+fma+avx512/2c
//	cuda/<arch>                  when no GPU was detected
//	cuda/<arch>/<name>/<driver>  when one was
//
// Cache sizes are left out because they follow from the model. Changing this format orphans
// every record already stored, so treat it as a schema change. Fingerprint panics when t has
// neither CPU nor GPU, because an empty or made-up key would silently mix records of different
// machines.
func (t Target) Fingerprint() string {
	switch {
	case t.GPU != nil && t.GPU.Name != "":
		return fmt.Sprintf("cuda/%s/%s/%s", t.GPU.Arch, t.GPU.Name, t.GPU.Driver)
	case t.GPU != nil:
		return "cuda/" + t.GPU.Arch
	case t.CPU != nil:
		return fmt.Sprintf("cpu/%s/%s/%dc", t.CPU.Model, t.CPU.ISA, t.CPU.Cores)
	}
	panic("device: Fingerprint of a Target with neither CPU nor GPU")
}

// ISA lists the vector extensions that kernels choose between, x86's and arm64's; a CPU has only
// its own architecture's set. On amd64, AVX512 means the AVX-512 F+CD+BW+DQ+VL bundle, the same
// set that simd/archsimd's X86.AVX512() and GOAMD64=v4 require, so a config the tuner accepts is
// one that archsimd code can run. On arm64, ASIMD is NEON (every ARMv8-A core has it), FP16 its
// half-precision arithmetic (ASIMDHP), BF16 and I8MM the bf16 and int8 matrix instructions, and
// SVEBits the SVE vector length in bits, 0 without SVE. AVX512BF16 is x86's bf16 dot product
// (VDPBF16PS), on top of AVX512; GODEBUG's cpu.avx512bf16=off hides it, as cpu.avx512f=off hides
// both.
type ISA struct {
	SSE42, AVX2, FMA, AVX512 bool
	AVX512BF16               bool
	ASIMD, FP16, BF16, I8MM  bool
	SVEBits                  int
}

// Arch returns the architecture whose extensions i lists: "amd64", "arm64", or "" for none.
func (i ISA) Arch() string {
	switch {
	case i.SSE42 || i.AVX2 || i.FMA || i.AVX512 || i.AVX512BF16:
		return "amd64"
	case i.ASIMD || i.FP16 || i.BF16 || i.I8MM || i.SVEBits > 0:
		return "arm64"
	}
	return ""
}

// String lists the extensions joined by '+' ("sse4.2+avx2+fma", "asimd+fp16+sve128"), or
// "none"; it is the ISA part of a CPU's fingerprint.
func (i ISA) String() string {
	var s []string
	for _, f := range []struct {
		on   bool
		name string
	}{{i.SSE42, "sse4.2"}, {i.AVX2, "avx2"}, {i.FMA, "fma"}, {i.AVX512, "avx512"}, {i.AVX512BF16, "avx512bf16"},
		{i.ASIMD, "asimd"}, {i.FP16, "fp16"}, {i.BF16, "bf16"}, {i.I8MM, "i8mm"}} {
		if f.on {
			s = append(s, f.name)
		}
	}
	if i.SVEBits > 0 {
		s = append(s, fmt.Sprintf("sve%d", i.SVEBits))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "+")
}

type CPU struct {
	Model string // /proc/cpuinfo "model name" on Linux; runtime.GOARCH when unknown
	Cores int    // logical cores, runtime.NumCPU()
	ISA   ISA    // the extensions of Arch; none on other architectures
	// Cache sizes in bytes of cpu0's level-1 data, level-2 and level-3 caches, from sysfs or,
	// where sysfs has none (some VMs), from CPUID; 0 when neither says. CacheSource says which.
	L1D, L2, L3 int
	CacheSource CacheSource
}

// CacheSource says where a CPU's cache sizes came from, so that a user reading `autotune list`
// can tell a measured size from a missing one.
type CacheSource string

const (
	CacheUnknown CacheSource = ""      // neither sysfs nor CPUID said; templates assume sizes
	CacheSysfs   CacheSource = "sysfs" // /sys/devices/system/cpu/cpu0/cache
	CacheCPUID   CacheSource = "cpuid" // CPUID leaf 4 (Intel) or 0x8000001D and older leaves (AMD)
)

// GPU describes a CUDA architecture and, once a device is detected, the device itself.
type GPU struct {
	Arch         string // "sm_86"
	Major, Minor int    // compute capability, 8 and 6 for sm_86
	Name         string // the GPU's name when a device was detected, "" otherwise
	Driver       string // driver version when detected, "" otherwise
	Limits
}

// Limits are the per-architecture resource limits that bound a launch configuration.
type Limits struct {
	MaxThreadsPerBlock     int
	SharedMemPerBlock      int // bytes, without opt-in
	SharedMemPerBlockOptin int // bytes, with cudaFuncAttributeMaxDynamicSharedMemorySize
	SharedMemPerSM         int // bytes
	RegistersPerSM         int // 32-bit registers
	RegistersPerBlock      int
	MaxRegistersPerThread  int
	WarpSize               int
	MaxBlocksPerSM         int
	MaxWarpsPerSM          int
}

// archs is the CUDA programming guide's table of limits per compute capability, in ascending
// order (Names relies on it). Adding an architecture is adding a row.
var archs = []GPU{
	{Arch: "sm_70", Major: 7, Minor: 0, Limits: Limits{1024, 49152, 98304, 98304, 65536, 65536, 255, 32, 32, 64}},
	{Arch: "sm_75", Major: 7, Minor: 5, Limits: Limits{1024, 49152, 65536, 65536, 65536, 65536, 255, 32, 16, 32}},
	{Arch: "sm_80", Major: 8, Minor: 0, Limits: Limits{1024, 49152, 166912, 167936, 65536, 65536, 255, 32, 32, 64}},
	{Arch: "sm_86", Major: 8, Minor: 6, Limits: Limits{1024, 49152, 101376, 102400, 65536, 65536, 255, 32, 16, 48}},
	{Arch: "sm_89", Major: 8, Minor: 9, Limits: Limits{1024, 49152, 101376, 102400, 65536, 65536, 255, 32, 24, 48}},
	{Arch: "sm_90", Major: 9, Minor: 0, Limits: Limits{1024, 49152, 232448, 233472, 65536, 65536, 255, 32, 32, 64}},
}

// Names returns the names Lookup and Resolve accept: "auto", "cpu", then the CUDA architectures
// in ascending order.
func Names() []string {
	names := []string{"auto", "cpu"}
	for _, g := range archs {
		names = append(names, g.Arch)
	}
	return names
}

// A Probe describes the local GPU: its architecture's Target from Lookup with the GPU's name and
// driver version filled in. It returns an error saying why there is none (no driver, no GPU).
// Package device cannot talk to a driver without importing one, so the package that can
// (measure/cuda) provides the probe and the command line passes it to Resolve.
type Probe func() (Target, error)

// Resolve returns the target a user named, one of Names (case-sensitive), asking probe about the
// local GPU: "auto" is the GPU probe finds, else the host CPU; an architecture that is the local
// GPU's is probe's target, so that records carry the card's name and driver
// ([Target.Fingerprint]). A nil probe finds no GPU. probe is called only for "auto" and the
// CUDA architectures, never for "cpu".
func Resolve(name string, probe Probe) (Target, error) {
	t, err := Lookup(name)
	if err != nil || probe == nil || name != "auto" && !t.IsCUDA() {
		return t, err
	}
	gpu, gerr := probe()
	if gerr != nil || gpu.GPU == nil {
		return t, nil // no usable GPU: "auto" is the CPU, an architecture the table's
	}
	if name == "auto" || gpu.GPU.Arch == t.GPU.Arch {
		return gpu, nil
	}
	return t, nil
}

// Lookup returns the target with the given name, one of Names (case-sensitive), without asking
// about the local GPU: "cpu" is the host, "sm_XX" the architecture's limits with no card's name
// or driver, and "auto" the host CPU, as Resolve with no GPU. The result shares no memory with the
// package's tables, so callers may modify it.
func Lookup(name string) (Target, error) {
	switch name {
	case "auto", "cpu":
		return Host(), nil
	}
	for _, g := range archs {
		if g.Arch == name {
			return Target{Name: name, GPU: &g}, nil
		}
	}
	return Target{}, fmt.Errorf("device: unknown device %q (known: %s)", name, strings.Join(Names(), ", "))
}
