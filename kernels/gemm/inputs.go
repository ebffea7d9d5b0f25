package gemm

import (
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// largeBound bounds the inputs of the large set: 256 times inputBound, so
// that products reach 2^20 and sums of K of them, of random signs, cancel
// to a small fraction of their terms, and a kernel that loses precision
// (a narrower accumulator, an absolute epsilon) shows.
const largeBound = 256 * inputBound

// inputs are the sets every GEMM candidate (and epilogue) is checked on:
// ±[0.125, 4], and the same times 256 with the tolerance scaled to it.
var inputs = []kernels.InputSet{
	kernels.Uniform("uniform", 0.125, inputBound),
	withTolerance(kernels.Uniform("large", 0.125*256, largeBound), toleranceFor(largeBound)),
}

func withTolerance(s kernels.InputSet, tol func(shape []int, dt dtype.DType) (rel, abs float64)) kernels.InputSet {
	s.Tolerance = tol
	return s
}
