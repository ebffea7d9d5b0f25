//go:build !libxsmm

package gemm

import "github.com/autotune-dev/autotune/kernels"

// libxsmmBaselines are the baselines of builds with the libxsmm tag
// (libxsmm.go); without it there are none.
var libxsmmBaselines []kernels.Baseline
