// ptx.h: autotune's prelude for compiling generated CUDA to PTX with clang
// without the CUDA toolkit (-nocudainc -nocudalib).
//
// It declares what the templates use, in terms of clang's NVVM builtins,
// so that clang can check the code the way a GPU compiler does (address
// spaces, __shared__ and __device__ rules, intrinsics that need a newer
// architecture). The PTX is never run: the math functions here have the
// GPU's instructions but not libdevice's accuracy.
#ifndef AUTOTUNE_PTX_H
#define AUTOTUNE_PTX_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __grid_constant__ __attribute__((grid_constant))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))

// threadIdx, blockIdx, blockDim, gridDim and warpSize, as clang's own CUDA
// headers define them.
#include <__clang_cuda_builtin_vars.h>

#define EMU_VEC2(T, N, A)                                                       \
	struct __attribute__((aligned(A))) N##2 { T x, y; };                       \
	__device__ static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define EMU_VEC3(T, N)                                                          \
	struct N##3 { T x, y, z; };                                                \
	__device__ static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define EMU_VEC4(T, N, A)                                                       \
	struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                 \
	__device__ static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define EMU_VEC1(T, N)                                                          \
	struct N##1 { T x; };                                                      \
	__device__ static inline N##1 make_##N##1(T x) { return N##1{x}; }
#define EMU_VECS(T, N, A2, A4) EMU_VEC1(T, N) EMU_VEC2(T, N, A2) EMU_VEC3(T, N) EMU_VEC4(T, N, A4)

EMU_VECS(float, float, 8, 16)
EMU_VECS(int, int, 8, 16)
EMU_VECS(unsigned int, uint, 8, 16)
EMU_VECS(signed char, char, 2, 4)
EMU_VECS(unsigned char, uchar, 2, 4)
EMU_VECS(short, short, 4, 8)
EMU_VECS(unsigned short, ushort, 4, 8)
EMU_VECS(long long, longlong, 16, 16)
EMU_VECS(unsigned long long, ulonglong, 16, 16)
EMU_VECS(double, double, 16, 16)

typedef __SIZE_TYPE__ size_t;

#define D __device__ static __inline__ __attribute__((always_inline))

// ---- Synchronisation ----
// __syncthreads is a builtin of clang in CUDA mode.
D int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
D int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
D int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
D void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
D void __threadfence() { __nvvm_membar_gl(); }
D void __threadfence_block() { __nvvm_membar_cta(); }
D void __threadfence_system() { __nvvm_membar_sys(); }
D void __trap() { __builtin_trap(); }
D unsigned __activemask() { unsigned m; asm volatile("activemask.b32 %0;" : "=r"(m)); return m; }

// ---- Warp shuffles: c is ((32 - width) << 8) | clamp, as in shfl.sync ----
#define EMU_SHFL(NAME, KIND, CLAMP)                                                                   \
	D int NAME(unsigned m, int v, int b, int w = 32) { return __nvvm_shfl_sync_##KIND##_i32(m, v, b, ((32 - w) << 8) | CLAMP); } \
	D unsigned NAME(unsigned m, unsigned v, int b, int w = 32) { return (unsigned)NAME(m, (int)v, b, w); } \
	D float NAME(unsigned m, float v, int b, int w = 32) { return __nvvm_shfl_sync_##KIND##_f32(m, v, b, ((32 - w) << 8) | CLAMP); } \
	D long long NAME(unsigned m, long long v, int b, int w = 32) {                                  \
		int lo = NAME(m, (int)(unsigned long long)v, b, w), hi = NAME(m, (int)((unsigned long long)v >> 32), b, w); \
		return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);                  \
	}                                                                                               \
	D unsigned long long NAME(unsigned m, unsigned long long v, int b, int w = 32) { return (unsigned long long)NAME(m, (long long)v, b, w); } \
	D double NAME(unsigned m, double v, int b, int w = 32) { return __longlong_as_double_(NAME(m, __double_as_longlong_(v), b, w)); }
D long long __double_as_longlong_(double x) { return __builtin_bit_cast(long long, x); }
D double __longlong_as_double_(long long x) { return __builtin_bit_cast(double, x); }
EMU_SHFL(__shfl_sync, idx, 0x1f)
EMU_SHFL(__shfl_up_sync, up, 0)
EMU_SHFL(__shfl_down_sync, down, 0x1f)
EMU_SHFL(__shfl_xor_sync, bfly, 0x1f)

// ---- Votes, matches and reductions ----
D int __all_sync(unsigned m, int p) { return __nvvm_vote_all_sync(m, p); }
D int __any_sync(unsigned m, int p) { return __nvvm_vote_any_sync(m, p); }
D unsigned __ballot_sync(unsigned m, int p) { return __nvvm_vote_ballot_sync(m, p); }
D unsigned __match_any_sync(unsigned m, int v) { return __nvvm_match_any_sync_i32(m, v); }
D unsigned __match_any_sync(unsigned m, unsigned v) { return __nvvm_match_any_sync_i32(m, (int)v); }
D unsigned __match_any_sync(unsigned m, float v) { return __nvvm_match_any_sync_i32(m, __builtin_bit_cast(int, v)); }
D unsigned __match_any_sync(unsigned m, long long v) { return __nvvm_match_any_sync_i64(m, v); }
D unsigned __match_all_sync(unsigned m, int v, int *p) { return __nvvm_match_all_sync_i32p(m, v, p); }
D unsigned __match_all_sync(unsigned m, unsigned v, int *p) { return __nvvm_match_all_sync_i32p(m, (int)v, p); }
D unsigned __reduce_add_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_add(v, m); }
D int __reduce_add_sync(unsigned m, int v) { return __nvvm_redux_sync_add(v, m); }
D unsigned __reduce_min_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_umin(v, m); }
D int __reduce_min_sync(unsigned m, int v) { return __nvvm_redux_sync_min(v, m); }
D unsigned __reduce_max_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_umax(v, m); }
D int __reduce_max_sync(unsigned m, int v) { return __nvvm_redux_sync_max(v, m); }
D unsigned __reduce_and_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_and(v, m); }
D unsigned __reduce_or_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_or(v, m); }
D unsigned __reduce_xor_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_xor(v, m); }

// ---- Loads and stores ----
template <class T> D T __ldg(const T *p) { return *p; }
template <class T> D T __ldcg(const T *p) { return *p; }
template <class T> D T __ldcs(const T *p) { return *p; }
template <class T> D void __stcg(T *p, T v) { *p = v; }
template <class T> D void __stcs(T *p, T v) { *p = v; }

// ---- Asynchronous copies (cuda_pipeline.h's primitives; sm_80 and newer) ----
D size_t __cvta_generic_to_shared(const void *p) { return (size_t)(const __attribute__((address_space(3))) void *)p; }
D void __pipeline_memcpy_async(void *dst, const void *src, size_t size, size_t zfill = 0) {
	(void)zfill;
	typedef __attribute__((address_space(3))) void *shared_ptr;
	typedef const __attribute__((address_space(1))) void *global_ptr;
	shared_ptr s = (shared_ptr)dst;
	global_ptr g = (global_ptr)src;
	if (size == 16) __nvvm_cp_async_ca_shared_global_16(s, g);
	else if (size == 8) __nvvm_cp_async_ca_shared_global_8(s, g);
	else __nvvm_cp_async_ca_shared_global_4(s, g);
}
D void __pipeline_commit() { __nvvm_cp_async_commit_group(); }
#define __pipeline_wait_prior(n) __nvvm_cp_async_wait_group(n)

// ---- Atomics ----
D int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
D unsigned atomicAdd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v); }
D unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { return __nvvm_atom_add_gen_ll((long long *)p, (long long)v); }
D float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
D double atomicAdd(double *p, double v) { return __nvvm_atom_add_gen_d(p, v); }
D int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
D unsigned atomicMax(unsigned *p, unsigned v) { return __nvvm_atom_max_gen_ui(p, v); }
D int atomicMin(int *p, int v) { return __nvvm_atom_min_gen_i(p, v); }
D unsigned atomicMin(unsigned *p, unsigned v) { return __nvvm_atom_min_gen_ui(p, v); }
D int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
D unsigned atomicExch(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_xchg_gen_i((int *)p, (int)v); }
D float atomicExch(float *p, float v) { return __builtin_bit_cast(float, __nvvm_atom_xchg_gen_i((int *)p, __builtin_bit_cast(int, v))); }
D int atomicCAS(int *p, int c, int v) { return __nvvm_atom_cas_gen_i(p, c, v); }
D unsigned atomicCAS(unsigned *p, unsigned c, unsigned v) { return (unsigned)__nvvm_atom_cas_gen_i((int *)p, (int)c, (int)v); }
D unsigned long long atomicCAS(unsigned long long *p, unsigned long long c, unsigned long long v) { return (unsigned long long)__nvvm_atom_cas_gen_ll((long long *)p, (long long)c, (long long)v); }

// ---- Math: the GPU's instructions (approximate where the GPU's are) ----
D float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
D float __exp10f(float x) { return __nvvm_ex2_approx_f(x * 3.3219280948873623f); }
D float exp2f(float x) { return __nvvm_ex2_approx_f(x); }
D float expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
D float __logf(float x) { return __nvvm_lg2_approx_f(x) * 0.69314718055994531f; }
D float __log2f(float x) { return __nvvm_lg2_approx_f(x); }
D float logf(float x) { return __nvvm_lg2_approx_f(x) * 0.69314718055994531f; }
D float log2f(float x) { return __nvvm_lg2_approx_f(x); }
D float __powf(float x, float y) { return __nvvm_ex2_approx_f(y * __nvvm_lg2_approx_f(x)); }
D float __sinf(float x) { return __nvvm_sin_approx_f(x); }
D float __cosf(float x) { return __nvvm_cos_approx_f(x); }
D float sinf(float x) { return __nvvm_sin_approx_f(x); }
D float cosf(float x) { return __nvvm_cos_approx_f(x); }
D float tanhf(float x) { float e = __nvvm_ex2_approx_f(2.8853900817779268f * x); return (e - 1.0f) / (e + 1.0f); }
D float __fdividef(float x, float y) { return __nvvm_div_approx_f(x, y); }
D float __frcp_rn(float x) { return __nvvm_rcp_rn_f(x); }
D float __fsqrt_rn(float x) { return __nvvm_sqrt_rn_f(x); }
D float sqrtf(float x) { return __nvvm_sqrt_rn_f(x); }
D double sqrt(double x) { return __nvvm_sqrt_rn_d(x); }
D float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
D float __frsqrt_rn(float x) { return 1.0f / __nvvm_sqrt_rn_f(x); }
D float __fadd_rn(float x, float y) { return __nvvm_add_rn_f(x, y); }
D float __fmul_rn(float x, float y) { return __nvvm_mul_rn_f(x, y); }
D float __fdiv_rn(float x, float y) { return __nvvm_div_rn_f(x, y); }
D float __fsub_rn(float x, float y) { return __nvvm_add_rn_f(x, -y); }
D float fmaf(float x, float y, float z) { return __nvvm_fma_rn_f(x, y, z); }
D float __fmaf_rn(float x, float y, float z) { return __nvvm_fma_rn_f(x, y, z); }
D double fma(double x, double y, double z) { return __nvvm_fma_rn_d(x, y, z); }
D float fmaxf(float x, float y) { return __nvvm_fmax_f(x, y); }
D float fminf(float x, float y) { return __nvvm_fmin_f(x, y); }
D double fmax(double x, double y) { return __nvvm_fmax_d(x, y); }
D double fmin(double x, double y) { return __nvvm_fmin_d(x, y); }
D float fabsf(float x) { return __nvvm_fabs_f(x); }
D double fabs(double x) { return __nvvm_fabs_d(x); }
D float floorf(float x) { return __nvvm_floor_f(x); }
D float ceilf(float x) { return __nvvm_ceil_f(x); }
D float truncf(float x) { return __nvvm_trunc_f(x); }
D float roundf(float x) { return __nvvm_round_f(x); }
D float __saturatef(float x) { return __nvvm_saturate_f(x); }
D int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
D unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
D float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
D float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
D long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
D double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
D int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
D int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
D float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }
D int __popc(unsigned x) { return __builtin_popcount(x); }
D int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
D int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
D int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
D int __ffs(int x) { return __builtin_ffs(x); }
D unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
D int __mulhi(int x, int y) { return __nvvm_mulhi_i(x, y); }
D unsigned __umulhi(unsigned x, unsigned y) { return __nvvm_mulhi_ui(x, y); }
D int __mul24(int x, int y) { return __nvvm_mul24_i(x, y); }
D unsigned __umul24(unsigned x, unsigned y) { return __nvvm_mul24_ui(x, y); }
D int min(int a, int b) { return a < b ? a : b; }
D int max(int a, int b) { return a > b ? a : b; }
D unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
D unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
D long long min(long long a, long long b) { return a < b ? a : b; }
D long long max(long long a, long long b) { return a > b ? a : b; }
D unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
D unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
D float min(float a, float b) { return __nvvm_fmin_f(a, b); }
D float max(float a, float b) { return __nvvm_fmax_f(a, b); }

#undef D
#endif
