package cpu

import (
	"fmt"

	"github.com/autotune-dev/autotune"
)

// benchModFiles returns the go.mod and go.sum of a bench module whose
// baselines import packages of the modules requires: each required at the
// version autotune's own go.mod gives it, with autotune's checksums (see
// autotune.Require), so that go build verifies what it finds in the module
// cache and needs no network when the module is there. Without
// requirements the module is goMod, as for tuning, and has no go.sum.
func benchModFiles(requires []string) (goModText, goSumText string, err error) {
	if len(requires) == 0 {
		return goMod, "", nil
	}
	req, sum, err := autotune.Require(requires...)
	if err != nil {
		return "", "", fmt.Errorf("cpu: bench: a baseline's module: %w", err)
	}
	return goMod + "\n" + req, sum, nil
}
