package emul

import (
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
