//go:build unix

package cpu

import (
	"os/exec"
	"syscall"
)

// newGroup puts the command in a process group of its own, so that
// killGroup also reaches whatever it started (go build's compilers), and,
// where the OS can (Linux), has it killed when the tuner dies, so that a
// tuner killed with SIGKILL leaves no go build or harness running.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// killGroup kills the command's process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
