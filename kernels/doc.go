// Package kernels is the list of operators autotune knows and the rules for
// their shapes.
//
// Each op is a kind of computation (softmax, gemm, attention) with a fixed
// number of named dimensions. A template for an op (its knob space, emitters,
// float64 reference, FLOP and byte counts) lives in a sub-package of its own,
// kernels/<op>; adding an op means adding that package and one line to the
// list in ops.go. Nothing else in the project switches on op names.
package kernels
