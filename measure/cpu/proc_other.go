//go:build !unix

package cpu

import "os/exec"

// Without Unix process groups, killing the process is the best there is.

func newGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
