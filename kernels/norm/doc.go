// Package norm is the ops and templates of the row normalisations of
// transformer layers, over the rows of a row-major R×C matrix x:
//
//	rmsnorm    y = x / √(mean(x²) + 1e-6) · gamma                  (Llama's eps)
//	layernorm  y = (x − mean) / √(var + 1e-5) · gamma + beta       (PyTorch's default eps)
//
// with gamma and beta vectors of C elements and the population variance.
// Kernels are called as fn(y, x, gamma) and fn(y, x, gamma, beta). The two
// ops share everything but a few lines: a kind (op.go) says which one a
// function serves, and one emitter per backend writes both. op.go holds
// the float64 references, the tolerances and the work counts; inputs.go
// the input sets; cpu.go the CPU templates (RMSTemplate, LayerTemplate),
// whose Go the emitter in emit.go writes, and asm.go the rows of both in
// Go assembly (asmlayer.go LayerNorm's own parts); cuda.go the CUDA templates;
// baseline.go the baselines. init registers all of them in package
// kernels, and nothing outside this package names the ops.
//
// # CPU knobs
//
//	vec             1, 8, 16      scalar Go, archsimd.Float32x8, archsimd.Float32x16
//	                1, 4 on arm64 scalar Go, NEON (assembly rows only: RMSNorm's code=asm; LayerNorm's vec=4 is)
//	unroll          1, 2, 4, 8    independent accumulators (vectors per loop iteration)
//	algo            twopass       LayerNorm: the mean, then the sum of squared deviations
//	                onepass       LayerNorm: Σt and Σt² in one sweep, var = E[t²]−E[t]²
//	threads         1 … cores     goroutines, the caller included
//	rows_per_chunk  1, 4, 16, 64  (those ≤ rows) rows dealt round-robin to threads
//	code            go            the rows in archsimd Go
//	                asm           the rows in Go assembly (asm.go), on AVX-512 with vec=16, AVX2 and FMA with vec=8
//	store           cached        y written through the cache
//	                stream        asm: y's aligned middle with VMOVNTPS (VMOVNTDQ
//	                              for 16-bit y, on Z registers)
//	prefetch        false, true   asm: the output sweep fetches the next row of x
//	convert         block         bf16 and f16: blocks of rows converted into float32 scratch
//	                reg           bf16 and f16, asm: the assembly loads and stores 16 bits,
//	                              converting in registers; for f32 the values emit the same code
//	                cvtne         bf16, asm on AVX-512 with AVX512-BF16: reg, y rounded by
//	                              VCVTNEPS2BF16; f16 kernels of it are reg's (an f16 search leaves it out)
//
// LayerNorm's arm64 space has none of code, store, prefetch and convert:
// its vec=4 is NEON assembly.
//
// Constraints: vec8_needs_avx2_fma and vec16_needs_avx512;
// rows_per_chunk_needs_threads; threads_at_most_chunks; needs_cpu_target;
// asm_needs_vectors, asm_vec8_unroll_at_most_4 (RMSNorm) or
// asm_vec8_unroll_at_most_2 (LayerNorm, which keeps x[0], the mean and,
// one-pass, a second accumulator a vector in registers; AVX2 has 16
// vector registers), stream_needs_asm and prefetch_needs_asm,
// convert_reg_needs_asm, convert_reg_streams_on_z (a streamed row's
// 16-bit head and tail are masked stores, which Y registers lack) and
// convert_reg_unroll_at_most_4_or_2 (on Z and Y registers: each vector
// in flight takes registers for gamma and the rounding, asmhalf.go; they
// hold for cvtne too), cvtne_needs_avx512_bf16 (and vec=16); on
// arm64 RMSNorm's neon_needs_asm, neon_stores_cached (NEON has no
// non-temporal vector store) and convert_reg_needs_amd64.
// The unroll is capped at the vectors a row holds when a specialised
// kernel is emitted. The elements of a partial vector at a row's end are
// handled one by one: a zero-padded vector load would add x-x[0] = -x[0]
// in the padding lanes of LayerNorm's sums.
//
// # Assembly
//
// Measured on rmsnorm 4096×4096 (docs/benchmarks.md), the archsimd rows
// ran at 2.2–2.4× the time of Go's copy, which streams large copies past
// the cache: an archsimd store of y first reads its line for ownership,
// and even an archsimd copy is 1.3–1.45× Go's. code=asm writes RMSNorm's
// two sweeps in Go assembly: the sum of squares with unroll vector
// accumulators (a masked load for the partial vector, whose zero lanes
// add nothing), the overflow check and 1/√(sum/n+eps) in float64 as the
// Go rows compute it, then y = x·(1/rms)·gamma; on Z registers (vec=16)
// or, with AVX2, on Y registers (vec=8), whose partial vectors take
// VMASKMOVPS. store=stream writes y with VMOVNTPS, which needs addresses
// aligned to the vector (64 or 32 bytes) while a row of a Go []float32 is
// only 4-byte aligned: each row's output starts with one masked store up
// to the first such boundary of y, streams the whole
// vectors from there, and ends with a masked store of the rest; one
// SFENCE at the end of a call orders the streamed stores before the
// caller's. With prefetch, the output sweep, which reads x from L1 and
// writes y, fetches the next row of x, a PREFETCHT0 per vector, so that the
// next sum of squares does not wait on memory. A row whose float32 sum overflows is summed again in float64,
// an element at a time, inside the assembly. The Go around the assembly
// calls it 65536 elements (or one row) at a time, since a goroutine
// cannot be preempted in assembly; the plain form (kernels.AMD64Plain)
// is that Go without archsimd.
//
// LayerNorm's code=asm (asmlayer.go) is the sweeps of its Go rows in the
// same assembly, on t = x-x[0] broadcast from the row's first element:
// twopass Σt, then Σ(t-mean)², onepass Σt and Σt² in one sweep; the mean
// and 1/σ in float64, the mean used as its float32 as the Go rows do; then
// y = (t-mean)·(1/σ)·gamma + beta, gamma and beta fused (VFMADD213PS). A
// partial vector's lanes past the row are zeroed after the subtraction,
// where x-x[0] would add -x[0]. The float64 path of a row whose float32
// Σ of squares overflows is the Go rows' slow path: the mean of t, then
// the squared deviations, an element at a time. The statistics are thus
// the same float32 sums as the archsimd rows', in the tolerance above.
//
// # Numerics
//
// Vector lanes accumulate in float32, each cols/vec terms, which keeps
// the rounding error of the sums near √cols units; scalar kernels sum in
// float64. LayerNorm works on t = x − x[0] throughout: the mean of t is
// small where the row's spread is small against its mean, so that a
// variance far below eps (rows of 0.7 ± 1e-4, the lowvar inputs) is not
// lost to float32 rounding of the mean, the one-pass E[t²]−E[t]² cancels
// no more than the spread warrants, and a constant row gives t = 0, hence
// exactly y = beta.
//
// Inputs near 1e18 (the large inputs) square to 1e36, and a float32 sum
// of more than about 85 of them overflows. Rather than pay for it on every
// row (a max-abs pass to scale by, or float64 accumulators, which halve
// the lanes), a vector kernel checks the float32 sum once per row and,
// where it is not finite, computes that row's statistics again in float64
// (the ...Slow function of each kernel) before writing it: normal rows pay
// one compare, hostile ones a scalar pass. Inputs near 1e-18 square to
// 1e-36, still normal in float32, and eps dominates the sum then anyway.
// Inputs beyond about 1.8e19 square to +Inf in float32 and take the same
// path; x − x[0] itself overflows only beyond 1.7e38.
//
// # bf16 and f16
//
// The CPU kernels store x, gamma, beta and y as bf16 or f16 too (as their
// 16 bits, []uint16) and compute in float32 with the float32 rows of the
// same config: a block of rows (4096 elements, or one row) is decoded
// into float32 scratch, normalised, and encoded back rounded to nearest
// even (half.go). The kernel thus moves half of float32's bytes through
// memory, which is what bounds a norm, and pays for the conversions in
// the caches: eight elements an instruction in Go assembly when the
// config has vectors (codegen/goasm.Half), scalar Go otherwise. The
// scratch comes from a sync.Pool, so a warm call allocates nothing.
//
// RMSNorm's convert=reg (asmhalf.go) has the assembly load x and store
// y as 16 bits, widened and narrowed to nearest even in registers
// (codegen/goasm.Reg16: VCVTPH2PS and VCVTPS2PH for f16, VPMOVZXWD and
// package dtype's integer rounding for bf16), and gamma widened once a
// call of the rows function into float32 scratch padded to whole vectors
// (norm-7; before, every row widened it again), with no pass over x or y
// but the kernel's; its output equals convert=block's bit for bit
// (TestHalfKernels). LayerNorm's convert=reg does the same for x and y,
// x[0] included, and for gamma and beta (norm-4). The space does not know the
// dtype, so for f32 the values are one kernel (a float32 search pins
// convert). convert=cvtne (norm-6, LayerNorm's norm-3) rounds bf16 on a
// CPU with AVX512-BF16 with VCVTNEPS2BF16, one instruction where reg's
// integer rounding takes nine of the output sweep's nineteen a vector:
// the same bits, since the vectors of an unrolled group that hold a
// subnormal, which the instruction flushes to zero, are stored again with
// reg's rounding, placed after the function's RET, when the check that
// ends the group finds one (goasm.Reg16.NarrowNE and CheckNE; norm-8,
// LayerNorm's norm-5: until then the check was per vector, inside the
// interleaved bodies, so that a group tested the last vector's flags
// only, and a subnormal in its last vector skipped the other vectors'
// stores; on the subnormal input set, which norm-6 lacked, a check of
// the last vector only fails TestHalfKernels). On the Zen 4 VM it took
// LayerNorm bf16 4096x1024 from 1.30× slower than the f32 kernel to
// faster than it (docs/benchmarks.md).
//
// convert=reg and cvtne on Z registers take store=stream too (norm-9,
// LayerNorm's norm-6): as the float32 kernel's, a streamed row starts
// with a masked vector up to y's first 32-byte boundary, streams its
// whole vectors from there (goasm.Reg16.Stream: VMOVNTDQ of the narrowed
// words) and ends with a masked vector; the rounding's NaN masks move to
// K4 and up, clear of the head's and tail's K2 and K3, and the head's
// cvtne check ends it, before the whole vectors start. The whole
// vectors start up to a vector short of a boundary, so the widened gamma
// and beta have a vector of scratch more (streamPad).
//
// The generated code of a few bf16 and f16 configs of each op is checked
// in (TestGoldenHalf: testdata/*_bf16* and *_f16*, with
// testdata/golden_half.sum) under the float32 goldens' revisions (cpu.go):
// a change to the 16-bit code alone, the conversions of codegen/golang and
// codegen/goasm included, needs the bump as well, and go test
// ./kernels/norm -run Golden -update refuses the new files until it is
// made.
//
// f16 cannot hold the large, tiny and constant inputs (1e18 is Inf, 1e-18
// is 0), so it has its own at the edges of its range: large16 (x up to
// 6e4, whose squares overflow f16, so a kernel that accumulated in f16
// would fail), tiny16 (subnormals) and constant16. The CUDA kernels have these
// input sets too (below).
//
// # arm64
//
// The arm64 space (kernels.ArchOf of the target) has its own vec values,
// above. An arm64 kernel (kernels.ARM64) of RMSNorm's code=asm config,
// or of LayerNorm's vec=4 one (LayerNorm has no code knob: its vectors on
// arm64 are assembly), is the plain form around NEON rows (neon.go), on
// 4-lane vectors, unroll up to 8, the partial vector moved a lane at a
// time (codegen/neon's Rows): RMSNorm's amd64 two sweeps; LayerNorm the
// sweeps of the Go rows, of t = x-x[0] (twopass: Σt, then Σ(t-mean)²;
// onepass: Σt and Σt² together), then y = (t-mean)·(1/σ)·γ + β, γ and β
// fused. Both take the float64 path where the float32 sum of squares
// overflows, and 1/rms or 1/σ is float64, as in the Go rows. A scalar
// config's arm64 kernel is the scalar Go, the same everywhere. The
// defaults on arm64 are NEON. Version hashes the amd64 space only; the
// revisions were not bumped, since every config of the scalar-only arm64
// spaces is still valid in them. The NEON
// kernels are checked under emulation (TestARM64Kernels), never timed on
// arm64 hardware: see docs/arm64.md.
//
// # CUDA
//
// A warp (tpr=32) or a block (tpr up to 1024, then one row per block)
// per row, float, float2 or float4 loads (vec must divide C), float32
// statistics reduced by warp shuffles and, across a row's warps, through
// shared memory. A row whose float32 sum of squares is not finite takes
// two more sweeps: the largest magnitude mx, then Σ(x/mx)², so that
// 1/σ = 1/(mx·√(Σ(x/mx)²/C + eps/mx²)) needs no float64. The branch has
// barriers of its own, hence a row of several warps owns its block
// (multiwarp_rows_alone). autotune check runs the first input set only;
// TestCUDAEmulated runs every set in the emulator.
//
// bf16 and f16 (--dtype) keep x, y, gamma and beta in 16 bits, as the
// CPU's 16-bit kernels do, and compute in float32 as the float32 kernel
// does: a vector is vec 32-bit words of two elements (2, 4 or 8 elements:
// up to 16-byte loads), each word converted by codegen/cuda's
// HalfHelpers, y rounded to nearest even on store, two elements a cvt.
// The space has no dtype, so vec divides C only as floats: a 16-bit
// kernel whose C is not a multiple of its 2·vec elements sweeps its rows
// an element at a time (every row then starts on a vector boundary or is
// never read in vectors). The revision was not bumped: the float32
// kernels' source is unchanged (golden files); testdata/cuda_half_* and
// cuda_generic_half_* hold the 16-bit goldens.
//
// Asked for a kernel without a shape, the CUDA templates emit the
// shape-generic kernel of the config, `..., int rows, int cols` after the
// pointers, launched as a kernels.CUDALaunch says (a block per
// rows_per_block rows): a row that the vector's elements do not divide is
// swept an element at a time, so every config serves every shape. Its golden files
// (testdata/cuda_generic_*) carry cudaGenericRevision; measure/cuda/emu's
// TestGeneric runs it at odd shapes.
//
// # Baselines
//
// naive is plain Go with float64 statistics, one goroutine. onednn
// (build tag onednn) is oneDNN 2's layer normalization primitive, for
// LayerNorm only: oneDNN 2 has no RMSNorm. It is wrong on the large,
// constant and lowvar inputs (its float32 statistics), which its
// KnownWrong says, so that bench still times it on the uniform inputs.
// onednn-bf16 and onednn-f16 run the primitive on a 16-bit workload's
// own buffers, where this CPU's oneDNN has it (kernels/onednn asks);
// its scale and shift are float32, so each call first widens gamma and
// beta into float32 buffers. The bf16 one is wrong on the large inputs
// only: its float32 sum of squared deviations overflows there.
//
// # Shared code
//
// The loops over a row (Sweep, SweepN), the reductions (Tree,
// HorizontalFunc) and the dealing of rows to goroutines (RowSplit) are
// codegen/golang's, shared with softmax. What could still be shared: the
// accumulator helpers (accs, declAccs), which softmax has in the same
// form.
//
// # Tolerance
//
// A kernel's output is wrong where |got−want| > abs + rel·|want|, with
// rel = (16 + 2√C)·2⁻²⁴; RMSNorm's abs is 1e-37, LayerNorm's 2·rel since
// γ·z + β cancels. A 16-bit output adds its rounding: 2⁻⁸ (bf16) or 2⁻¹¹
// (f16) to rel, and half its smallest subnormal to abs
// (kernels.OutputRounding, OutputRoundingAbs). The tests log the largest
// error per shape and input set as a fraction of the tolerance.
package norm
