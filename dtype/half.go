package dtype

import "math"

// Half-precision values are stored as their 16 bits (Go has no 16-bit
// float): kernels of bf16 and f16 read and write []uint16, and convert to
// float32 to compute. These are the conversions every layer agrees on;
// generated packages emit the same algorithms in their own source, since
// they import only the standard library.
//
// Both directions are exact where the value fits, and the narrowing one
// rounds to nearest, ties to even, as VCVTNEPS2BF16 and VCVTPS2PH (with
// rounding control 0) do: a kernel that truncates instead is off by one
// unit in the last place on half of its outputs, which the tolerance of a
// 16-bit output (one unit of roundoff, Epsilon) then catches.

// BF16FromFloat32 returns the bfloat16 bits of the value nearest to x,
// ties to even. Values beyond bfloat16's range become ±Inf; a NaN stays a
// (quiet) NaN.
func BF16FromFloat32(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep the sign and the top of the payload, and make it quiet
		return uint16(b>>16) | 0x0040
	}
	// Adding 0x7fff rounds the dropped half-word's upper half up; the
	// kept half-word's lowest bit breaks the tie to even. A carry out of
	// the mantissa steps the exponent, which is the right answer up to
	// and including overflow to Inf.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToFloat32 returns the value of bfloat16 bits h, exactly.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F16FromFloat32 returns the IEEE 754 binary16 bits of the value nearest
// to x, ties to even: subnormal halves where x is below 2^-14, ±Inf where
// it rounds past 65504, a quiet NaN for a NaN.
func F16FromFloat32(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff && mant != 0: // NaN
		return sign | 0x7e00 | uint16(mant>>13)
	case exp == 0xff: // ±Inf
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // binary16's biased exponent
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		// Subnormal (or zero): the value in units of 2^-24, the
		// smallest subnormal, is the 24-bit significand shifted right by
		// 14-e. Rounding up from the largest subnormal gives 0x400, the
		// smallest normal's encoding, which is right.
		shift := uint(14 - e)
		if shift > 24 {
			return sign // below half the smallest subnormal
		}
		return sign | uint16(roundShift(mant|0x800000, shift))
	}
	// Normal: drop 13 bits of the mantissa; a carry out of the mantissa
	// steps the exponent, up to 0x7c00 (Inf) past 65504.
	return sign | uint16(roundShift(uint32(e)<<23|mant, 13))
}

// roundShift returns v >> s rounded to nearest, ties to even.
func roundShift(v uint32, s uint) uint32 {
	q, rem, half := v>>s, v&(1<<s-1), uint32(1)<<(s-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}

// F16ToFloat32 returns the value of binary16 bits h, exactly.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // ±Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0: // ±0 and subnormals: mant units of 2^-24, exact in float32
		v := float32(mant) * 0x1p-24
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}

// Encode returns the 16 bits that store x as d (bf16 or f16), rounded to
// nearest, ties to even. It panics for a dtype that is not 16 bits wide.
func (d DType) Encode(x float32) uint16 {
	switch d {
	case BF16:
		return BF16FromFloat32(x)
	case F16:
		return F16FromFloat32(x)
	}
	panic("dtype: Encode of " + string(d) + ", which is not 16 bits wide")
}

// Decode returns the value of 16 bits h stored as d (bf16 or f16). It
// panics for a dtype that is not 16 bits wide.
func (d DType) Decode(h uint16) float32 {
	switch d {
	case BF16:
		return BF16ToFloat32(h)
	case F16:
		return F16ToFloat32(h)
	}
	panic("dtype: Decode of " + string(d) + ", which is not 16 bits wide")
}

// Max is the largest finite value d holds: 65504 for f16, which softmax
// logits and attention scores reach in real models, so that input sets
// can probe it.
func (d DType) Max() float32 {
	switch d {
	case BF16:
		return BF16ToFloat32(0x7f7f)
	case F16:
		return 65504
	}
	return math.MaxFloat32
}
