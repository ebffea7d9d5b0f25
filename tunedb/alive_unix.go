//go:build unix

package tunedb

import (
	"errors"
	"syscall"
)

// alive reports whether a process with this id exists (signal 0 checks
// without sending; EPERM means it exists under another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
