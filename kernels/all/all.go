// Package all registers every op autotune ships, with its templates, in
// package kernels. Import it for its side effect; adding an op is adding a
// line here.
package all

import (
	_ "github.com/autotune-dev/autotune/kernels/attention"
	_ "github.com/autotune-dev/autotune/kernels/gemm"
	_ "github.com/autotune-dev/autotune/kernels/norm"
	_ "github.com/autotune-dev/autotune/kernels/softmax"
)
