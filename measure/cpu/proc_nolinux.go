//go:build unix && !linux

package cpu

import "syscall"

// dieWithParent has no portable equivalent outside Linux: a tuner killed
// with SIGKILL leaves its children to finish on their own there.
func dieWithParent(*syscall.SysProcAttr) {}
