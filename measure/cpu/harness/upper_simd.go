//go:build goexperiment.simd && amd64

package main

import "simd/archsimd"

// clearUpper clears the upper halves of the vector registers (VZEROUPPER).
// archsimd code returns with them dirty, and on many x86 CPUs the scalar
// SSE code that runs next on the thread then pays a penalty on every
// instruction: a plain-Go baseline timed after a vector kernel ran 2–10×
// slower. The harness clears them between entries, outside the timing.
func clearUpper() { archsimd.ClearAVXUpperBits() }
