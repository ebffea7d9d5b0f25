// emu.h: autotune's CPU emulation of the CUDA execution model.
//
// A generated .cu file compiles with this header as ordinary C++ (g++ or
// clang++) and runs on the CPU. Every thread of a block is a fiber with a
// stack of its own; fibers switch only at the synchronising intrinsics
// (__syncthreads, the warp collectives), so code between two of them runs
// without interruption, and the order in which the scheduler runs the
// fibers of a block (and the blocks of the grid) is a parameter of the
// launch: a kernel whose result depends on it has a race. Static __shared__
// variables live in a section of their own and the dynamic shared memory in
// a mapping between guard pages; both are filled with NaN before each block.
// A barrier some threads never reach, warp collectives that do not meet,
// and a deadlock are reported, never waited for.
//
// The build (package emu) rewrites `extern __shared__ T name[];` into a
// declaration bound to the dynamic arena and appends EMU_ENTRY(name), which
// exports autotune_emu_launch, the void** entry point Go calls.
#ifndef AUTOTUNE_EMU_H
#define AUTOTUNE_EMU_H

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <type_traits>
#include <utility>

#if !defined(__x86_64__) || defined(EMU_UCONTEXT)
#include <ucontext.h>
#define EMU_USE_UCONTEXT 1
#endif

// ---- Declaration specifiers --------------------------------------------

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __managed__
#define __grid_constant__
// Every static __shared__ variable is a function-local static in this
// section, which the launch poisons before each block.
#define __shared__ static __attribute__((section("emu_shared"), aligned(16)))

// ---- Vector types --------------------------------------------------------

#define EMU_VEC2(T, N, A)                                                       \
	struct __attribute__((aligned(A))) N##2 { T x, y; };                       \
	static inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }
#define EMU_VEC3(T, N)                                                          \
	struct N##3 { T x, y, z; };                                                \
	static inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define EMU_VEC4(T, N, A)                                                       \
	struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                 \
	static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define EMU_VEC1(T, N)                                                          \
	struct N##1 { T x; };                                                      \
	static inline N##1 make_##N##1(T x) { return N##1{x}; }
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

struct dim3 {
	unsigned int x, y, z;
	constexpr dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
	constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
	constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---- The emulator's state -----------------------------------------------

namespace emu {

enum State { READY, AT_BARRIER, AT_WARP, DONE };

enum WarpOp { SHFL_IDX, SHFL_UP, SHFL_DOWN, SHFL_XOR, VOTE_ALL, VOTE_ANY, VOTE_BALLOT, SYNCWARP,
	MATCH_ANY, MATCH_ALL, REDUCE_ADD, REDUCE_MIN, REDUCE_MAX, REDUCE_AND, REDUCE_OR, REDUCE_XOR };

static const char *const warp_op_names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
	"__shfl_xor_sync", "__all_sync", "__any_sync", "__ballot_sync", "__syncwarp", "__match_any_sync",
	"__match_all_sync", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
	"__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"};

// A copy queued by __pipeline_memcpy_async, done at __pipeline_wait_prior.
struct Copy {
	void *dst;
	const void *src;
	size_t size, zfill;
	int group;
};

struct Fiber {
#ifdef EMU_USE_UCONTEXT
	ucontext_t ctx;
#else
	void *sp;
#endif
	uint3 tid;
	int linear, warp, lane;
	State state;
	int line;         // source line of the synchronisation the fiber waits at
	const char *what; // its name
	// A pending warp collective: its operation, mask, the lane's value
	// (up to 8 bytes), operand (source lane, delta or lane mask) and width;
	// the scheduler leaves the result in result.
	WarpOp op;
	unsigned mask;
	uint64_t value;
	int size, operand, width;
	uint64_t result;
	int pred;         // __syncthreads_count and friends
	Copy *copies;     // queued cp.async copies
	int ncopies, capcopies, group;
};

struct Region {
	const char *name;
	uintptr_t lo, hi;
};

struct Global {
	Fiber *cur;
	Fiber *fibers;
	int nthreads;
	uint3 block;
	dim3 bdim, gdim;
#ifdef EMU_USE_UCONTEXT
	ucontext_t sched;
#else
	void *sched_sp;
#endif
	char *stacks;
	size_t stack_size, stacks_bytes;
	void (*thunk)(void *kernel, void **args);
	void *kernel;
	void **args;
	bool failed;
	char msg[4096];
	bool float_atomics;
	// Dynamic shared memory: a mapping of dyn_map_bytes at dyn_map, its
	// first and last pages without access; dyn points at the arena.
	char *dyn_map;
	size_t dyn_map_bytes;
	char *dyn;
	size_t dyn_bytes;
	Region regions[64];
	int nregions;
};

static Global g;

} // namespace emu

extern "C" char __start_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_emu_shared[] __attribute__((weak, visibility("hidden")));
// Keeps the section alive, and the start and stop symbols defined, in a
// kernel without static shared memory.
__attribute__((section("emu_shared"), used, aligned(16))) static float emu_shared_anchor[4];

// ---- Built-in variables ----------------------------------------------------

#define threadIdx (static_cast<const uint3 &>(::emu::g.cur->tid))
#define blockIdx (static_cast<const uint3 &>(::emu::g.block))
#define blockDim (static_cast<const dim3 &>(::emu::g.bdim))
#define gridDim (static_cast<const dim3 &>(::emu::g.gdim))
#define warpSize 32

// ---- Fibers ----------------------------------------------------------------

namespace emu {

#ifndef EMU_USE_UCONTEXT
// emu_switch saves the callee-saved registers, MXCSR and the x87 control
// word on the current stack, stores the stack pointer in *save and resumes
// the context whose stack pointer is next.
extern "C" void emu_switch(void **save, void *next);
asm(R"(
	.text
	.p2align 4
	.type emu_switch,@function
	.hidden emu_switch
emu_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_switch, .-emu_switch
)");
#endif

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// to_scheduler suspends the current fiber.
static void to_scheduler() {
	Fiber *f = g.cur;
#ifdef EMU_USE_UCONTEXT
	swapcontext(&f->ctx, &g.sched);
#else
	emu_switch(&f->sp, g.sched_sp);
#endif
}

static void finish_copies(Fiber *f, int pending, bool all);

static void fiber_main() {
	Fiber *f = g.cur;
	g.thunk(g.kernel, g.args);
	finish_copies(f, 0, true);
	f->state = DONE;
	to_scheduler();
	abort(); // a finished fiber is never resumed
}

#ifndef EMU_USE_UCONTEXT
extern "C" void emu_fiber_start() { fiber_main(); }
#endif

// start prepares fiber f to run the kernel from the beginning on stack.
static void start(Fiber *f, char *stack, size_t size) {
#ifdef EMU_USE_UCONTEXT
	getcontext(&f->ctx);
	f->ctx.uc_stack.ss_sp = stack;
	f->ctx.uc_stack.ss_size = size;
	f->ctx.uc_link = nullptr;
	makecontext(&f->ctx, (void (*)())fiber_main, 0);
#else
	uintptr_t top = ((uintptr_t)(stack + size)) & ~(uintptr_t)15;
	void **sp = (void **)top;
	*--sp = nullptr;                     // emu_fiber_start's return address: none
	*--sp = (void *)emu_fiber_start;     // where emu_switch's ret goes
	for (int i = 0; i < 6; i++) *--sp = nullptr; // rbp rbx r12-r15
	uint32_t csr[2] = {0x1F80, 0x037F};  // default MXCSR and x87 control word
	*--sp = nullptr;
	memcpy(sp, csr, 8);
	f->sp = sp;
#endif
}

// resume runs f until it suspends itself.
static void resume(Fiber *f) {
	g.cur = f;
#ifdef EMU_USE_UCONTEXT
	swapcontext(&g.sched, &f->ctx);
#else
	emu_switch(&g.sched_sp, f->sp);
#endif
	g.cur = nullptr;
}

static void append(const char *fmt, va_list ap) {
	size_t n = strlen(g.msg);
	if (n < sizeof g.msg - 1) vsnprintf(g.msg + n, sizeof g.msg - n, fmt, ap);
}

static void appendf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void appendf(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	append(fmt, ap);
	va_end(ap);
}

// fail records what went wrong; from a fiber it also suspends the fiber for
// good, and the launch stops.
static void fail(const char *fmt, ...) {
	if (!g.failed) {
		g.failed = true;
		g.msg[0] = 0;
		va_list ap;
		va_start(ap, fmt);
		append(fmt, ap);
		va_end(ap);
	}
	if (g.cur) {
		to_scheduler();
		abort();
	}
}

// ---- Synchronisation -------------------------------------------------------

static void wait_barrier(int pred, int line, const char *what) {
	Fiber *f = g.cur;
	f->state = AT_BARRIER;
	f->pred = pred;
	f->line = line;
	f->what = what;
	to_scheduler();
}

static uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int size, int operand, int width, int line) {
	Fiber *f = g.cur;
	if (!(mask >> f->lane & 1))
		fail("thread %u (warp %d, lane %d) calls %s at line %d with mask 0x%08x, which leaves out its own lane",
			f->linear, f->warp, f->lane, warp_op_names[op], line, mask);
	f->state = AT_WARP;
	f->op = op;
	f->mask = mask;
	f->value = value;
	f->size = size;
	f->operand = operand;
	f->width = width;
	f->line = line;
	f->what = warp_op_names[op];
	to_scheduler();
	return f->result;
}

} // namespace emu

static inline void __syncthreads(int line = __builtin_LINE()) { emu::wait_barrier(0, line, "__syncthreads"); }
static inline int __syncthreads_count(int pred, int line = __builtin_LINE()) {
	emu::wait_barrier(pred != 0, line, "__syncthreads_count");
	return emu::g.cur->pred;
}
static inline int __syncthreads_and(int pred, int line = __builtin_LINE()) {
	emu::wait_barrier(pred != 0, line, "__syncthreads_and");
	return emu::g.cur->pred == emu::g.nthreads;
}
static inline int __syncthreads_or(int pred, int line = __builtin_LINE()) {
	emu::wait_barrier(pred != 0, line, "__syncthreads_or");
	return emu::g.cur->pred != 0;
}

static inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
	emu::warp_collective(emu::SYNCWARP, mask, 0, 0, 0, 32, line);
}

template <class T>
static inline T emu_shfl(emu::WarpOp op, unsigned mask, T var, int operand, int width, int line) {
	static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffles move values of up to 8 bytes");
	uint64_t v = 0;
	memcpy(&v, &var, sizeof(T));
	uint64_t r = emu::warp_collective(op, mask, v, sizeof(T), operand, width, line);
	T out;
	memcpy(&out, &r, sizeof(T));
	return out;
}

template <class T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, int line = __builtin_LINE()) {
	return emu_shfl(emu::SHFL_IDX, mask, var, srcLane, width, line);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE()) {
	return emu_shfl(emu::SHFL_UP, mask, var, (int)delta, width, line);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE()) {
	return emu_shfl(emu::SHFL_DOWN, mask, var, (int)delta, width, line);
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, int line = __builtin_LINE()) {
	return emu_shfl(emu::SHFL_XOR, mask, var, laneMask, width, line);
}

static inline int __all_sync(unsigned mask, int pred, int line = __builtin_LINE()) {
	return (int)emu::warp_collective(emu::VOTE_ALL, mask, pred != 0, 4, 0, 32, line);
}
static inline int __any_sync(unsigned mask, int pred, int line = __builtin_LINE()) {
	return (int)emu::warp_collective(emu::VOTE_ANY, mask, pred != 0, 4, 0, 32, line);
}
static inline unsigned __ballot_sync(unsigned mask, int pred, int line = __builtin_LINE()) {
	return (unsigned)emu::warp_collective(emu::VOTE_BALLOT, mask, pred != 0, 4, 0, 32, line);
}
template <class T>
static inline unsigned __match_any_sync(unsigned mask, T value, int line = __builtin_LINE()) {
	uint64_t v = 0;
	memcpy(&v, &value, sizeof(T));
	return (unsigned)emu::warp_collective(emu::MATCH_ANY, mask, v, sizeof(T), 0, 32, line);
}
template <class T>
static inline unsigned __match_all_sync(unsigned mask, T value, int *pred, int line = __builtin_LINE()) {
	uint64_t v = 0;
	memcpy(&v, &value, sizeof(T));
	unsigned r = (unsigned)emu::warp_collective(emu::MATCH_ALL, mask, v, sizeof(T), 0, 32, line);
	*pred = r != 0;
	return r;
}
#define EMU_REDUCE(NAME, OP, T)                                                                    \
	static inline T NAME(unsigned mask, T value, int line = __builtin_LINE()) {                      \
		return (T)emu::warp_collective(OP, mask, (uint32_t)value, 4, std::is_signed<T>::value, 32, line); \
	}
EMU_REDUCE(__reduce_add_sync, emu::REDUCE_ADD, unsigned)
EMU_REDUCE(__reduce_add_sync, emu::REDUCE_ADD, int)
EMU_REDUCE(__reduce_min_sync, emu::REDUCE_MIN, unsigned)
EMU_REDUCE(__reduce_min_sync, emu::REDUCE_MIN, int)
EMU_REDUCE(__reduce_max_sync, emu::REDUCE_MAX, unsigned)
EMU_REDUCE(__reduce_max_sync, emu::REDUCE_MAX, int)
EMU_REDUCE(__reduce_and_sync, emu::REDUCE_AND, unsigned)
EMU_REDUCE(__reduce_or_sync, emu::REDUCE_OR, unsigned)
EMU_REDUCE(__reduce_xor_sync, emu::REDUCE_XOR, unsigned)

// __activemask is the lanes of the warp that have not exited: fibers do not
// diverge the way a warp does, so this is an upper bound of the real mask.
static inline unsigned __activemask() {
	emu::Fiber *f = emu::g.cur;
	unsigned m = 0;
	for (int l = 0; l < 32; l++) {
		int i = f->warp * 32 + l;
		if (i < emu::g.nthreads && emu::g.fibers[i].state != emu::DONE) m |= 1u << l;
	}
	return m;
}

static inline void __threadfence() {}
static inline void __threadfence_block() {}
static inline void __threadfence_system() {}
[[noreturn]] static inline void __trap() {
	emu::Fiber *f = emu::g.cur;
	emu::fail("thread %u of block (%u,%u,%u) called __trap", f->linear, emu::g.block.x, emu::g.block.y, emu::g.block.z);
	abort();
}
static inline void __nanosleep(unsigned) {}
template <class T>
static inline T __ldg(const T *p) { return *p; }
template <class T>
static inline T __ldcg(const T *p) { return *p; }
template <class T>
static inline T __ldcs(const T *p) { return *p; }
template <class T>
static inline void __stcg(T *p, T v) { *p = v; }
template <class T>
static inline void __stcs(T *p, T v) { *p = v; }

// ---- Asynchronous copies (cuda_pipeline.h's primitives) -----------------------
// A copy is queued and done when __pipeline_wait_prior lets its group
// complete (or the thread exits), so code that reads the destination too
// early reads the NaN the shared memory was filled with.

namespace emu {
// finish_copies does the queued copies of the groups committed before the
// last pending ones, or all of them.
static void finish_copies(Fiber *f, int pending, bool all) {
	int n = 0;
	for (int i = 0; i < f->ncopies; i++) {
		Copy &c = f->copies[i];
		if (all || c.group < f->group - pending) {
			memcpy(c.dst, c.src, c.size - c.zfill);
			memset((char *)c.dst + (c.size - c.zfill), 0, c.zfill);
		} else {
			f->copies[n++] = c;
		}
	}
	f->ncopies = n;
}
} // namespace emu

static inline void __pipeline_memcpy_async(void *dst, const void *src, size_t size_and_align, size_t zfill = 0) {
	emu::Fiber *f = emu::g.cur;
	if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16)
		emu::fail("__pipeline_memcpy_async copies 4, 8 or 16 bytes, not %zu", size_and_align);
	if ((uintptr_t)dst % size_and_align || (uintptr_t)src % size_and_align)
		emu::fail("__pipeline_memcpy_async of %zu bytes from %p to %p: both must be aligned to the size",
			size_and_align, src, dst);
	if (f->ncopies == f->capcopies) {
		f->capcopies = f->capcopies ? 2 * f->capcopies : 16;
		f->copies = (emu::Copy *)realloc(f->copies, f->capcopies * sizeof(emu::Copy));
	}
	f->copies[f->ncopies++] = emu::Copy{dst, src, size_and_align, zfill, f->group};
}
static inline void __pipeline_commit() { emu::g.cur->group++; }
static inline void __pipeline_wait_prior(size_t n) { emu::finish_copies(emu::g.cur, (int)n, false); }
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }

// ---- Tensor cores: ldmatrix and mma.sync m16n8k16 ---------------------------
// Both are warp collectives: every lane deposits its operands (its row
// address, its fragment registers) in its warp's exchange area, the warp
// meets at a __syncwarp, each lane reads what the PTX ISA's fragment layout
// gives it, and the warp meets again before the area is reused. A kernel
// that assumes another layout reads other elements, as on a GPU.

namespace emu {
struct Exchange {
	const unsigned short *row[32]; // ldmatrix: each lane's row address
	uint32_t a[32][4], b[32][2];   // mma: each lane's A and B registers
};
static Exchange exchange[32]; // per warp of a block of up to 1024 threads

static bool in_shared(const void *p, size_t n) {
	const char *c = (const char *)p;
	return (c >= __start_emu_shared && c + n <= __stop_emu_shared) || (c >= g.dyn && c + n <= g.dyn + g.dyn_bytes);
}

// half_to_float decodes a 16-bit element: bf16 (the top of a float) or
// IEEE binary16, exactly.
static inline float half_to_float(uint32_t h, bool bf16) {
	if (bf16) {
		uint32_t b = h << 16;
		float f;
		memcpy(&f, &b, 4);
		return f;
	}
	const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
	return h & 0x8000 ? -v : v;
}
} // namespace emu

// emu_ldmatrix is ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16
// into r[0..num): lanes 8i..8i+7 give the rows of matrix i; lane t gets,
// of matrix i, row t/4, columns 2(t%4) and 2(t%4)+1 (the lower in the low
// half), or with trans the same of the transposed matrix.
static inline void emu_ldmatrix(unsigned *r, int num, bool trans, const void *p, int line = __builtin_LINE()) {
	emu::Fiber *f = emu::g.cur;
	emu::Exchange &x = emu::exchange[f->warp];
	if (f->lane < 8 * num) {
		if ((uintptr_t)p % 16)
			emu::fail("thread %u (warp %d, lane %d): ldmatrix at line %d: row address %p is not 16-byte aligned",
				f->linear, f->warp, f->lane, line, p);
		if (!emu::in_shared(p, 16))
			emu::fail("thread %u (warp %d, lane %d): ldmatrix at line %d: row address %p is not in shared memory",
				f->linear, f->warp, f->lane, line, p);
		x.row[f->lane] = (const unsigned short *)p;
	}
	__syncwarp(0xffffffffu, line);
	const int t = f->lane;
	for (int i = 0; i < num; i++) {
		const unsigned short *const *rows = x.row + 8 * i;
		if (trans)
			r[i] = (unsigned)rows[2 * (t % 4)][t / 4] | (unsigned)rows[2 * (t % 4) + 1][t / 4] << 16;
		else
			r[i] = (unsigned)rows[t / 4][2 * (t % 4)] | (unsigned)rows[t / 4][2 * (t % 4) + 1] << 16;
	}
	__syncwarp(0xffffffffu, line);
}

// emu_mma_m16n8k16 is mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 with
// D = C = d, T bf16 or f16. Lane l = 4g + t holds A's elements (row g or
// g+8, columns 2t, 2t+1 or those +8) in a[0..3] as (g, 2t), (g+8, 2t),
// (g, 2t+8), (g+8, 2t+8); B's (rows 2t, 2t+1 or those +8, column g) in
// b[0..1]; and C's (row g or g+8, columns 2t, 2t+1) in d[0..3]. Products
// of 16-bit floats are exact in float; they are added in order of k to
// the accumulator in float. A tensor core's order (and rounding) within
// the 16 products may differ, by far less than a 16-bit dtype's tolerance.
static inline void emu_mma_m16n8k16(float *d, const unsigned *a, const unsigned *b, bool bf16, int line = __builtin_LINE()) {
	emu::Fiber *f = emu::g.cur;
	emu::Exchange &x = emu::exchange[f->warp];
	for (int i = 0; i < 4; i++) x.a[f->lane][i] = a[i];
	for (int i = 0; i < 2; i++) x.b[f->lane][i] = b[i];
	__syncwarp(0xffffffffu, line);
	const int g = f->lane / 4, t = f->lane % 4;
	for (int i = 0; i < 4; i++) {
		const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
		float acc = d[i];
		for (int k = 0; k < 16; k++) {
			const uint32_t aw = x.a[(row % 8) * 4 + (k % 8) / 2][(row >= 8) + 2 * (k >= 8)];
			const uint32_t bw = x.b[col * 4 + (k % 8) / 2][k >= 8];
			acc += emu::half_to_float(k & 1 ? aw >> 16 : aw & 0xffff, bf16) * emu::half_to_float(k & 1 ? bw >> 16 : bw & 0xffff, bf16);
		}
		d[i] = acc;
	}
	__syncwarp(0xffffffffu, line);
}

// ---- Atomics: fibers switch only at synchronisation, so a plain
// read-modify-write is atomic. Float additions make the result depend on
// the order of the blocks; the launch reports that it saw one.

#define EMU_ATOMIC(NAME, T, EXPR)                  \
	static inline T NAME(T *p, T v) {              \
		T old = *p;                                \
		*p = (EXPR);                               \
		return old;                                \
	}
#define EMU_ATOMICS_INT(T)                         \
	EMU_ATOMIC(atomicAdd, T, old + v)              \
	EMU_ATOMIC(atomicSub, T, old - v)              \
	EMU_ATOMIC(atomicExch, T, v)                   \
	EMU_ATOMIC(atomicMin, T, v < old ? v : old)    \
	EMU_ATOMIC(atomicMax, T, v > old ? v : old)    \
	EMU_ATOMIC(atomicAnd, T, old &v)               \
	EMU_ATOMIC(atomicOr, T, old | v)               \
	EMU_ATOMIC(atomicXor, T, old ^ v)              \
	static inline T atomicCAS(T *p, T cmp, T v) {  \
		T old = *p;                                \
		if (old == cmp) *p = v;                    \
		return old;                                \
	}
EMU_ATOMICS_INT(int)
EMU_ATOMICS_INT(unsigned int)
EMU_ATOMICS_INT(unsigned long long)
EMU_ATOMICS_INT(long long)
static inline float atomicAdd(float *p, float v) {
	emu::g.float_atomics = true;
	float old = *p;
	*p = old + v;
	return old;
}
static inline double atomicAdd(double *p, double v) {
	emu::g.float_atomics = true;
	double old = *p;
	*p = old + v;
	return old;
}
EMU_ATOMIC(atomicExch, float, v)

// ---- Math ---------------------------------------------------------------------
// The standard functions (expf, fmaxf, fmaf, sqrtf, ...) are the C
// library's. The fast intrinsics follow the GPU's formulas (__expf is
// 2^(x·log2 e) with the product rounded to float), so their error grows
// with |x| as on the GPU.

// glibc declares some of these names (__expf, __logf, ...) as its own
// functions, so they are macros for functions of the emulator's.
namespace emu {
static inline float fast_exp(float x) { return exp2f(x * 1.4426950408889634f); }
static inline float fast_exp10(float x) { return exp2f(x * 3.3219280948873623f); }
static inline float fast_log(float x) { return log2f(x) * 0.69314718055994531f; }
static inline float fast_log2(float x) { return log2f(x); }
static inline float fast_log10(float x) { return log2f(x) * 0.30102999566398120f; }
static inline float fast_pow(float x, float y) { return exp2f(y * log2f(x)); }
static inline float fast_sin(float x) { return sinf(x); }
static inline float fast_cos(float x) { return cosf(x); }
static inline float fast_tan(float x) { return tanf(x); }
static inline float fast_tanh(float x) { return tanhf(x); }
} // namespace emu
#define __expf ::emu::fast_exp
#define __exp10f ::emu::fast_exp10
#define __logf ::emu::fast_log
#define __log2f ::emu::fast_log2
#define __log10f ::emu::fast_log10
#define __powf ::emu::fast_pow
#define __sinf ::emu::fast_sin
#define __cosf ::emu::fast_cos
#define __tanf ::emu::fast_tan
#define __tanhf ::emu::fast_tanh
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fadd_rn(float x, float y) { return x + y; }
static inline float __fsub_rn(float x, float y) { return x - y; }
static inline float __fmul_rn(float x, float y) { return x * y; }
static inline float __fdiv_rn(float x, float y) { return x / y; }
static inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

static inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
static inline unsigned __float_as_uint(float x) { unsigned i; memcpy(&i, &x, 4); return i; }
static inline float __int_as_float(int i) { float x; memcpy(&x, &i, 4); return x; }
static inline float __uint_as_float(unsigned i) { float x; memcpy(&x, &i, 4); return x; }
static inline long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
static inline double __longlong_as_double(long long i) { double x; memcpy(&x, &i, 8); return x; }
static inline int __float2int_rn(float x) { return (int)lrintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline float __int2float_rn(int i) { return (float)i; }

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
	unsigned r = 0;
	for (int i = 0; i < 32; i++) r |= (x >> i & 1u) << (31 - i);
	return r;
}
static inline int __mul24(int x, int y) { return (int)((long long)(x << 8 >> 8) * (y << 8 >> 8)); }
static inline unsigned __umul24(unsigned x, unsigned y) { return (x & 0xffffff) * (y & 0xffffff); }
static inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
static inline unsigned __umulhi(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x * y) >> 32); }

// CUDA's overloaded min and max.
#define EMU_MINMAX(T)                                                  \
	static inline T min(T a, T b) { return a < b ? a : b; }           \
	static inline T max(T a, T b) { return a > b ? a : b; }
EMU_MINMAX(int)
EMU_MINMAX(unsigned int)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }

// ---- The scheduler -------------------------------------------------------------

namespace emu {

// describe appends the state of every fiber of the block, grouped into
// runs of consecutive threads in the same state.
static void describe() {
	int i = 0;
	int groups = 0;
	while (i < g.nthreads && groups < 12) {
		Fiber &f = g.fibers[i];
		int j = i + 1;
		while (j < g.nthreads && g.fibers[j].state == f.state &&
			(f.state == DONE || (g.fibers[j].line == f.line && g.fibers[j].what == f.what)))
			j++;
		appendf("; threads %d-%d ", i, j - 1);
		switch (f.state) {
		case DONE: appendf("have exited"); break;
		case READY: appendf("are runnable"); break;
		case AT_BARRIER: appendf("wait at %s (line %d)", f.what, f.line); break;
		case AT_WARP: appendf("wait at %s (line %d, mask 0x%08x)", f.what, f.line, f.mask); break;
		}
		i = j;
		groups++;
	}
	if (i < g.nthreads) appendf("; ...");
}

static void fail_block(const char *what) {
	fail("block (%u,%u,%u): %s", g.block.x, g.block.y, g.block.z, what);
	describe();
}

// shfl_source returns the lane whose value lane l of a shuffle receives,
// following the PTX definition of shfl.sync: c = ((32-width)<<8) | clamp.
static int shfl_source(const Fiber &f) {
	int lane = f.lane, b = f.operand;
	int segmask = (32 - f.width) & 31;
	int clamp = f.op == SHFL_UP ? 0 : 31;
	int min_lane = lane & segmask;
	int max_lane = min_lane | (clamp & ~segmask);
	long long j;
	bool ok;
	switch (f.op) {
	case SHFL_UP: j = (long long)lane - (unsigned)b; ok = j >= max_lane; break;
	case SHFL_DOWN: j = (long long)lane + (unsigned)b; ok = j <= max_lane; break;
	case SHFL_XOR: j = lane ^ b; ok = j >= 0 && j <= max_lane; break;
	default: j = (b & ~segmask & 31) | min_lane; ok = j <= max_lane; break;
	}
	return ok ? (int)j : lane;
}

// resolve_warp completes the warp collectives of warp w whose lanes have
// all arrived; it returns whether it completed any.
static bool resolve_warp(int w) {
	bool any = false;
	int base = w * 32, n = g.nthreads - base < 32 ? g.nthreads - base : 32;
	for (int l = 0; l < n; l++) {
		Fiber &f = g.fibers[base + l];
		if (f.state != AT_WARP) continue;
		unsigned mask = f.mask;
		bool ready = true;
		for (int k = 0; k < 32; k++) {
			if (!(mask >> k & 1)) continue;
			if (k >= n) {
				fail("block (%u,%u,%u): thread %d calls %s (line %d) with mask 0x%08x, which names lane %d of a warp of %d threads",
					g.block.x, g.block.y, g.block.z, f.linear, f.what, f.line, mask, k, n);
				return false;
			}
			Fiber &o = g.fibers[base + k];
			if (o.state == DONE) {
				fail("block (%u,%u,%u): thread %d calls %s (line %d) with mask 0x%08x, but lane %d (thread %d) has exited",
					g.block.x, g.block.y, g.block.z, f.linear, f.what, f.line, mask, k, o.linear);
				return false;
			}
			if (o.state != AT_WARP || o.mask != mask) {
				ready = false;
				break;
			}
			if (o.op != f.op) {
				fail("block (%u,%u,%u), warp %d: lanes of mask 0x%08x meet at different collectives: lane %d at %s (line %d), lane %d at %s (line %d)",
					g.block.x, g.block.y, g.block.z, w, mask, f.lane, f.what, f.line, k, o.what, o.line);
				return false;
			}
		}
		if (!ready) continue;
		// Every lane of the mask is here: compute each one's result.
		uint64_t all = 1, anyv = 0, ballot = 0;
		uint64_t radd = 0, rmin = 0, rmax = 0, rand_ = ~0ull, ror = 0, rxor = 0;
		bool first = true;
		for (int k = 0; k < 32; k++) {
			if (!(mask >> k & 1)) continue;
			Fiber &o = g.fibers[base + k];
			uint64_t v = o.value;
			all &= v != 0;
			anyv |= v != 0;
			if (v) ballot |= 1ull << k;
			if (f.op >= REDUCE_ADD) {
				uint32_t u = (uint32_t)v;
				bool sgn = o.operand != 0;
				radd = (uint32_t)(radd + u);
				if (first) rmin = rmax = u;
				else if (sgn) {
					if ((int32_t)u < (int32_t)rmin) rmin = u;
					if ((int32_t)u > (int32_t)rmax) rmax = u;
				} else {
					if (u < rmin) rmin = u;
					if (u > rmax) rmax = u;
				}
				rand_ &= u;
				ror |= u;
				rxor ^= u;
			}
			first = false;
		}
		for (int k = 0; k < 32; k++) {
			if (!(mask >> k & 1)) continue;
			Fiber &o = g.fibers[base + k];
			switch (f.op) {
			case SHFL_IDX: case SHFL_UP: case SHFL_DOWN: case SHFL_XOR: {
				if (o.width < 1 || o.width > 32 || (o.width & (o.width - 1))) {
					fail("block (%u,%u,%u): thread %d calls %s (line %d) with width %d, not a power of two up to 32",
						g.block.x, g.block.y, g.block.z, o.linear, o.what, o.line, o.width);
					return false;
				}
				int src = shfl_source(o);
				if (!(mask >> src & 1)) {
					fail("block (%u,%u,%u): thread %d calls %s (line %d) with mask 0x%08x and reads lane %d, outside the mask: undefined",
						g.block.x, g.block.y, g.block.z, o.linear, o.what, o.line, mask, src);
					return false;
				}
				o.result = g.fibers[base + src].value;
				break;
			}
			case VOTE_ALL: o.result = all; break;
			case VOTE_ANY: o.result = anyv; break;
			case VOTE_BALLOT: o.result = ballot & mask; break;
			case SYNCWARP: o.result = 0; break;
			case MATCH_ANY: case MATCH_ALL: {
				uint64_t same = 0;
				for (int q = 0; q < 32; q++)
					if ((mask >> q & 1) && g.fibers[base + q].value == o.value) same |= 1ull << q;
				o.result = f.op == MATCH_ANY ? same : (same == mask ? mask : 0);
				break;
			}
			case REDUCE_ADD: o.result = radd; break;
			case REDUCE_MIN: o.result = rmin; break;
			case REDUCE_MAX: o.result = rmax; break;
			case REDUCE_AND: o.result = rand_; break;
			case REDUCE_OR: o.result = ror; break;
			case REDUCE_XOR: o.result = rxor; break;
			}
		}
		for (int k = 0; k < 32; k++)
			if (mask >> k & 1) g.fibers[base + k].state = READY;
		any = true;
	}
	return any;
}

// resolve_barrier releases the block's barrier when every thread waits at
// it; a thread that exited instead, or threads at different barriers, are
// reported.
static bool resolve_barrier() {
	int at = 0, done = 0, count = 0;
	for (int i = 0; i < g.nthreads; i++) {
		State s = g.fibers[i].state;
		if (s == AT_BARRIER) {
			at++;
			count += g.fibers[i].pred;
		}
		if (s == DONE) done++;
	}
	if (at == 0 || at + done < g.nthreads) return false;
	Fiber *first = nullptr;
	for (int i = 0; i < g.nthreads; i++) {
		Fiber &f = g.fibers[i];
		if (f.state != AT_BARRIER) continue;
		if (!first) first = &f;
		else if (f.line != first->line || f.what != first->what) {
			fail_block("divergent barrier: the threads wait at different barriers");
			return false;
		}
	}
	if (done > 0) {
		char what[160];
		snprintf(what, sizeof what, "divergent barrier: %s (line %d) is not reached by every thread of the block",
			first->what, first->line);
		fail_block(what);
		return false;
	}
	for (int i = 0; i < g.nthreads; i++) {
		g.fibers[i].state = READY;
		g.fibers[i].pred = count;
	}
	return true;
}

// rng is splitmix64, for seeded orders.
static uint64_t rng(uint64_t *s) {
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

// order fills p with 0..n-1: forward (0), reverse (1) or shuffled (2).
static void order(int *p, int n, int mode, uint64_t *seed) {
	for (int i = 0; i < n; i++) p[i] = mode == 1 ? n - 1 - i : i;
	if (mode == 2)
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(rng(seed) % (uint64_t)(i + 1));
			int t = p[i];
			p[i] = p[j];
			p[j] = t;
		}
}

static const uint32_t poison = 0x7fffffffu; // NaN as a float, and as a double

static void fill_poison(void *p, size_t bytes) {
	uint32_t *w = (uint32_t *)p;
	for (size_t i = 0; i < bytes / 4; i++) w[i] = poison;
}

// run_block runs every thread of the current block to its end.
static bool run_block(const int *torder) {
	for (int i = 0; i < g.nthreads; i++) {
		Fiber &f = g.fibers[i];
		f.state = READY;
		f.ncopies = 0;
		f.group = 0;
		start(&f, g.stacks + (size_t)i * g.stack_size + 4096, g.stack_size - 4096);
	}
	for (;;) {
		bool ran = false;
		for (int k = 0; k < g.nthreads; k++) {
			Fiber &f = g.fibers[torder[k]];
			if (f.state != READY) continue;
			resume(&f);
			ran = true;
			if (g.failed) return false;
		}
		bool moved = false;
		for (int w = 0; w * 32 < g.nthreads; w++) {
			moved |= resolve_warp(w);
			if (g.failed) return false;
		}
		moved |= resolve_barrier();
		if (g.failed) return false;
		int done = 0;
		for (int i = 0; i < g.nthreads; i++) done += g.fibers[i].state == DONE;
		if (done == g.nthreads) return true;
		if (!ran && !moved) {
			fail_block("deadlock: no thread can go on");
			return false;
		}
	}
}

// ---- Faults --------------------------------------------------------------------

static void add_region(const char *name, uintptr_t lo, uintptr_t hi) {
	if (g.nregions < 64) g.regions[g.nregions++] = Region{name, lo, hi};
}

static void on_fault(int sig, siginfo_t *si, void *) {
	char buf[1024];
	uintptr_t a = (uintptr_t)si->si_addr;
	int n = snprintf(buf, sizeof buf, "emu: %s at address 0x%lx", sig == SIGBUS ? "SIGBUS" : "SIGSEGV", (unsigned long)a);
	const Region *best = nullptr;
	uintptr_t dist = ~(uintptr_t)0;
	for (int i = 0; i < g.nregions; i++) {
		const Region &r = g.regions[i];
		uintptr_t d = a < r.lo ? r.lo - a : a >= r.hi ? a - r.hi + 1 : 0;
		if (d < dist) {
			dist = d;
			best = &r;
		}
	}
	if (best && dist < (1u << 20)) {
		if (a < best->lo)
			n += snprintf(buf + n, sizeof buf - n, ", %lu bytes before %s", (unsigned long)(best->lo - a), best->name);
		else if (a >= best->hi)
			n += snprintf(buf + n, sizeof buf - n, ", %lu bytes past the end of %s (%lu bytes)",
				(unsigned long)(a - best->hi), best->name, (unsigned long)(best->hi - best->lo));
		else
			n += snprintf(buf + n, sizeof buf - n, ", inside %s", best->name);
	}
	if (g.cur)
		n += snprintf(buf + n, sizeof buf - n, ": an out-of-bounds access by thread (%u,%u,%u) of block (%u,%u,%u)\n",
			g.cur->tid.x, g.cur->tid.y, g.cur->tid.z, g.block.x, g.block.y, g.block.z);
	else
		n += snprintf(buf + n, sizeof buf - n, " outside any thread\n");
	if (write(2, buf, n) < 0) {}
	_exit(3);
}

// ---- Launch ---------------------------------------------------------------------

template <class... A, size_t... I>
static void call(void (*k)(A...), void **args, std::index_sequence<I...>) {
	k(*static_cast<typename std::remove_cv<typename std::remove_reference<A>::type>::type *>(args[I])...);
}

template <class... A>
static void thunk(void *k, void **args) {
	call(reinterpret_cast<void (*)(A...)>(k), args, std::index_sequence_for<A...>{});
}

static size_t page_size() { return (size_t)sysconf(_SC_PAGESIZE); }

static void release() {
	if (g.stacks) munmap(g.stacks, g.stacks_bytes);
	if (g.dyn_map) munmap(g.dyn_map, g.dyn_map_bytes);
	for (int i = 0; g.fibers && i < g.nthreads; i++) free(g.fibers[i].copies);
	free(g.fibers);
	g.stacks = nullptr;
	g.dyn_map = nullptr;
	g.fibers = nullptr;
}

// geom: grid x y z, block x y z, dynamic shared bytes, block order, thread
// order (0 forward, 1 reverse, 2 shuffled), seed, stack bytes per thread.
template <class... A>
static int launch(void (*kernel)(A...), void **args, const long long *geom, char *msg, long long msglen) {
	g.failed = false;
	g.msg[0] = 0;
	g.float_atomics = false;
	g.gdim = dim3((unsigned)geom[0], (unsigned)geom[1], (unsigned)geom[2]);
	g.bdim = dim3((unsigned)geom[3], (unsigned)geom[4], (unsigned)geom[5]);
	long long threads = geom[3] * geom[4] * geom[5], blocks = geom[0] * geom[1] * geom[2];
	int result = 1;
	if (geom[0] < 1 || geom[1] < 1 || geom[2] < 1 || geom[3] < 1 || geom[4] < 1 || geom[5] < 1 || threads > 1024 ||
		geom[6] < 0) {
		fail("bad launch: grid (%lld,%lld,%lld), block (%lld,%lld,%lld) (at most 1024 threads), shared memory %lld bytes",
			geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6]);
		snprintf(msg, (size_t)msglen, "%s", g.msg);
		return 1;
	}
	size_t page = page_size();
	g.nthreads = (int)threads;
	g.thunk = thunk<A...>;
	g.kernel = (void *)kernel;
	g.args = args;
	int user_regions = g.nregions; // Go's buffers; the launch adds its own
	g.fibers = (Fiber *)calloc((size_t)threads, sizeof(Fiber));
	g.stack_size = ((size_t)(geom[10] > 0 ? geom[10] : 256 << 10) + page - 1) / page * page + page;
	g.stacks_bytes = g.stack_size * (size_t)threads;
	g.stacks = (char *)mmap(nullptr, g.stacks_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	g.dyn_bytes = (size_t)geom[6];
	size_t dyn_pages = ((g.dyn_bytes + 15) / 16 * 16 + page - 1) / page;
	g.dyn_map_bytes = (dyn_pages + 2) * page;
	g.dyn_map = (char *)mmap(nullptr, g.dyn_map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.stacks == MAP_FAILED || g.dyn_map == MAP_FAILED || !g.fibers) {
		g.stacks = g.stacks == MAP_FAILED ? nullptr : g.stacks;
		g.dyn_map = g.dyn_map == MAP_FAILED ? nullptr : g.dyn_map;
		snprintf(msg, (size_t)msglen, "emu: out of memory for %lld threads", threads);
		release();
		g.nregions = user_regions;
		return 1;
	}
	// Guard pages: the lowest page of each stack, and around the dynamic
	// arena, whose end is the start of the upper guard.
	for (long long i = 0; i < threads; i++) mprotect(g.stacks + (size_t)i * g.stack_size, page, PROT_NONE);
	mprotect(g.dyn_map, page, PROT_NONE);
	mprotect(g.dyn_map + (dyn_pages + 1) * page, page, PROT_NONE);
	g.dyn = g.dyn_map + (dyn_pages + 1) * page - (g.dyn_bytes + 15) / 16 * 16;
	add_region("dynamic shared memory", (uintptr_t)g.dyn, (uintptr_t)g.dyn + g.dyn_bytes);
	add_region("static shared memory", (uintptr_t)__start_emu_shared, (uintptr_t)__stop_emu_shared);
	for (long long i = 0; i < threads; i++) {
		char *s = g.stacks + (size_t)i * g.stack_size;
		add_region("a thread's stack", (uintptr_t)s + page, (uintptr_t)s + g.stack_size);
	}
	for (int z = 0, i = 0; z < (int)g.bdim.z; z++)
		for (int y = 0; y < (int)g.bdim.y; y++)
			for (int x = 0; x < (int)g.bdim.x; x++, i++) {
				Fiber &f = g.fibers[i];
				f.tid = uint3{(unsigned)x, (unsigned)y, (unsigned)z};
				f.linear = i;
				f.warp = i / 32;
				f.lane = i % 32;
			}
	struct sigaction sa, old_segv, old_bus;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);

	uint64_t seed = (uint64_t)geom[9];
	int *border = (int *)malloc(sizeof(int) * (size_t)blocks);
	int *torder = (int *)malloc(sizeof(int) * (size_t)threads);
	order(border, (int)blocks, (int)geom[7], &seed);
	result = 0;
	for (long long b = 0; b < blocks; b++) {
		long long id = border[b];
		g.block = uint3{(unsigned)(id % geom[0]), (unsigned)(id / geom[0] % geom[1]), (unsigned)(id / geom[0] / geom[1])};
		fill_poison(__start_emu_shared, (size_t)(__stop_emu_shared - __start_emu_shared));
		fill_poison(g.dyn_map + page, dyn_pages * page); // the arena and the slack below it
		order(torder, (int)threads, (int)geom[8], &seed);
		if (!run_block(torder)) {
			result = 1;
			break;
		}
	}
	sigaction(SIGSEGV, &old_segv, nullptr);
	sigaction(SIGBUS, &old_bus, nullptr);
	free(border);
	free(torder);
	if (result == 0 && g.float_atomics) result = 2;
	snprintf(msg, (size_t)msglen, "%s", g.msg);
	release();
	g.nregions = user_regions;
	return result;
}

} // namespace emu

// extern __shared__ declarations are rewritten to name this symbol.
extern "C" {
__attribute__((visibility("hidden"))) char *emu_dynamic_shared_base() { return emu::g.dyn; }
}

// EMU_ENTRY exports the launch of kernel NAME: it returns 0 when every
// block ran to its end, 2 when it did but used float atomics (the result
// may depend on the order), and 1 with a message in msg otherwise.
#define EMU_ENTRY(NAME)                                                                         \
	extern "C" __attribute__((visibility("default"))) int autotune_emu_launch(                   \
		void **args, const long long *geom, char *msg, long long msglen) {                       \
		return emu::launch(NAME, args, geom, msg, msglen);                                        \
	}                                                                                           \
	extern "C" __attribute__((visibility("default"))) void autotune_emu_region(                  \
		const char *name, unsigned long long lo, unsigned long long hi) {                        \
		emu::add_region(name, (uintptr_t)lo, (uintptr_t)hi);                                      \
	}

#endif
