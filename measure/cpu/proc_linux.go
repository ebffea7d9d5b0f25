package cpu

import "syscall"

// dieWithParent asks the kernel to send SIGKILL to the child when the
// thread that started it exits. The Go runtime keeps its threads for the
// life of the process unless a goroutine locked to one exits, and the
// measurer locks none.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
