// Package gemm is the template of the float32 matrix product C = A·B: for
// a shape [M, N, K], the kernel func(c, a, b []float32) reads the row-major
// M×K matrix a and K×N matrix b and overwrites the row-major M×N matrix c.
// Template holds the knob space, the Go emitter, the float64 reference, the
// tolerance and the work counts; the tuner needs nothing else from this
// package.
//
// # Algorithm
//
// The generated code is the loop nest of BLIS, written in Go with
// simd/archsimd. Outermost first:
//
//	jc  panels of nc columns of B
//	pc  slices of kc rows of K; B's kc×nc block is packed (pack_b) into
//	    strips of nr columns, each kc×nr and contiguous, the last one
//	    padded with zeros
//	ic  blocks of mc rows of A, each mc×kc, read in place
//	jr  strips of nr columns: a kc×nr strip of B stays in L1
//	ir  tiles of mr rows: the micro-kernel
//
// The micro-kernel holds an mr×nr tile of C in mr·nr_vecs vector registers
// and, for each of the kc steps of K, loads one row of the strip of B
// (nr_vecs vectors), broadcasts one element of A per row and adds the outer
// product with one FMA per accumulator. It starts from zero on the first
// slice of K and from C on the others, so every element of C is summed in
// the order k = 0, 1, …, K-1 whatever the blocks.
//
// Tails cost no scalar loops: the last M%mr rows get a micro-kernel of
// their own (M is a compile-time constant, and goroutines and blocks of
// rows start at multiples of mr, so only the last tile is short), and the
// last N%nr columns one whose last vector is loaded and stored with
// LoadSlicePart and StoreSlicePart (or read from the zero padding of a
// packed strip). K's tail is the run-time depth of the last slice.
//
// Threads split M into contiguous runs of whole tiles, one per goroutine,
// the caller included. Each goroutine packs its own B panels into a buffer
// from a package-level sync.Pool of fixed-size arrays (kc·⌈nc/nr⌉·nr
// floats), so a warm kernel allocates nothing and goroutines share
// nothing but the inputs; the pack is repeated per goroutine, K·N copies
// against 2·M·N·K/threads FLOPs.
//
// # Knobs
//
//	vec      1, 8, 16            scalar Go, archsimd.Float32x8, archsimd.Float32x16
//	mr       1, 2, 4, 6, 8       rows of the micro-kernel's tile
//	nr_vecs  1, 2                vectors per tile row: nr = nr_vecs·vec columns
//	kc       64 … 512            depth of a slice of K
//	mc       24 … 768            rows of a block of A (multiples of 24, so of every mr)
//	nc       256 … 4096          columns of a panel of B
//	pack_b   false, true         pack B into strips, or read it in place
//	unroll   1, 2, 4             steps of K per iteration of the micro-kernel
//	threads  1 … cores           goroutines, the caller included; 1 starts none
//
// Constraints:
//
//	needs_cpu_target       the template has only a Go emitter
//	vec8_needs_avx2_fma    from the target's ISA
//	vec16_needs_avx512     from the target's ISA
//	register_budget        mr·nr_vecs accumulators + nr_vecs for B + 1 for A ≤ 14:
//	                       Go 1.26 allocates X0–X14 on AVX2 and AVX-512 alike; an
//	                       AVX-512 6×32 tile (15) spilled and ran at 26 GFLOP/s,
//	                       4×32 (11) at 58–74 on one core
//	a_block_fits_l2        4·mc·kc ≤ L2 (256 KiB when the target does not say)
//	b_panel_fits_cache     4·kc·nc·threads ≤ L3, or 4·kc·nc ≤ L2 without an L3
//	kc_within_k            a block larger than twice the extent repeats the kernel
//	mc_within_m            of the next smaller one, so it is not offered
//	nc_within_n
//	threads_at_most_tiles  every goroutine gets at least one tile of rows
//
// Blocks larger than the matrix are capped at it when the code is emitted.
//
// # Accuracy
//
// Each output is a float32 sum of K products in order (FMA in vector code,
// so the products are not rounded; scalar code rounds them too). For inputs
// of random signs the partial sums grow like √k, and the rounding errors of
// K of them add up to about 2^-24·σ·K/2.4 (σ² = E[a²]·E[b²]), growing like
// K; for inputs of one sign the error is relative, about 2^-24·√K·|c|.
// Tolerance is |got-want| ≤ abs + rel·|want| with
//
//	abs = 8·2^-24·K·4²   inputs at most 4 in magnitude, as the tuner's harness
//	                     (±[0.125, 4]) and the tests draw them
//	rel = 4·2^-24·(1+√K)
//
// which is 7.8e-3 and 7.6e-6 at K = 1024. Over the test grid the largest
// error seen is about a tenth of it (at K = 259), while a product left out
// or counted twice moves an output by at least 0.125² = 0.016: TestTolerance
// checks that the tolerance stays below that up to K = 1024. A data-free
// tolerance cannot be exact for GEMM, whose error bound is relative to
// Σ|a||b| rather than to |c|; inputs larger than 4 need it scaled.
//
// # Work
//
// FLOPs is 2·M·N·K; Bytes is 4·(M·K + K·N + M·N), each matrix moved once.
//
// # Epilogues
//
// BiasTemplate (op gemm_bias) computes C = A·B + bias and BiasReLUTemplate
// (op gemm_bias_relu) C = max(0, A·B + bias), for a bias of N elements
// (in2) added to every row: func(c, a, b, bias []float32). They are the
// same kernel with the epilogue fused into the micro-kernel's store: on
// the last slice of K only (pc+depth = K), the tile, still in registers,
// gets the biases of its columns, loaded once per tile into the registers
// of B (LoadSlicePart for the short-N tile) and added to each of its rows,
// then for ReLU the maximum with zero, held in the register of A; so they
// need no register beyond plain GEMM's, and share its knobs, constraints
// and tolerance (the bias adds one rounding, within rel). Their references
// are float64; FLOPs add M·N for the bias and M·N for ReLU, Bytes 4·N for
// the bias. Their baselines are naive and gonum followed by a Go loop over
// c. Their ops are built in this package (kernels.Op values in
// epilogue.go).
//
// # Version
//
// Template.Version is revision (in gemm.go) and a hash of the register
// budget and the knob space of a fixed workload and target, so it changes
// by itself when a knob, a value or a constraint does. When the emitted
// code changes, bump revision by hand ("gemm-1" to "gemm-2"): TestGolden
// refuses to rewrite golden files whose code changed unless revision did.
// The epilogue templates have revisions of their own (biasRevision and
// biasReLURevision in epilogue.go), golden files and sum files of their
// own; the code they share with plain GEMM changes theirs too, so bump all
// three when it changes.
package gemm
