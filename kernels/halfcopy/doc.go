// Package halfcopy gives a template bf16 and f16 kernels made of its
// float32 ones: Emitter wraps the template's Go emitter, and a kernel of a
// 16-bit dtype decodes its inputs into pooled float32 copies, runs the
// float32 kernel of the same config and encodes the output
// (codegen/golang.HalfCall). It is its own package because it needs both
// the registry's types and codegen/goasm, whose tests use the registry.
package halfcopy
