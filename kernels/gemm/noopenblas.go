//go:build !openblas

package gemm

import "github.com/autotune-dev/autotune/kernels"

// openblasBaselines are the baselines of builds with the openblas tag
// (openblas.go); without it there are none.
var openblasBaselines []kernels.Baseline
