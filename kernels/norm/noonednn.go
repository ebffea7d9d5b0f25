//go:build !onednn

package norm

import "github.com/autotune-dev/autotune/kernels"

// onednnBaselines are LayerNorm's baselines of builds with the onednn tag
// (onednn.go); without it there are none.
var onednnBaselines []kernels.Baseline
