// Package dtype names the element types of kernels: how a tensor's
// elements are stored in memory. Accumulation is float32 unless a knob
// says otherwise, and every reference is computed in float64 from the
// inputs as stored.
//
// It is a leaf package, so that every layer (the tuning database's
// workload key, the harness files, the registry of ops, the generated
// packages) names a dtype with one type and parses it with one function.
package dtype
