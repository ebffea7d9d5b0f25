//go:build !amd64 && !arm64

package device

// hostISA returns no extensions: kernels have vector code for amd64 and
// arm64 only.
func hostISA() ISA { return ISA{} }
