//go:build !onednn

package softmax

import "github.com/autotune-dev/autotune/kernels"

// onednnBaselines are the baselines of builds with the onednn tag
// (onednn.go); without it there are none.
var onednnBaselines []kernels.Baseline
