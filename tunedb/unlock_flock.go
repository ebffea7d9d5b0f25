//go:build !windows && !plan9 && !solaris && !aix && !android

package tunedb

import (
	"os"
	"syscall"
)

// unlock releases the flock bbolt took on f. Closing f alone does not: the
// mapping that a panic inside bbolt.Open leaves behind keeps the open file
// description, and with it the lock, alive.
func unlock(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
