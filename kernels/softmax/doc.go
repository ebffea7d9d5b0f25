// Package softmax is the op and the templates of the fused row-wise softmax: for a
// shape [rows, cols], the kernel func(dst, src []float32) reads the
// row-major rows×cols matrix src once and writes, row by row,
//
//	dst[r][c] = e^(src[r][c]-m) / Σ_i e^(src[r][i]-m),  m = max_i src[r][i]
//
// using no memory beyond dst, which serves as scratch. Op (op.go) holds the
// float64 reference, the tolerance and the work counts; Template (cpu.go)
// the CPU backend's knob space and its emitters of Go (emit.go, algo.go)
// and of Go assembly (asm.go). Both are registered in package kernels by
// init; the tuner needs nothing else from this package.
//
// # Knobs
//
//	vec             1, 8, 16    scalar Go, archsimd.Float32x8, archsimd.Float32x16
//	                1, 4 on arm64  scalar Go, NEON (assembly rows only)
//	unroll          1, 2, 4, 8  independent accumulators (vectors per loop iteration)
//	algo            threepass   max; e^(x-m) into dst and its sum; dst·(1/sum)
//	                online      running max and sum per lane, one exp per element
//	                            (see below); then dst = e^(x-m)·(1/sum)
//	exp             f64         math.Exp in float64
//	                poly4       range reduction, degree-4 polynomial (2.7e-6)
//	                poly5       range reduction, degree-5 polynomial (2.2e-7)
//	                poly3       bf16 and f16, asm on amd64: in base 2, degree 3
//	                            (7.6e-5; see Accuracy)
//	threads         1 … cores   goroutines, the caller included; 1 starts none
//	rows_per_chunk  1, 4, 16, 64 (those ≤ rows)  rows dealt round-robin to threads
//	code            go          the rows in archsimd Go
//	                asm         the rows in Go assembly (below): on AVX-512 with
//	                            vec=16, on AVX2 and FMA with vec=8
//	prefetch        false, true asm: the sums fetch the next row of src
//	convert         block       bf16 and f16: blocks of rows converted into float32
//	                            scratch around the float32 rows
//	                reg         bf16 and f16, asm on amd64: the assembly loads and
//	                            stores 16 bits, converting in registers; for f32
//	                            the values emit the same code
//	                cvtne       bf16, asm on AVX-512 with AVX512-BF16: reg, the
//	                            stores rounded by VCVTNEPS2BF16 (for f16, reg)
//	store           cached      dst stored through the caches
//	                stream      convert=reg or cvtne: the scaling stores dst's
//	                            whole vectors with VMOVNTDQ where its row is
//	                            aligned to them
//
// Constraints: vec8_needs_avx2_fma and vec16_needs_avx512 (from the target's
// ISA); rows_per_chunk_needs_threads (one thread walks the rows in order, so
// chunk sizes would repeat one kernel); threads_at_most_chunks (a goroutine
// without rows is waste); needs_cpu_target (the template has only CPU
// emitters, so every point is invalid on a CUDA target); asm_needs_vectors,
// asm_needs_threepass, asm_needs_poly_exp, asm_unroll_at_most_4 and
// asm_vec8_unroll_at_most_2 (the assembly is one form: three passes, a
// polynomial exp, at most four vectors in flight on AVX-512's 32
// registers, two on AVX2's 16; it inherits the vector width's ISA
// constraint); prefetch_needs_asm (archsimd has no prefetch);
// convert_reg_needs_asm, cvtne_needs_avx512_bf16 (and vec=16),
// poly3_needs_amd64_asm, stream_needs_convert_reg, and on arm64
// convert_reg_needs_amd64 (NEON kernels convert in Go). An f16 search
// leaves cvtne out (kernels.Template.SearchSpace), a float32 search
// poly3 (poly3_needs_16bit, Template.SearchConstraints) and, since it
// pins convert to block, stream.
// The unroll is capped at the vectors a row holds when the code is
// emitted.
//
// Rows whose length is not a multiple of vec end in one partial vector,
// loaded with LoadSlicePart and -Inf in the lanes past the end; a scalar
// tail measured 1.25× slower at 4097×1023 (4.6 ms against 5.8 ms, one
// thread). The online pass needs one exp per element, not two: with
// hi = max(m, x) and lo = min(m, x), e = e^(lo-hi) is e^(x-m) when x ≤ m
// (sum += e) and e^(m-x) when x is a new maximum (sum = sum·e + 1). Scalar
// kernels keep their sums in float64: a float32 running sum of one long row
// drifts by about 1e-4 at 100000 columns, while each vector lane adds only
// cols/vec terms.
//
// # Assembly
//
// With code=asm the Go function of the rows checks the slices and calls
// the assembly on blocks of rows, at most 65536 elements (or one row) a
// call (a goroutine cannot be preempted in assembly). The assembly
// (asm.go) walks the rows of its block in three passes, like
// algo=threepass: the maximum; e^(x-m) into dst and its sum;
// dst·(1/sum). The exp is codegen/goasm's, the same operations on the
// same constants as the archsimd one, so the two forms give the same e^x
// bit for bit. On AVX-512 (vec=16) its 10 or 11 constants, the
// row's maximum and 1/sum stay in Z registers for the whole call, with 4
// registers per unrolled vector (x, k, the result, an accumulator) below
// them. A row's partial vector is loaded and stored under the mask K1
// (zeros loaded, lanes past the end left alone; the maximum and the sum
// take the lanes in the mask only), so rows of any length and any
// alignment need no scalar code. With prefetch=true each vector of the
// sums also fetches (PREFETCHT0) the vector at the same place in the next
// row.
//
// With vec=8 the same passes run on AVX2 and FMA's Y registers, of which
// there are 16: 4 per unrolled vector and the row's maximum leave 11
// registers to the exp's constants at unroll 1 (all of them) and 7 at
// unroll 2, whose 3 or 4 other constants are vectors in a table of the
// .s file, read as memory operands of the FMAs (AVX2 has no broadcast
// operand; the loads take ports the exp leaves idle). Unroll 4 would
// need 17 registers before any constant. -MaxFloat32 and 1 are built
// when needed, and 1/sum takes the maximum's register. The partial
// vector uses VMASKMOVPS (zeros loaded, lanes past the end not written)
// with a mask read from a table of 8 ones then 8 zeros, at 4·(8-t) bytes
// for t elements, since no register stays free for it through the sums:
// the maximum keeps its accumulator's lanes past the end (VBLENDVPS), and
// the sum clears them (VANDPS) from e^(0-m). This form is valid wherever
// vec=8 is, AVX-512 machines included, so the tests run it on both; it is
// the default on AVX2 (unroll 2, poly5), as the AVX-512 form is there.
//
// Two vectors in flight with constants from memory beat one with every
// constant in a register: at 4096×1024 on one goroutine of a 2-vCPU Zen 4
// with AVX-512 hidden, 17–20% less time at the 20th percentile in two
// side-by-side runs (TestSpeed, poly4 and poly5), and the tuner picked
// unroll 2 at 4096×1024 and 12288×128. There the tuned assembly took
// 1.2–1.3× the time of the copy floor at 4096×1024 and 1.35–1.65× at
// 12288×128 (rows of 128 floats, whose two reductions and division per
// row weigh more), and 0.55–0.6× the time of the tuned archsimd Go
// (docs/benchmarks.md has the runs).
//
// Why: the archsimd Go needs more than Go's 15 vector registers (the
// exp's constants, the maximum and 4 unrolled vectors) and spills, most
// of it inside the exp's chain. Timed on one goroutine of a 2-vCPU Zen 4
// on rows of 1024 floats held in L2, a row took 1.11 µs in archsimd Go
// (the tuned threepass config) and 0.25 µs in assembly. With the rows in
// memory, 4096×1024 on one goroutine ran at 1.4–1.5× the time of a copy
// of the same bytes, which is what its traffic predicts: dst's lines are
// read before they are written (a store to a line not in the cache
// fetches it), so a kernel that stores through the cache moves 48 MiB
// where the copy, whose stores bypass the cache, moves 32. Streaming
// stores (VMOVNTPS) would avoid that read. Three forms were tried: the
// third pass computing e^(x-m) again and streaming it; the sums kept in a
// scratch row, streamed out scaled; a row streamed out during the next
// row's sums. At 4096×1024 and 12288×128 each was 15–50% slower than plain
// stores; at 1024×32000 the first was ahead in one run and behind in the
// next, within the noise of a loaded machine. So the template has none.
// The prefetch measured 12–14% faster at 1024×32000 (rows of 125 KiB,
// which the hardware prefetcher does not fetch ahead across; PREFETCHT1,
// into L2, gained 3–8%) and 9% slower at 4096×1024: a choice for the
// tuner.
//
// # bf16 and f16
//
// The CPU kernels store src and dst as bf16 or f16 too (as their 16 bits,
// []uint16) and compute in float32 with the float32 rows of the same
// config: a block of rows (4096 elements, or one row) is decoded into
// float32 scratch, its softmax computed, and encoded back rounded to
// nearest even (half.go, codegen/golang.HalfRows). Memory sees half of
// float32's bytes; the conversions run in the caches, eight elements an
// instruction in Go assembly when the config has vectors.
//
// With convert=reg (code=asm on amd64, asmhalf.go) the assembly itself
// loads the 16-bit elements, widens them in registers (bf16: VPMOVZXWD
// and a shift; f16: VCVTPH2PS) and narrows on store, to nearest even
// (f16: VCVTPS2PH with rounding control 0; bf16: package dtype's integer
// rounding, NaNs kept quiet; not VCVTNEPS2BF16, which flushes subnormals
// to zero), on AVX-512 and on AVX2 (codegen/goasm.Reg16): no pass over
// the rows but the kernel's. dst cannot hold float32 between the sums
// and the scaling, so the sums store e^(x-m) into a float32 row of
// scratch (from a sync.Pool, in the caches), which the scaling reads: the
// output equals convert=block's bit for bit, which TestHalfKernels
// checks. The space does not know the dtype, so for f32 the values
// are one kernel measured twice (a float32 search pins convert); the
// default is reg on amd64 with vectors. convert=cvtne (softmax-6) rounds
// the scaling's bf16 vectors with VCVTNEPS2BF16, one instruction for
// nine, with the same bits: an unrolled group's vectors are checked for
// subnormals after their stores and stored again with reg's rounding
// when one holds some (asmhalf.go); the input set subnormal puts
// subnormal outputs in a few lanes. On the Zen 4 VM it took bf16
// 4096x1024 about 8% off reg's time (docs/benchmarks.md).
//
// store=stream (softmax-7) is for those rows, whose dst is written once,
// by the scaling, from tmp: a store through the caches first reads its
// line, so the kernel moved 1.5 times the bytes of a copy. The scaling
// checks each row of dst: where it is aligned to a vector's words (32
// bytes on Z registers, 16 on Y), its whole vectors go out with VMOVNTDQ
// (goasm.Reg16.Stream) and the partial vector through the caches; a row
// off that alignment takes the cached loop; one SFENCE ends a call, and
// cvtne's out-of-line stores of a group holding a subnormal start with
// one. exp=poly3 (softmax-7) is codegen/goasm's degree-3 exp in base 2:
// f = x·log2e - n in one fused multiply-subtract, no second part of ln2,
// a polynomial of degree 3 for 2^f; two instructions of eighteen a vector
// fewer in the sums. It is off by 7.6e-5, a fiftieth of bf16's rounding
// and a sixth of f16's, and offered to 16-bit searches only (Accuracy).
// On the Zen 4 VM the bf16 4096x1024 winner took 405 µs with poly4 and
// cached stores, 380 streamed and 352 streamed with poly3 (medians of
// five alternating benches; docs/benchmarks.md).
//
// # CUDA
//
// CUDATemplate (cuda.go) emits one CUDA C kernel per config,
// `extern "C" __global__ void name(float *out, const float *in)` with the
// shape baked in as constants and the launch geometry returned beside it
// (kernels.CUDAKernel): a block of tpr·rows_per_block threads holds
// rows_per_block rows, tpr threads (a warp, several warps, or the whole
// block when rows_per_block is 1) to a row; the grid covers the rows.
//
//	tpr             32 … 1024   threads per row: warp-shuffle reductions, then
//	                            through shared memory across the row's warps
//	rows_per_block  1, 2, 4, 8  (those ≤ rows)
//	vec             1, 2, 4     loads and stores of vec 32-bit words: float, float2,
//	                            float4; in bf16 and f16 uint, uint2, uint4 of 2, 4, 8 elements
//	keep            global      every pass re-reads the row from global memory (L1/L2)
//	                smem        the first pass copies the row into dynamic shared memory
//	                regs        each thread keeps its vectors in registers (unrolled)
//	algo            threepass   max; Σe^(x-m); write
//	                online      running (max, sum) per thread, one exp per element; write
//	exp             fast        __expf (ex2.approx)
//	                precise     expf
//
// Constraints: threads_per_block and shared_memory_per_block come from the
// target's limits (device.Limits, without the shared-memory opt-in);
// vec_at_most_cols; threads_at_most_vectors (a row's threads beyond its
// vectors would idle); regs_fit (at most 16 vectors a thread); on a CPU
// target needs_cuda_target rejects every point. When cols is not a
// multiple of vec, a row starts off a vector boundary: each pass walks a
// scalar head up to the first aligned element, the aligned vectors, and a
// scalar tail; the shared-memory copy is shifted so its vectors are
// aligned too. Rows past the last (rows_per_block not dividing rows) skip
// the loads and stores but take part in every barrier. The CUDA revision
// (cudaRevision) and its golden files (testdata/cuda_*.golden) follow the
// same rules as the CPU's.
//
// The CUDA kernels have f32, bf16 and f16 (the op declares all three; the
// CPU template's copy of the op narrows it to the dtypes it has). A 16-bit
// kernel takes `unsigned short *out, const unsigned short *in`, the
// elements' bits, and converts with codegen/cuda's HalfHelpers, which the
// source carries: cvt.f32.f16 and cvt.rn.f16.f32, cvt.rn.bf16.f32 (sm_80),
// the pair forms cvt.rn.{bf16x2,f16x2}.f32 (sm_80) for a word of two
// elements, and a shift for bf16 to float. Everything between the loads
// and the stores is the f32 kernel's: the maximum, the sum and the scale
// are float32 whatever the dtype, and each output is rounded once, to
// nearest even. The elements per vector are 2·vec, so a row of fewer
// elements than a vector (rows of 1 to 7) is all head; the shared-memory
// copy of keep=smem holds the 16-bit elements, half the bytes, each row on
// 16 bytes. The space is the same for every dtype: its constraints are
// f32's, which bound the 16-bit kernels' registers and shared memory.
// The tolerance adds the dtype's output rounding (kernels.OutputRounding,
// and OutputRoundingAbs for outputs below f16's normal range).
//
// f16 inputs are checked on their own sets besides uniform, large and
// neginf: logits in ±[6e4, 65504], where x-max reaches -131008 (beyond
// f16) and e^x overflows; logits among f16's subnormals; constant rows up
// to 6e4 (constant16; the constant set's 1e30 is f16's Inf).
//
// These kernels are checked in the emulator (measure/cuda/emu: every
// conversion bit for bit against package dtype, a grid of configs on odd
// shapes and every input set, a kernel that sums in 16 bits caught) and
// compiled to PTX by clang for sm_80, sm_86 and sm_90. On an H100
// (2026-11-27) measure/cuda's TestGPUSoftmax16 passed, and the tuned bf16
// kernel at 4096×1024 ran 1.5× torch.softmax (docs/benchmarks.md).
//
// Asked for a kernel without a shape, CUDATemplate emits the shape-generic
// kernel of the config, `..., int rows, int cols` after the pointers, in
// every dtype: every row may start off a vector boundary (head, vectors,
// tail), keep=smem's copy is sized on the host from cols
// (kernels.CUDALaunch), and keep=regs re-reads the row as keep=global
// does, since how many vectors a thread would hold depends on cols. Its
// golden files (testdata/cuda_generic_*) carry cudaGenericRevision;
// measure/cuda/emu's TestGeneric runs it at odd shapes in f32, bf16 and
// f16.
//
// # Shape-generic kernels
//
// The Go emitter, asked for a kernel without a shape, emits the same kernel with the shape an argument,
// func(dst, src []float32, rows, cols int), for any config valid at some
// shape (the one it was tuned on). The differences: rows are slices, not
// arrays of a constant length, and every loop bound over a row is tested at
// run time (golang.F32.SweepN); the partial vector at a row's end gets -Inf
// in the lanes past the end from a table (golang.F32.InfTail), since its
// length is not known when the code is emitted; every accumulator of the
// unroll is kept, since a row may hold fewer vectors than the unroll (the
// unused ones keep their initial values, which change neither a maximum
// nor a sum); and threads_at_most_chunks is enforced at run time: a shape
// with fewer chunks of rows_per_chunk rows than threads starts one
// goroutine per chunk. The golden files of generic code carry
// genericRevision (cpu.go), not revision: the tuner measures specialised
// kernels only, so the generic code is not part of Version; bump
// genericRevision when it changes. The generic assembly
// (emitAsmGeneric) takes cols as an argument: the bytes of a
// row, of its whole groups of unroll vectors and of its whole vectors, and
// the mask of its partial vector, are computed once per call.
//
// # Accuracy
//
// The exp variants' largest relative errors over [-87.3, 0] are measured by
// codegen/golang's TestExpError (see that package for the table):
// f64 6.0e-8, poly4 2.7e-6, poly5 2.2e-7 (2.0e-7 in vector code). Tolerance
// is |got-want| ≤ abs + rel·|want| with
//
//	rel = 88·2^-24      x-m rounds in float32; e^x turns that into a relative error
//	    + 2·2.7e-6      the worst exp (poly4), in each term and in the sum
//	    + 4·2^-24       the reciprocal, the product, slack
//	    + 4·2^-24·√cols the float32 sum, whose error grows like √cols for same-sign terms
//	abs = 1e-37         e^x below about -87.7 is flushed to 0
//
// which is 1.1e-5 at one column, 1.9e-5 at 1023 and 8.6e-5 at 100000. Over
// the test grid the largest error seen is about half of it. A degree-3
// polynomial (7.5e-5) would have needed a tolerance ten times looser, so it
// is not offered to float32. A 16-bit output adds its rounding (2^-8
// relative for bf16, 2^-11 for f16: kernels.OutputRounding) and takes
// 2·7.6e-5 for the exp's term, so that exp=poly3 fits: its error is a
// small part of the rounding it feeds.
//
// -Inf entries give 0. A row that is all -Inf has no finite maximum: the
// float64 reference computes -Inf-(-Inf) = NaN and so gives NaN for the whole
// row, and the kernels do the same, on purpose (running maxima start at
// -MaxFloat32, the row's sum is 0, and 0·(1/0) is NaN). NaN and +Inf inputs
// are outside the contract.
//
// # Work
//
// FLOPs counts 5 per element: the max, the subtraction, exp as one, the add
// to the sum and the multiply by 1/sum. Bytes is 2·4·rows·cols: src read
// once and dst written once; the other passes hit the row in L1.
//
// # arm64
//
// The arm64 space (kernels.ArchOf of the target) offers vec 1 and 4, and
// vec=4 only with code=asm (neon_needs_asm): there is no archsimd there.
// An arm64 kernel (kernels.ARM64) of a code=asm config is the plain form
// around NEON rows (neon.go): the same three passes as AVX-512's on
// 4-lane vectors, the exp codegen/neon's, whose operations and constants
// are goasm's, unroll up to 4 (5 registers a vector and the exp's 11
// constants in the 32 V registers), the partial vector moved a lane at a
// time. Of a scalar config it is the scalar Go, the same everywhere; the
// 16-bit dtypes convert in Go there. The default on arm64 is NEON,
// unrolled by 4. Version hashes the amd64 space only; revision was not
// bumped when the arm64 space gained NEON, since every config of the
// scalar-only arm64 space is still valid in it. The NEON kernels are
// checked under emulation (TestARM64Kernels, TestARM64GenericKernels),
// never timed on arm64 hardware: see docs/arm64.md.
//
// # Version
//
// Template.Version is revision (in cpu.go) and a hash of the knob space
// of a fixed workload and target, so it changes by itself when a knob, a
// value or a constraint does. When the emitted code changes, bump revision
// by hand ("softmax-1" to "softmax-2"): the tuning database then stops
// applying records measured on the old code. TestGolden enforces it:
// go test -update refuses to rewrite golden files whose code changed unless
// revision changed too. The 16-bit goldens (TestGoldenHalf:
// testdata/*_bf16* and *_f16*, with testdata/golden_half.sum) carry
// revision and genericRevision as well, so a change to the bf16 or f16
// code alone, codegen/golang's and codegen/goasm's conversions included,
// needs the bump too. Revision softmax-3 added code and prefetch,
// softmax-4 the assembly on AVX2 (vec=8), softmax-5 convert, softmax-6
// convert=cvtne, softmax-7 store and exp=poly3; the
// space of softmax-2, without them, is kept as an earlier revision
// (kernels.Template.Earlier), so that the landscapes recorded with it
// (tune/lab/testdata) still replay: only for replay, never to tune, emit or
// look up.
package softmax
