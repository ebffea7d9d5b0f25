// Package kerneltest holds what the tests of the kernel templates
// (kernels/softmax, kernels/norm, kernels/gemm, kernels/attention) share: building
// generated kernels into a throw-away module with the driver (the Go
// program in kerneltest/driver, the same for every template; only a table
// of the kernels is generated), running it and reading its outputs back, comparing them with a
// float64 reference, and checking generated code against golden files
// with -update and a revision guard. A module of arm64 kernels
// (Module.SetArch) is built for arm64 and its driver run through the
// emulator where this machine is not arm64 (package emul).
//
// Golden files are each template package's testdata: a config's Go as
// NAME.golden and its assembly as NAME.s.golden, a bf16 or f16 config's
// as NAME_bf16.golden or NAME_f16.golden (Golden.DType), and CUDA's as
// cuda_NAME.golden; a sum file beside them (golden.sum, golden_half.sum,
// ...) records, a line per set, the revision the files belong to and a
// digest of them. go test ./kernels/softmax -run Golden -update (the
// package before -update, which go test does not know) rewrites a
// package's, but refuses, writing nothing, when a set's code changed while
// its revision did not: bump the revision (the package doc says where),
// then run it again.
//
// Like net/http/httptest it is for tests only: import it from _test.go
// files of the template packages, never from production code. Importing it
// registers the -update flag.
package kerneltest
