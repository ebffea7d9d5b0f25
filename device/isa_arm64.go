package device

import (
	"os"

	"golang.org/x/sys/cpu"
)

// hostISA returns the arm64 extensions of this CPU: golang.org/x/sys/cpu's
// reading of the hardware capabilities, and, for what it does not expose
// (bf16), the kernel's list in /proc/cpuinfo.
func hostISA() ISA {
	a := cpu.ARM64
	isa := ISA{ASIMD: a.HasASIMD, FP16: a.HasASIMDHP, I8MM: a.HasI8MM}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		isa.BF16 = hasFeature(f, "bf16")
		f.Close()
	}
	if a.HasSVE {
		isa.SVEBits = sveBits()
	}
	return isa
}
