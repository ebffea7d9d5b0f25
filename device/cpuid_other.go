//go:build !amd64

package device

// cpuidCaches has no CPUID to ask outside amd64.
func cpuidCaches() (l1d, l2, l3 int) { return 0, 0, 0 }
