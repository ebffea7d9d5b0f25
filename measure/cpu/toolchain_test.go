package cpu

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestGoVersion(t *testing.T) {
	for _, tt := range []struct{ out, want string }{
		{"go1.26.0\n", "go1.26.0"},
		{"go1.26rc1 X:simd\n", "go1.26rc1"},
		{"devel go1.27-a1b2c3d4 Tue Nov 3 10:00:00 2026 +0000\n", "devel-go1.27-a1b2c3d4"},
		{"\n", ""},
	} {
		if got := goVersion(tt.out); got != tt.want {
			t.Errorf("goVersion(%q) = %q, want %q", tt.out, got, tt.want)
		}
	}
}

func TestToolchain(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	v, err := New(nil).Toolchain(context.Background())
	if err != nil || !strings.HasPrefix(v, "go") && !strings.HasPrefix(v, "devel-") || strings.ContainsAny(v, " \t\n") {
		t.Errorf("Toolchain() = %q, %v; want one word naming a Go version", v, err)
	}
	if _, err := New(&Options{GoCommand: "no-such-go-command"}).Toolchain(context.Background()); err == nil {
		t.Error("Toolchain() with a missing go command: no error")
	}
}
