package cuda

import (
	"fmt"

	"github.com/autotune-dev/autotune/dtype"
)

// HalfHelpers returns the device functions that convert between float and
// the 16-bit dtype dt (bf16 or f16), whose elements generated kernels keep
// as their bits in unsigned short, so that no cuda_fp16.h or cuda_bf16.h
// is needed; it panics for another dtype. For dt "bf16" the functions are
//
//	float at_bf16_to_float(unsigned short)        exact
//	unsigned short at_float_to_bf16(float)        nearest, ties to even
//	float2 at_bf16x2_to_float2(unsigned int)      the low half is .x
//	unsigned int at_float2_to_bf16x2(float lo, float hi)
//
// and likewise at_f16_*. The pair forms convert two elements of a 32-bit
// word, as a vectorised load (uint, uint2, uint4) holds them.
//
// On a GPU compiler they are the cvt instructions (cvt.rn.bf16.f32 and
// the pair forms need sm_80; before it, bf16 is narrowed by the bit
// arithmetic). Under autotune's emulator (AUTOTUNE_EMU), and wherever
// __CUDA_ARCH__ is not defined, they are the bit arithmetic of package
// dtype, bit for bit: nearest, ties to even, overflow to ±Inf, f16
// subnormals, NaN kept a quiet NaN. The GPU's cvt gives a canonical NaN
// instead, which is still a NaN.
func HalfHelpers(dt dtype.DType) string {
	switch dt {
	case dtype.BF16:
		return fmt.Sprintf(halfCommon, "bf16") + bf16Helpers
	case dtype.F16:
		return fmt.Sprintf(halfCommon, "f16") + f16Helpers
	}
	panic(fmt.Sprintf("cuda: HalfHelpers of %s, not a 16-bit dtype", dt))
}

// halfCommon opens the helpers: the guards and the pair forms, written in
// terms of the scalar ones where the architecture has no pair instruction.
const halfCommon = `// Conversions between float and %[1]s kept as its bits.
#if defined(__CUDA_ARCH__) && !defined(AUTOTUNE_EMU)
#define AT_HALF_GPU 1
#if __CUDA_ARCH__ >= 800
#define AT_HALF_GPU_SM80 1
#endif
#endif

// The value in units of 2^s, rounded to nearest, ties to even.
__device__ __forceinline__ unsigned at_rshift_rne(unsigned v, unsigned s) {
	const unsigned q = v >> s, rem = v & ((1u << s) - 1u), half = 1u << (s - 1u);
	return q + (rem > half || (rem == half && (q & 1u)) ? 1u : 0u);
}
`

const bf16Helpers = `
__device__ __forceinline__ float at_bf16_to_float(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

__device__ __forceinline__ unsigned short at_float_to_bf16(float x) {
#ifdef AT_HALF_GPU_SM80
	unsigned short h;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
	return h;
#else
	unsigned b = __float_as_uint(x);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40u); // a quiet NaN
	// A carry out of the mantissa steps the exponent, up to Inf.
	b += 0x7fffu + ((b >> 16) & 1u);
	return (unsigned short)(b >> 16);
#endif
}

__device__ __forceinline__ float2 at_bf16x2_to_float2(unsigned w) {
	return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
}

__device__ __forceinline__ unsigned at_float2_to_bf16x2(float lo, float hi) {
#ifdef AT_HALF_GPU_SM80
	unsigned w;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
	return w;
#else
	return (unsigned)at_float_to_bf16(lo) | (unsigned)at_float_to_bf16(hi) << 16;
#endif
}
`

const f16Helpers = `
__device__ __forceinline__ float at_f16_to_float(unsigned short h) {
#ifdef AT_HALF_GPU
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
#else
	const unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
	if (exp == 0x1fu) return __uint_as_float(sign | 0x7f800000u | mant << 13); // ±Inf, NaN
	if (exp == 0u) { // ±0 and subnormals, mant units of 2^-24
		const float v = (float)mant * 0x1p-24f;
		return sign ? -v : v;
	}
	return __uint_as_float(sign | (exp + 112u) << 23 | mant << 13);
#endif
}

__device__ __forceinline__ unsigned short at_float_to_f16(float x) {
#ifdef AT_HALF_GPU
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
	return h;
#else
	const unsigned b = __float_as_uint(x), sign = (b >> 16) & 0x8000u, exp = (b >> 23) & 0xffu, mant = b & 0x7fffffu;
	if (exp == 0xffu) return (unsigned short)(sign | (mant ? 0x7e00u | mant >> 13 : 0x7c00u));
	const int e = (int)exp - 112; // binary16's biased exponent
	if (e >= 0x1f) return (unsigned short)(sign | 0x7c00u);
	if (e <= 0) { // subnormal or zero; rounding up the largest subnormal gives the smallest normal
		const unsigned s = (unsigned)(14 - e);
		return (unsigned short)(s > 24u ? sign : sign | at_rshift_rne(mant | 0x800000u, s));
	}
	// A carry out of the mantissa steps the exponent, up to Inf past 65504.
	return (unsigned short)(sign | at_rshift_rne((unsigned)e << 23 | mant, 13u));
#endif
}

__device__ __forceinline__ float2 at_f16x2_to_float2(unsigned w) {
	return make_float2(at_f16_to_float((unsigned short)(w & 0xffffu)), at_f16_to_float((unsigned short)(w >> 16)));
}

__device__ __forceinline__ unsigned at_float2_to_f16x2(float lo, float hi) {
#ifdef AT_HALF_GPU_SM80
	unsigned w;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
	return w;
#else
	return (unsigned)at_float_to_f16(lo) | (unsigned)at_float_to_f16(hi) << 16;
#endif
}
`
