//go:build !onednn

package attention

import "github.com/autotune-dev/autotune/kernels"

// onednnBaselines returns the baselines of builds with the onednn tag
// (onednn.go); without it there are none.
func onednnBaselines(causal bool) []kernels.Baseline { return nil }
