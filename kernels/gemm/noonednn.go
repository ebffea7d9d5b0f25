//go:build !onednn

package gemm

import "github.com/autotune-dev/autotune/kernels"

// onednnBaselines returns the baselines of builds with the onednn tag
// (onednn.go); without it there are none.
func onednnBaselines(epilogue) []kernels.Baseline { return nil }
