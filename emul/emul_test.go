package emul

import (
	"runtime"
	"slices"
	"testing"
)

func TestCommand(t *testing.T) {
	for _, tt := range []struct {
		env  string
		want []string
	}{
		{"", []string{"/bin/prog", "-x", "y"}},
		{"  ", []string{"/bin/prog", "-x", "y"}},
		{"qemu-aarch64-static", []string{"qemu-aarch64-static", "/bin/prog", "-x", "y"}},
		{"qemu-aarch64 -cpu max,sve=off", []string{"qemu-aarch64", "-cpu", "max,sve=off", "/bin/prog", "-x", "y"}},
	} {
		t.Setenv(Env, tt.env)
		cmd := Command("/bin/prog", "-x", "y")
		if !slices.Equal(cmd.Args, tt.want) {
			t.Errorf("%s=%q: Args = %q, want %q", Env, tt.env, cmd.Args, tt.want)
		}
	}
}

func TestFor(t *testing.T) {
	t.Setenv(Env, "")
	if w, ok := For(runtime.GOARCH); !ok || len(w) != 0 {
		t.Errorf("For(%s) = %q, %v, want nothing, true", runtime.GOARCH, w, ok)
	}
	if w, ok := For("mips"); ok {
		t.Errorf("For(mips) = %q, true, want false", w)
	}
	t.Setenv(Env, "emu -x")
	if w, ok := For("mips"); !ok || !slices.Equal(w, []string{"emu", "-x"}) {
		t.Errorf("For(mips) with %s set = %q, %v", Env, w, ok)
	}
}
