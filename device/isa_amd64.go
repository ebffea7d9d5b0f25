package device

import "golang.org/x/sys/cpu"

// hostISA returns the x86 extensions of this CPU.
func hostISA() ISA {
	x := cpu.X86
	avx512 := x.HasAVX512F && x.HasAVX512CD && x.HasAVX512BW && x.HasAVX512DQ && x.HasAVX512VL
	return ISA{
		SSE42:      x.HasSSE42,
		AVX2:       x.HasAVX2,
		FMA:        x.HasFMA,
		AVX512:     avx512,
		AVX512BF16: avx512 && x.HasAVX512BF16,
	}
}
