package device

// cpuid executes the CPUID instruction (cpuid_amd64.s).
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// cpuidCaches reads the cache sizes from CPUID for machines whose OS does not publish them.
func cpuidCaches() (l1d, l2, l3 int) { return parseCPUIDCaches(cpuid) }
