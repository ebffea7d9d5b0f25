package emul

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Env is the environment variable that names the wrapper.
const Env = "AUTOTUNE_EXEC_WRAPPER"

// Wrapper returns the wrapper's command line, empty when Env is unset or
// blank.
func Wrapper() []string { return strings.Fields(os.Getenv(Env)) }

// Command is exec.Command for a program autotune built: through the
// wrapper when there is one.
func Command(name string, args ...string) *exec.Cmd {
	return CommandContext(context.Background(), name, args...)
}

// CommandContext is exec.CommandContext for a program autotune built:
// through the wrapper when there is one.
func CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	if w := Wrapper(); len(w) > 0 {
		return exec.CommandContext(ctx, w[0], append(append(w[1:], name), args...)...)
	}
	return exec.CommandContext(ctx, name, args...)
}

// qemu names the user-mode emulators of Debian's qemu-user-static by
// GOARCH.
var qemu = map[string]string{"arm64": "qemu-aarch64-static", "amd64": "qemu-x86_64-static"}

// For returns the command line that runs a program built for goarch on
// this machine: the wrapper when Env sets one; nothing for this process's
// own architecture; else qemu-user-static's emulator of goarch when it is
// on PATH. ok is false when there is none: such a program cannot run
// here.
func For(goarch string) (wrapper []string, ok bool) {
	if w := Wrapper(); len(w) > 0 {
		return w, true
	}
	if goarch == runtime.GOARCH {
		return nil, true
	}
	if path, err := exec.LookPath(qemu[goarch]); err == nil && qemu[goarch] != "" {
		return []string{path}, true
	}
	return nil, false
}
