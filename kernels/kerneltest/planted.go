package kerneltest

import "testing"

// An ErrorCounter is a testing.TB whose Errorf only counts (and logs, marked
// expected), so that a test of a planted bug can run a check and see that
// it fails.
type ErrorCounter struct {
	testing.TB
	Errors int
}

// Errorf counts the error and logs it.
func (r *ErrorCounter) Errorf(format string, args ...any) {
	r.Errors++
	r.Logf("(expected) "+format, args...)
}
