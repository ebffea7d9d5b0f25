// Package cuda holds what the CUDA templates (kernels/*/cuda.go) share to
// write CUDA C source: Writer, which writes it a line at a time indented
// by the blocks it opens; CPAsyncHelpers, the device functions of an
// asynchronous copy from global to shared memory; HalfHelpers, the
// conversions between float and bf16 or f16 kept as their bits; and
// MMAHelpers, ldmatrix and mma.sync m16n8k16 on tensor cores.
package cuda
