//go:build !linux

package device

// sveBits returns 0: only Linux says the SVE vector length here.
func sveBits() int { return 0 }
