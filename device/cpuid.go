package device

// cpuidFunc is the CPUID instruction: the four registers it returns for a leaf and subleaf.
// A function value so that tests can replay the answers of other processors.
type cpuidFunc func(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// CPUID leaves that describe caches. Intel documents its caches in leaf 4 (deterministic cache
// parameters), AMD in 0x8000001D (the same layout, present when the topology extensions are) and,
// on older parts, in 0x80000005 (L1) and 0x80000006 (L2, L3).
const (
	leafCacheParams    = 0x4
	leafExtMax         = 0x80000000
	leafExtFeatures    = 0x80000001
	leafAMDL1          = 0x80000005
	leafAMDL2L3        = 0x80000006
	leafAMDCacheParams = 0x8000001D
	topoExtBit         = 1 << 22 // ECX of leafExtFeatures
	maxCacheSubleaves  = 16      // a real CPU has 4 or 5; a bound against a hypervisor's garbage
)

// parseCPUIDCaches returns the sizes in bytes of the level-1 data cache and the level-2 and
// level-3 unified caches as CPUID describes them, 0 where it does not. The level-3 size is the
// whole cache, shared by the cores, as sysfs reports it.
func parseCPUIDCaches(cpuid cpuidFunc) (l1d, l2, l3 int) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf >= leafCacheParams {
		l1d, l2, l3 = cacheParams(cpuid, leafCacheParams)
	}
	if l1d != 0 || l2 != 0 || l3 != 0 {
		return l1d, l2, l3
	}
	maxExt, _, _, _ := cpuid(leafExtMax, 0)
	if maxExt >= leafAMDCacheParams {
		if _, _, ecx, _ := cpuid(leafExtFeatures, 0); ecx&topoExtBit != 0 {
			l1d, l2, l3 = cacheParams(cpuid, leafAMDCacheParams)
		}
	}
	if l1d != 0 || l2 != 0 || l3 != 0 {
		return l1d, l2, l3
	}
	// The legacy AMD leaves: L1d KiB in ECX[31:24] of 0x80000005, L2 KiB in ECX[31:16] and L3 in
	// units of 512 KiB in EDX[31:18] of 0x80000006.
	if maxExt >= leafAMDL1 {
		_, _, ecx, _ := cpuid(leafAMDL1, 0)
		l1d = int(ecx>>24) << 10
	}
	if maxExt >= leafAMDL2L3 {
		_, _, ecx, edx := cpuid(leafAMDL2L3, 0)
		l2 = int(ecx>>16) << 10
		l3 = int(edx>>18) * 512 << 10
	}
	return l1d, l2, l3
}

// cacheParams walks the subleaves of a deterministic-cache-parameters leaf (Intel's 4, AMD's
// 0x8000001D) until the null cache type. Each subleaf gives a cache's type and level in EAX and
// its geometry in EBX (line size, partitions, ways) and ECX (sets), all stored minus one.
func cacheParams(cpuid cpuidFunc, leaf uint32) (l1d, l2, l3 int) {
	for sub := uint32(0); sub < maxCacheSubleaves; sub++ {
		eax, ebx, ecx, _ := cpuid(leaf, sub)
		typ, level := eax&0x1f, (eax>>5)&0x7
		if typ == 0 {
			break
		}
		line := int(ebx&0xfff) + 1
		partitions := int((ebx>>12)&0x3ff) + 1
		ways := int(ebx>>22) + 1
		sets := int(ecx) + 1
		size := line * partitions * ways * sets
		var dst *int
		switch {
		case level == 1 && typ == 1: // data
			dst = &l1d
		case level == 2 && typ == 3: // unified
			dst = &l2
		case level == 3 && typ == 3:
			dst = &l3
		default:
			continue
		}
		if *dst == 0 {
			*dst = size
		}
	}
	return l1d, l2, l3
}
