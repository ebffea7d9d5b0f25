package emul

import (
	"context"
	"os"
	"os/exec"
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
