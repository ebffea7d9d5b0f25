package device

import "golang.org/x/sys/unix"

// sveBits returns the SVE vector length of this thread in bits, which
// Linux reports through prctl (it may differ from the hardware's maximum
// when the length was lowered), or 0 when it does not say.
func sveBits() int {
	vl, err := unix.PrctlRetInt(unix.PR_SVE_GET_VL, 0, 0, 0, 0)
	if err != nil {
		return 0
	}
	return 8 * (vl & unix.PR_SVE_VL_LEN_MASK)
}
