package kerneltest

import (
	"errors"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// CheckConstraint parses config in space and checks that it is valid when
// want is "", or that the first constraint it violates is want.
func CheckConstraint(t *testing.T, space *schedule.Space, config, want string) {
	t.Helper()
	cfg, err := space.Parse(config)
	if err != nil {
		t.Fatal(err)
	}
	err = space.Check(cfg)
	var ce *schedule.ConstraintError
	switch {
	case want == "" && err != nil:
		t.Errorf("Check(%s) = %v, want valid", cfg, err)
	case want != "" && !errors.As(err, &ce):
		t.Errorf("Check(%s) = %v, want a violation of %s", cfg, err, want)
	case want != "" && ce.Constraint != want:
		t.Errorf("Check(%s) violates %s, want %s", cfg, ce.Constraint, want)
	}
}
