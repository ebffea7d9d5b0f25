package kernels_test

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

func TestVersion(t *testing.T) {
	space := func(vals ...int) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{schedule.Choice("vec", vals...)})
	}
	a := kernels.Version("t-1", space(1, 8))
	for name, other := range map[string]string{
		"revision": kernels.Version("t-2", space(1, 8)),
		"values":   kernels.Version("t-1", space(1, 8, 16)),
		"extra":    kernels.Version("t-1", space(1, 8), "budget=14"),
	} {
		if other == a {
			t.Errorf("changing the %s kept the version %s", name, a)
		}
	}
	if !strings.HasPrefix(a, "t-1-") || len(a) != len("t-1-")+12 || a != kernels.Version("t-1", space(1, 8)) {
		t.Errorf("Version = %q, want t-1- and 12 stable hex digits", a)
	}
}
