//go:build !(goexperiment.simd && amd64)

package main

// clearUpper has nothing to clear without archsimd's vector code.
func clearUpper() {}
