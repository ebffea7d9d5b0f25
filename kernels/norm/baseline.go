package norm

import "github.com/autotune-dev/autotune/kernels"

func (k kind) baselines() []kernels.Baseline { return nil }
