package cpu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// goVersions caches Toolchain's answer per go command: the version of an
// installed toolchain does not change while a tuner runs, and asking costs
// a process.
var goVersions sync.Map // go command path → string

// Toolchain returns the version of the Go toolchain that builds
// candidates, as the tuning database's workload key names it: `go env
// GOVERSION` of Options.GoCommand, run as the builds run it
// (GOTOOLCHAIN=local), such as "go1.26.0". A development build's version,
// "devel go1.27-abcdef Tue Nov 3 ...", becomes "devel-go1.27-abcdef". The
// error wraps ErrNoGo when there is no go command.
func (m *Measurer) Toolchain(ctx context.Context) (string, error) {
	goCmd, err := exec.LookPath(m.opts.GoCommand)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoGo, err)
	}
	if v, ok := goVersions.Load(goCmd); ok {
		return v.(string), nil
	}
	cmd := exec.CommandContext(ctx, goCmd, "env", "GOVERSION")
	cmd.Dir = os.TempDir() // no go.mod of the caller's to consult
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cpu: %s env GOVERSION: %w", goCmd, err)
	}
	v := goVersion(string(out))
	if v == "" {
		return "", fmt.Errorf("cpu: %s env GOVERSION printed nothing", goCmd)
	}
	goVersions.Store(goCmd, v)
	return v, nil
}

// goVersion turns the output of `go env GOVERSION` into one word.
func goVersion(out string) string {
	f := strings.Fields(out)
	switch {
	case len(f) == 0:
		return ""
	case f[0] == "devel" && len(f) > 1:
		return f[0] + "-" + f[1]
	}
	return f[0]
}
