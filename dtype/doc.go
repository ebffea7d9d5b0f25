// Package dtype names the element types of kernels: how a tensor's
// elements are stored in memory. Accumulation is float32 unless a knob
// says otherwise, and every reference is computed in float64 from the
// inputs as stored.
//
// f32 is stored as float32; bf16 and f16 as their 16 bits in a uint16,
// since Go has no 16-bit float. Encode and Decode convert, rounding to
// nearest with ties to even as the hardware's conversions do, and Round is
// the value an input has once stored, which is what references see.
//
// It is a leaf package, so that every layer (the tuning database's
// workload key, the harness files, the registry of ops, the generated
// packages) names a dtype with one type and parses it with one function.
package dtype
