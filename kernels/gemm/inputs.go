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

// large16Bound bounds the inputs of f16's large set: sums of K products
// of up to 256, of random signs, stay far below f16's 65504 for the K of
// the tests (a few thousand), where largeBound's would overflow it.
const large16Bound = 4 * inputBound

// inputs are the sets every GEMM candidate (and epilogue) is checked on:
// ±[0.125, 4], and the same times 256 with the tolerance scaled to it
// (times 4 in f16, large16).
var inputs = []kernels.InputSet{
	kernels.Uniform("uniform", 0.125, inputBound),
	forDTypes(withTolerance(kernels.Uniform("large", 0.125*256, largeBound), toleranceFor(largeBound)), dtype.F32, dtype.BF16),
	forDTypes(withTolerance(kernels.Uniform("large16", 0.125*4, large16Bound), toleranceFor(large16Bound)), dtype.F16),
}

func forDTypes(s kernels.InputSet, dts ...dtype.DType) kernels.InputSet {
	s.DTypes = dts
	return s
}

func withTolerance(s kernels.InputSet, tol func(shape []int, dt dtype.DType) (rel, abs float64)) kernels.InputSet {
	s.Tolerance = tol
	return s
}
