// Package kerneltest holds what the tests of the kernel templates
// (kernels/softmax, kernels/gemm, kernels/attention) share: building
// generated kernels into a throw-away module with the driver (the Go
// program in kerneltest/driver, the same for every template; only a table
// of the kernels is generated), running it and reading its outputs back, comparing them with a
// float64 reference, and checking generated code against golden files
// with -update and a revision guard. A module of arm64 kernels
// (Module.SetArch) is built for arm64 and its driver run through the
// emulator where this machine is not arm64 (package emul).
//
// Like net/http/httptest it is for tests only: import it from _test.go
// files of the template packages, never from production code. Importing it
// registers the -update flag.
package kerneltest
