//go:build !openblas

package attention

import "github.com/autotune-dev/autotune/kernels"

// openblasBaselines returns the baselines of builds with the openblas tag
// (openblas.go); without it there are none.
func openblasBaselines(causal bool) []kernels.Baseline { return nil }
