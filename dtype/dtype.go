package dtype

import (
	"fmt"
	"strings"
)

// DType is an element type, written as on the command line and in the
// tuning database: "f32".
type DType string

// The element types autotune knows; each op says which of these it
// supports. Kernels store bf16 and f16 as their 16 bits (see Encode) and
// accumulate in float32.
const (
	F32  DType = "f32"  // IEEE 754 binary32
	BF16 DType = "bf16" // bfloat16: binary32's exponent, 8 significant bits
	F16  DType = "f16"  // IEEE 754 binary16: 11 significant bits, at most 65504
)

// Default is the dtype of a workload that names none, and of every record
// written before workloads named one.
const Default = F32

// known lists every DType in the order help texts show them.
var known = []DType{F32, BF16, F16}

// Known returns every DType autotune knows.
func Known() []DType { return append([]DType(nil), known...) }

// Parse reads a dtype as written on the command line; "" is Default.
func Parse(s string) (DType, error) {
	if s == "" {
		return Default, nil
	}
	for _, d := range known {
		if string(d) == s {
			return d, nil
		}
	}
	return "", fmt.Errorf("unknown dtype %q (known: %s)", s, List(known))
}

// Size is the bytes of one element of d, 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F32:
		return 4
	case BF16, F16:
		return 2
	}
	return 0
}

// Epsilon is the unit roundoff of d, half the distance from 1 to the next
// value d holds (2^-24 for f32): the largest relative error of storing a
// value as d. It is 0 for an unknown dtype.
func (d DType) Epsilon() float64 {
	switch d {
	case F32:
		return 0x1p-24
	case BF16:
		return 0x1p-8
	case F16:
		return 0x1p-11
	}
	return 0
}

// AbsEpsilon is the largest absolute error of storing a value below d's
// normal range as d: half its smallest subnormal (2^-25 for f16), where
// Epsilon, a relative bound, no longer holds. It is 0 for an unknown
// dtype.
func (d DType) AbsEpsilon() float64 {
	switch d {
	case F32:
		return 0x1p-150
	case BF16:
		return 0x1p-134
	case F16:
		return 0x1p-25
	}
	return 0
}

// Round returns x rounded to d, as a float32 holds it: the value an input
// of dtype d has once stored, from which references are computed. For f32
// (and an unknown dtype) it is x.
func (d DType) Round(x float32) float32 {
	if d.Size() != 2 {
		return x
	}
	return d.Decode(d.Encode(x))
}

// String returns d as written on the command line.
func (d DType) String() string { return string(d) }

// List joins dtypes for messages: "f32, bf16".
func List(ds []DType) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = string(d)
	}
	return strings.Join(parts, ", ")
}
