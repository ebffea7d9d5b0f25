// Package attention is the ops and templates of fused scaled dot-product attention:
// for a shape [B, H, S, D], the kernel func(out, q, k, v []float32) reads
// the [B][H][S][D] tensors Q, K and V once each and writes O, of the same
// layout, with
//
//	O[b][h] = softmax(Q[b][h]·K[b][h]ᵀ / √D) · V[b][h]   (softmax along each row)
//
// non-causal, never forming the S×S score matrix. Op (op.go) holds the
// float64 reference, the tolerance and the work counts; Template (cpu.go)
// the CPU backend's knob space and emitters. Both are registered in package
// kernels by init, with CausalOp and TemplateCausal; the tuner needs
// nothing else from this package.
//
// # Algorithm
//
// Flash-style, with an online softmax, in one of two layouts (the layout
// knob). Both share the work split: the work is cut into units, a block
// of br query rows of one head, dealt round-robin to the goroutines; units
// run head by head, so that the goroutines share a head's K and V in cache.
// A unit meets the keys and values in blocks of bc rows.
//
// The rows layout keeps each query row along D in the vectors. The last
// key block, S mod bc long, gets a function of its own with its own
// compile-time size. For each query row and key block it computes the scaled scores into a
// [bc]float32 array, their maximum mNew, the weights p = e^(score-mNew) and
// their sum, then rescales the row's running sum l and output row acc by
// alpha = e^(mOld-mNew) and adds Σ_c p[c]·V[c]; at the end of the unit,
// O = acc/l. A block of bc keys and values is read from memory once per
// unit and br times from cache. Each goroutine's memory is one struct of
// br·D + br floats and br vectors (acc, running maxima, running sums kept
// per lane) on its stack — the compiler moves it to the heap when it is
// over 128 KiB, once per call — plus a [bc]float32 of weights: O(br·D + bc),
// never O(S²).
//
// Dot products run along D with up to four vector accumulators and one
// horizontal sum per score; the weighted sum of V keeps up to four vectors
// of the output row in registers while the keys of a block go by. D not a
// multiple of vec ends in a partial vector (LoadSlicePart/StoreSlicePart,
// zeros past the end); a key block not a multiple of vec ends in a partial
// vector of weights with -Inf past the end, which add e^-Inf = 0 to the sum.
//
// The lanes layout puts the unit's query rows in the lanes of the vectors
// (lanes.go): at the start of a unit the br query rows, scaled by 1/√D,
// are transposed into qt[D][br], zero past the last row; the scores of a
// key block go to p[bc][br] and the output accumulates in ot[D][br], all
// with row i in column i. Both products are then register-tiled outer
// products like gemm's micro-kernels, with no horizontal sums: the scores,
// p = K·qt, in tiles of mr keys × nv vectors of query lanes over D, each
// key element broadcast; the output, ot = alpha·ot + Vᵀ·p, in tiles of mr
// rows of D × nv vectors over the block's keys, each value broadcast. The
// softmax runs down p's columns one vector of query lanes at a time: the
// new maxima (two chains), the weights in place of the scores with their
// sums, and alpha per lane. At the end of the unit out = otᵀ/l. Each
// goroutine's memory is one struct of 2·D·br + bc·br + 3·br floats.
// Transposing costs D·br scalar moves per unit, against 4·br·S·D FLOPs.
// Padding lanes past the last query row compute scores of 0 that are never
// stored; keys past the end of S are never read (the tiles loop over the
// block's cols keys: tiles of mr keys, the bc mod mr keys left of a full
// block in one smaller tile, then single keys for the rest of a partial
// block), and a D that mr does not divide ends in one smaller tile.
//
// With micro=asm the tiles are Go assembly from codegen/goasm, called once
// per tile: the archsimd tiles lose about half their issue slots to
// register moves (Go's MulAdd overwrites a multiplicand, so each fused
// multiply-add of a loop-carried accumulator needs a copy) and spill past
// 4×2 vectors, while the assembly accumulates in place in up to 28 Z
// registers. On 1x8x1024x64, one thread, the same schedule ran at 36
// GFLOP/s with archsimd tiles (4×2) and 86 with assembly (12×2). The Go
// code checks, once per call, that the rows the tiles read exist.
//
// With micro=asm and a polynomial exp (poly4, poly5) the online softmax of
// a key block is assembly too (softmaxasm.go), so that a key block runs in
// assembly from its scores to its output but for the causal mask of a
// block that crosses the diagonal, which is Go. It is emitLanesSoftmax's
// archsimd Go instruction for instruction (goasm.Exp is golang.Exp's
// operations on its constants), with the exp's constants, the new maxima
// and the sums in registers: 16 of them at degree 5, which fits AVX2. The
// archsimd Go, compiled, checks the bounds of every load of a score (a
// dozen scalar instructions a vector) and keeps some of the exp's values
// on the stack. On 1x8x1024x64, one thread, a profile gave the archsimd
// softmax 15% of the kernel's time and the assembly 9% at vec=8 (AVX-512
// hidden; bc=64, mr=6, nv=2), 28% and 7.5% at vec=16 (mr=12, nv=2). The
// first profile gave 6.4% to the single-key tiles of the 4 keys of a
// 64-key block past its tiles of 6; one tile of 4 keys does them now. With
// exp=f64 the softmax stays archsimd Go.
//
// The plain form (kernels.AMD64Plain), of both templates, is a lanes config with
// micro=asm, specialised or shape-generic, with plain Go around the same
// assembly tiles and, with a polynomial exp, the same assembly softmax;
// with exp=f64 its online softmax runs one query row at a time in scalar
// Go with math.Exp. It imports no archsimd, so a build without
// GOEXPERIMENT=simd runs it (package gen's generated packages do, on
// amd64, on a CPU with the tiles' instructions). Its golden files carry
// plainRevision (cpu.go), not part of Version: the tuner measures the
// archsimd form.
//
// On arm64 (neon.go) there is no archsimd: vec is 1 or 4, and 4 is a
// lanes config with micro=asm (neon_needs_asm), whose only form is the
// plain one around NEON assembly: the same tiles, written by
// codegen/neon for the 32 V registers of 4 lanes (VLD1R broadcasts,
// VFMLA into up to 28 registers of accumulators), and with a polynomial
// exp the online softmax of a key block as amd64's assembly does it, a
// vector of 4 query lanes at a time, with codegen/neon's Exp; with
// exp=f64 the softmax is the plain form's scalar Go. Causal kernels skip
// the blocks above the diagonal and mask the crossing ones in Go, as on
// amd64. The default on arm64 is NEON, 6×2 tiles (6×1 where a block
// holds 4 query rows), an untuned guess; where S < 4 no block holds a
// vector of query rows and the default is scalar. None of it has run on
// arm64 hardware: TestARM64Kernels runs it under qemu (docs/arm64.md).
//
// Rescaling happens only when a row's maximum grows (in the lanes layout,
// alpha is exactly 1 in the lanes whose maximum did not grow). The polynomial exps
// give e^0 = 0.9999993 (poly4), not 1, and rescaling every block by it
// weighs the first keys of a row less by (1-7e-7)^(S/bc): 7e-4 relative at
// S = 1000, bc = 1, which the tests caught.
//
// # Knobs
//
//	vec      1, 8, 16              scalar Go, archsimd.Float32x8, archsimd.Float32x16; along D and a key
//	                               block (rows), along the query rows (lanes); on arm64 1 or 4 (NEON)
//	br       1, 4, 8, 16, 32, 64   query rows per unit (those ≤ S, and 1)
//	bc       1, 4, 8, 16, 32, 64   keys per block (those ≤ S, and 1)
//	exp      f64                   math.Exp in float64 (codegen/golang.Exp degree 0)
//	         poly4, poly5          range reduction and a degree-4 or -5 polynomial (degree 4, 5)
//	threads  1 … cores             goroutines, the caller included; 1 starts none
//	layout   rows, lanes           query rows along D, or in the vectors' lanes (transposed)
//	mr       1, 2, 4, 6, 8, 12     lanes: keys, and rows of D, per register tile
//	nv       1, 2, 4               lanes: vectors of query rows per register tile
//	micro    go, asm               lanes: register tiles in archsimd Go, or in Go assembly (codegen/goasm, codegen/neon)
//	convert  copy, dot             bf16 and f16: float32 copies of the arguments, or (bf16) Q·Kᵀ and P·V on bf16
//	                               pairs with VDPBF16PS (# bf16 and f16); f32 kernels are the same for both
//
// Constraints: vec8_needs_avx2_fma and vec16_needs_avx512 (from the
// target's ISA); threads_at_most_blocks (threads ≤ B·H·⌈S/br⌉, a goroutine
// without a unit is waste); rows_has_no_tile (the rows layout takes mr = nv
// = 1, so that the space holds no copies of its points);
// lanes_tile_divides_br (nv·vec divides br); asm_needs_lanes_vectors
// (assembly tiles are the lanes layout's, at 8 or 16 lanes, or 4 on arm64);
// neon_needs_asm (arm64 only: NEON is assembly tiles);
// register_budget (Go tiles: mr·nv accumulators, nv loaded vectors and a
// broadcast ≤ 14, as Go allocates about 15 vector registers, and ≤ 8 at
// vec=8, where larger tiles spill in the loop; assembly
// tiles: mr·nv + nv + 2 ≤ 32 registers at 16 and 4 lanes, 16 at 8);
// dot_needs_avx512_bf16 (convert=dot where the CPU has VDPBF16PS, so that
// gen installs it only there); needs_cpu_target (the template has only a Go
// emitter, so every point is invalid on a CUDA target). The scalar point
// vec=1,br=1,bc=1,threads=1 in the rows layout is valid for every shape on
// every CPU.
//
// # CUDA
//
// CUDATemplate and CUDATemplateCausal (cuda.go) emit one CUDA C kernel
// per config, FlashAttention-2 style in float32 without tensor cores: a
// thread block per br query rows of one head (grid ⌈S/br⌉ × B·H), Q's rows
// in shared memory once, scaled by 1/√D·log2(e) so that the weights are
// exp2f of the scores minus their running maximum; then K and V in tiles
// of bc keys through shared memory (kv_copy=sync: plain loads into one
// buffer; cp_async: cp.async into two, the next tile copied while this
// one is used, sm_80 and newer). D is a compile-time constant: the tiles
// are zero-padded to a multiple of 4 columns (and of the threads along a
// row) so every loop has a fixed trip count and no check. A block has
// 32·warps threads; thread (ty, tx) holds tm = br/ty query rows (i·ty+ty)
// and, of each tile, tn keys (j·tx+tx), tx = bc/tn threads per row group,
// all in one warp. Per tile it computes its tm×tn scores as a register
// tile (a float4 of Q and of K per four columns of D), takes each row's
// maximum over its row group by shuffles, rescales its running sum and
// output by exp2f(m_old - m_new), writes the weights to shared memory
// (__syncwarp: a row's weights are its own warp's) and adds P·V for its
// rows and its D/tx output columns, a float4 of P per four keys and of V
// per four columns when D is a multiple of 4·tx. At the end the row
// sums are reduced over the row group and O = acc/l is stored.
//
//	br        16 … 128      query rows per thread block
//	bc        16 … 128      keys per tile
//	warps     1, 2, 4, 8    warps per thread block
//	tn        2, 4, 8       keys per thread and tile
//	kv_copy   sync          K and V tiles loaded, one buffer
//	          cp_async      cp.async, double-buffered
//	          mma           bf16, f16: tensor cores (below); f32 and
//	                        shape-generic kernels: cp_async
//
// Constraints: row_in_warp (bc/tn ≤ 32 threads per row group),
// rows_per_thread (br a multiple of the row groups, at most 8 rows a
// thread), tile_within_shape, grid_fits (B·H ≤ 65535), and from the
// target's limits threads_per_block, shared_memory_per_block (against
// the opt-in limit), registers_per_thread (an estimate: tm·tn scores,
// tm·D/tx outputs, fragments, 32 more) and cp_async_needs_sm80; on a CPU
// target needs_cuda_target rejects every point.
//
// Keys past S get the score -Inf and rows past S are computed on zeros
// and not stored. The running maxima start at -3e38, finite, as on the
// CPU. The causal kernel visits key tiles only up to its last row, masks
// keys after the row only in the tiles that cross the diagonal, and runs
// the blocks of rows in reverse order, so that those with the most tiles
// start first; measure/cuda/emu's TestCausalSkips proves that no key tile
// above the diagonal is read (K and V NaN there, the rows below still
// right). Skipping halves the work, but not the time of a grid of one
// wave: at 1x8x1024x64 on an H100 (docs/benchmarks.md) the tuned causal
// kernel took as long as the non-causal one, whose 128 blocks fill the
// 132 SMs once, so the time is the longest block's, which a causal block
// of the same rows matches. Pairing a short block of rows with a long one
// in one thread block (or splitting keys) would balance that case; it is
// not done. The CUDA revisions (cudaRevision, cudaCausalRevision) guard
// the golden files testdata/cuda_*.golden as the CPU's revisions do.
//
// bf16 and f16 (--dtype): Q, K, V and O are 16-bit, converted as they are
// loaded into the float32 tiles in shared memory (codegen/cuda's
// HalfHelpers; Q scaled after conversion) and O rounded to nearest even
// as it is stored, so the scores, the online softmax and P·V are the
// float32 kernel's. A load is 8 elements (16 bytes) where D is a multiple
// of 8, else 4, 2 or 1; a store is wv elements as in float32. cp.async
// copies bytes and cannot convert, so kv_copy=cp_async is the sync copy
// with one buffer in 16 bits. Not done: tiles kept in 16 bits in shared
// memory and converted at use (half the footprint, larger tiles; a knob).
// testdata/cuda_half_* hold 16-bit goldens.
//
// kv_copy=mma in bf16 and f16 (cudamma.go) is FlashAttention-2 on tensor
// cores: warp w of a block owns MT m16 tiles of query rows, rows
// 16·MT·w..16·MT·(w+1)-1, where br = 16·MT·warps and MT is 1 or 2 (no
// knob: br and warps say it). With two tiles, as FlashAttention-2's 128
// rows on 4 warps, each K and V B fragment loaded by ldmatrix feeds twice
// the mma, halving shared-memory reads per mma. Q's tile and K's and V's
// (two stages, cp.async) stay 16-bit in shared memory, rows padded by 8
// elements; with one tile Q's A fragments are loaded once by ldmatrix and
// kept in registers, with two they are reloaded from shared memory each
// step of 16 (FlashAttention-2 does too), so that D = 128 fits in
// registers. K's and V's tiles are separate groups of cp.async copies,
// in FlashAttention-2's order: V's tile kt is in flight while Q·Kᵀ runs,
// K's tile kt+1 while P·V runs, two barriers a key tile. Per key tile, S = Q·Kᵀ by mma.sync m16n8k16 (K's B
// fragments by ldmatrix of its rows), masked, the online softmax on the
// accumulator fragments (a row's lanes are a quad: maxima and sums by
// __shfl_xor_sync 1 and 2) over the unscaled scores, the weights
// exp2(s·c − m·c) with c = 1/√D·log2(e) by one FMA a score; the C fragments of two n8 key groups are, narrowed in pairs,
// the A fragment of P, and O += P·V by mma with V's B fragments from
// ldmatrix.trans. O is divided by l and rounded to nearest even. Causal:
// tiles past the block's last row are not copied, a warp skips tiles past
// its own last row, and only tiles crossing the diagonal are masked. Its
// constraint mma_tiles: sm_80 (cp_async_needs_sm80), D a multiple of 16
// up to 128, br = 16·warps or 32·warps, bc a multiple of 16, and tn the least the
// CUDA-core form takes with the other knobs (tn means nothing here; the
// CUDA-core constraints still hold, as float32 kernels of the config run
// that form, so shared memory is checked against the float32 footprint:
// conservative, it drops D = 128 with large tiles on sm_86 and sm_89).
// The registers estimate (mmaRegs) is MT·(D/2 + bc/2 + 8) plus Q's
// fragments (D/4 with one tile, 8 with two) plus 32, and it alone is
// registers_per_thread for kv_copy=mma: a float32 kernel of such a config
// may spill (slower, still correct), where the CUDA-core form's count
// would forbid two tiles at D = 128. Two tiles at D = 128 and bc = 32 is
// 216 by the estimate, under 255; the CUDA-core shared-memory check
// still drops br = 128 with bc = 64 there. It is the default where
// valid (br=64,bc=64,warps=4, else br=16,bc=16,warps=1). The weights
// rounded to the dtype are in the tolerance (Accuracy). measure/cuda/emu's
// TestAttentionMMA runs it at odd shapes on every input set, and
// TestAttentionMMAPlantedBug shows that a C→A mapping off by a fragment
// and a missing quad reduction fail there. A float32 search leaves
// kv_copy=mma out (SearchConstraints: its float32 kernel is cp_async's),
// and cudaEstimate ranks the tensor-core configs of a 16-bit search first,
// two m16 tiles a warp before one, so that a short tune's first batch
// tries them. The form with one tile a warp and K and V in one copy group
// ran on an H200 on 2026-11-28, correct, at 0.74–0.77× SDPA's flash
// backend after short tunes (docs/benchmarks.md); two tiles and the
// separate groups have not run on a GPU. Not done: a shape-generic
// tensor-core kernel (the generic kernel of an mma config is the CUDA-core
// one) and a stages knob.
//
// Asked for a kernel without a shape, the CUDA templates emit the
// shape-generic kernel of the config: `..., int b, int h, int s, int d`
// after the pointers, d at most 128 (cudaGenericMaxD: the output
// accumulators are registers sized for it; CUDALaunch.Max), every tile of
// rows and keys checked against S, Q, K and V loaded and O stored a float
// at a time, 1/√D computed in the kernel, and the tiles' columns D rounded
// up to 4 and to the threads of a row, which sizes the dynamic shared
// memory on the host (kernels.CUDASize); in 16 bits it loads an element
// at a time too, so no row needs to be aligned. Its golden files
// (testdata/cuda_generic_*) carry cudaGenericRevision; measure/cuda/emu's
// TestGeneric runs it at odd shapes.
//
// # Accuracy
//
// Inputs are assumed at most inputBound = 4 in magnitude, as the tuner's
// harness draws them (±[0.125, 4]). Tolerance is |got-want| ≤ abs + rel·|want|
// with rel = 4·2^-24 and
//
//	σ   = 8·2^-24·D·inputBound² / √D      the error of a scaled score: gemm's bound for a dot of length D, times 1/√D
//	δ   = σ + 88·2^-24 + 2.7e-6          the relative error of a weight: the score, s-m rounded in float32
//	                                     (weights below e^-88 do not count), the worst exp (poly4)
//	abs = inputBound · (2δ + 8·2^-24·(1+√S))
//
// O is a convex combination of V's rows, so relative errors δ in the
// weights move it by at most 2δ·max|v|; the float32 sums over S keys (the
// running sum, the output rows) add an error that grows like √S. Errors of
// alpha and of the row maximum cancel: the same float32 value scales both
// acc and l, and a common shift of the scores leaves the softmax alone.
// abs is 1.3e-4 at 1x1x1x1, 2.1e-4 at 1x3x7x5, 5.7e-4 at D = 64, S = 64,
// 6.1e-4 at D = 64, S = 1024 and 6.7e-4 at D = 80, S = 1000. Over the test grid the largest error
// of a generated kernel is about 0.03 of it and of the naive baseline
// (one float32 accumulator per dot) 0.06: the bound is loose for D but it
// still caught the 1e-3 drift above. A large score gap is safe: arguments of
// exp are always ≤ 0 (score - running maximum), the polynomial exps clamp
// at -88 and give exactly 0 below, and the running maxima start at
// -MaxFloat32, not -Inf, so that the first rescaling is e^(-huge) = 0, not
// NaN. The tests' "large" inputs make most weights underflow this way.
//
// In bf16 and f16 abs also has inputBound·u (u the dtype's unit roundoff,
// 2^-8 and 2^-11): the tensor-core kernels and the CPU's convert=dot round
// each weight to the dtype for P·V, as FlashAttention does, by at most u
// relative. The output's own rounding is in rel. Where l sums the float32
// weights (the tensor-core kernels, as FlashAttention), O moves by at most
// u·max|v|. Where l sums the rounded weights (convert=dot, dot.go), O stays
// a convex combination of v's rows: with weights p_c·(1+η_c), |η_c| ≤ u,
// and w_c = p_c/Σp,
//
//	O' - O = Σ w_c·(η_c - η̄)·(v_c - m) / (1 + η̄)    for every m, η̄ = Σ w_c·η_c
//
// since Σ w_c·(η_c - η̄) = 0; and Σ w_c·|η_c - η̄| ≤ u (the mean deviation
// of values in [-u, u]), so |O' - O| ≤ u/(1-u)·max_c|v_c - m|: the half
// range of v's column rather than its largest magnitude, and exact for a
// constant column. Against the tolerance, with the float32 errors δ of the
// weights in η too (|η| ≤ u + δ + uδ), that is (u + δ)·inputBound to first
// order, within abs's (u + 2δ)·inputBound; the second-order terms, about
// u² = 1.5e-5 times inputBound, fit in the other δ, at least 1.56e-5 (at
// D = 1: barely), and the float32 sums' term. On TestDotKernels' shapes
// and input sets the largest error of a bf16 dot kernel grew from 0.32 of
// the tolerance (float32 weights) to 0.42 with the rounded ones; with l
// summing the float32 weights instead it was 0.44.
//
// # Work
//
// FLOPs is 4·B·H·S²·D (two products of 2·S²·D per head; the softmax's
// O(S²) is not counted). Bytes is 4·4·B·H·S·D: the four tensors once.
//
// # Causal attention
//
// Causal masking changes the result, so it is not a knob; it is a second
// op, attention_causal, and a second template, TemplateCausal: query row i
// attends to key rows j ≤ i, O = softmax(Q·Kᵀ/√D + M)·V with M[i][j] = -Inf
// above the diagonal. op.go declares both ops: CausalOp has the same Args,
// Bytes and Tolerance (a causal row sums fewer keys), a masked reference
// and FLOPs 2·B·H·D·S·(S+1), the two products over the S(S+1)/2 pairs
// j ≤ i: about half of Op's. Both list the variant flag causal, so that
// `--op attention --causal` names attention_causal. newTemplate (cpu.go)
// builds both CPU templates; TemplateCausal has the same space, its own
// revision, and masked baselines.
//
// The emitter is shared, with a causal flag. In the lanes layout a unit
// meets the key blocks up to the one holding its last row, i0+rows-1, and
// a block that reaches past i0 gets its scores masked before the softmax:
// key c of the block, key j0+c of the head, and lane i, row i0+i, with
// i < c+j0-i0 get -Inf, whose weight is 0. In the rows layout a causal
// unit i0 meets keys
// only up to its last row, i0+rows-1: first the full blocks entirely at or
// below the diagonal (every key ≤ i0) with the unmasked keys function,
// then the full blocks up to key i0+rows-1 with a masked one, then the
// last, partial block, masked, if the unit reaches it; blocks above the
// diagonal are never touched, which is the saving. The masked function
// takes off = j0-i0 and gives row r the n = min(bc, r-off+1) keys c with
// c+j0 ≤ r+i0: the scores of the others are -Inf (weight e^-Inf = 0), the
// weighted sum of V stops at n, and a row with n ≤ 0 (above the whole
// block, when br > bc) is left alone. Every row meets key 0, so none is
// all -Inf. Units are then unequal work, growing with i0, so with threads
// they are dealt snake-wise: in odd rounds of threads units goroutine t
// takes unit threads-1-t of the round, not t.
//
// # Shape-generic kernels
//
// The templates' Go emitter, asked for a kernel without a shape, emits
// (with the assembly for micro=asm) the same kernels with the shape an
// argument, func(out, q, k, v []float32, b, h, s, d int), for any config
// valid at some shape. The differences from the specialised kernels:
//
//   - The state of a goroutine holds D and slices of br·D floats (rows
//     layout: acc; lanes layout: qt and ot), allocated once per goroutine
//     per call; the blocks of weights keep their constant sizes.
//   - Every key block, the last partial one included, goes through one
//     keys function (rows layout) whose number of keys, cols ≤ bc, is an
//     argument; its partial vector of weights is padded with -Inf from a
//     table (golang.F32.InfTail). A causal unit meets the full blocks at or
//     below the diagonal unmasked and the blocks up to its last row masked.
//   - Loops along D are tested at run time (golang.F32.SweepN): the dot
//     products keep four accumulators, and the output rows are swept in
//     groups of four vectors, then single vectors, then the partial one.
//     In the lanes layout the output's tiles cover D in tiles of mr rows
//     and the rest one row at a time; the assembly tiles take D as the
//     stride of k's rows and the depth of the scores, and as the step of v
//     (goasm.Runtime).
//   - br and bc may exceed S (a block is cut at S, as the last block of a
//     head always is), and threads_at_most_blocks is applied at run time:
//     only min(threads, units) goroutines start. With fewer units than
//     threads there is one round of units, so the causal snake deals as
//     in the specialised kernel.
//
// The golden files of generic code carry genericRevision and
// causalGenericRevision (cpu.go), not the templates' revisions: the tuner
// measures specialised kernels only, so the generic code is not part of
// Version; bump them when it changes.
//
// # Baselines
//
// autotune bench compares the tuned kernel with two baselines (baseline.go),
// both of which materialise the S×S scores of a head, once per call:
//
//	naive  plain Go loops from the formula, one goroutine; left out above
//	       2e10 FLOPs a call (half a minute at its speed)
//	gonum  a composition of library calls: blas32.Gemm for Q·Kᵀ/√D (alpha
//	       1/√D, K transposed by the call), a plain softmax per row (math.Exp
//	       in float64, a float64 sum), blas32.Gemm for the weights times V
//
// Both are left out where the scores would take more than 1 GiB (S > 16384).
// The causal naive baseline computes only the scores j ≤ i; the causal gonum
// baseline computes the full product, as a composition of BLAS calls must,
// masks it (softmax over j ≤ i, weights 0 above the diagonal) and multiplies
// the full S×S weights by V.
//
// Built with the onednn tag (onednn.go; Debian's libdnnl-dev), there is a
// third, onednn: the composition a framework's CPU path runs, in oneDNN
// primitives over all B·H heads at once and a buffer of all their scores,
// kept from call to call (C memory, which ALLOC does not count): a batched
// matmul for Q·Kᵀ (K transposed by strides) with 1/√D as output scale, the
// causal mask (0 or -Inf) added to the full product by a binary post-op,
// oneDNN's softmax in place, a batched matmul by V. It is left out where
// the scores of all heads would take more than 1 GiB. onednn-bf16 and
// onednn-f16 are the same composition with every buffer, the scores
// too, in bf16 or f16, for workloads of that dtype, left out where
// oneDNN lacks a primitive on the CPU (package kernels/onednn asks it);
// onednn-bf16 is known wrong on every input set (its scores in bf16).
//
// # Version
//
// Template.Version is revision (in cpu.go) and a hash of the knob
// space of a fixed workload and target, so it changes by itself when a
// knob, a value or a constraint does. When the emitted code changes, bump
// revision by hand ("attention-5" to "attention-6"), and causalRevision
// ("attention-causal-5") when the causal kernels' code changes, which a
// change to the shared emitter usually does; TestGolden refuses to rewrite
// golden files whose code changed unless their template's revision changed
// too. The 16-bit goldens (TestGoldenHalf: testdata/*_bf16* and *_f16*,
// with testdata/golden_half.sum) carry the same revisions, and the plain
// form of a bf16 dot config is among TestGoldenPlain's, so a change to
// the bf16 or f16 code alone (dot.go, kernels/halfcopy, the conversions of
// codegen/golang and codegen/goasm) needs the bumps too.
//
// # bf16 and f16
//
// Both CPU templates serve bf16 and f16 with their float32 kernels on
// float32 copies of q, k, v and o (package kernels/halfcopy, convert=copy):
// the copies cost O(B·H·S·D) beside the O(B·H·S²·D) arithmetic, so only
// fewer or cheaper multiply-adds make a 16-bit kernel faster than the
// float32 one. convert=dot (dot.go) is that for bf16 where AVX512-BF16
// exists: both products' register tiles multiply bf16 pairs with
// VDPBF16PS, two products a lane per instruction. The scores run on k
// packed as pairs of D and the query rows kept as pairs, unscaled (exact:
// q is bf16); the softmax multiplies its exp arguments by 1/√D instead.
// The softmax and its statistics stay float32; then the weights are
// rounded to bf16 (nearest even) and paired along the keys, and P·V runs
// on them and on v packed once per call as pairs of keys within each
// block of bc keys (rows 2t and 2t+1 of a block interleaved column by
// column, the layout of gemm's B, in assembly 16 columns a step), an odd
// block's last pair zero in its high half. The running sums add up the
// rounded weights, so that O is a convex combination of v's rows (see
// Accuracy above). Only specialised kernels of the lanes layout with 16-lane
// assembly tiles have the form, and the space offers convert=dot with
// those tiles only (dot_needs_asm_lanes_16; until attention-6 it offered
// the value with every config, each the copying form under a second
// name). An f16 kernel of convert=dot (no dot instruction here; an f16
// search leaves the value out, kernels.SearchSpace) and every
// shape-generic kernel is the copying form. TestDotKernels checks it at
// S = 16, 17, 19, 23, 37 (its blocks of 16 query rows need S ≥ 16), D =
// 1, 3, 5, 7, 21, 64 and bc = 1, 4, 8, 16, 32 (blocks of an odd number of
// keys), causal and not, one and two goroutines, archsimd and plain;
// TestDotPlantedPairOrder shows that k's pairs of D, or v's pairs of
// keys, packed high half first fail the reference check. Until
// attention-7 P·V was float32 on a float32 copy of v. Not done:
// converting K and V in blocks rather than whole, q packed as pairs like
// k (Load then a plain transpose, with no float32 copy of q), and
// weights written as pairs by the softmax itself (a pass over the
// block's weights less); a profile (docs/benchmarks.md) gives them 4.6%
// and 4% of the time, the tiles 71%.
// The CUDA templates convert as they load (# CUDA above).
package attention
