//go:build unix

package measure

import (
	"errors"
	"syscall"
)

// running reports whether a process with the given PID exists. A process
// of another user answers EPERM: it exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
