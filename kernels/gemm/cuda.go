package gemm

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/codegen/cuda"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaRevision is bumped by hand whenever the emitted CUDA changes in a way
// the knob space does not show (see the package doc). The epilogue
// templates share it: their code is this code with a different store.
const cudaRevision = "gemm-cuda-4"

// cudaGenericRevision is cudaRevision's counterpart for the shape-generic
// kernels, which are not part of Version.
const cudaGenericRevision = "gemm-cuda-generic-3"

// CUDATemplate is the CUDA template of Op: block tiles in shared memory;
// in float32 register tiles of C per thread and FMA without tensor cores,
// in bf16 and f16 warp tiles of mma.sync fragments on tensor cores (see
// the package doc).
var CUDATemplate = cudaTemplate(noEpilogue, Op)

// BiasCUDATemplate and BiasReLUCUDATemplate are the CUDA templates of
// BiasOp and BiasReLUOp: the bias (and the ReLU) are applied to the
// register tile as it is stored.
var (
	BiasCUDATemplate     = cudaTemplate(biasEpilogue, BiasOp)
	BiasReLUCUDATemplate = cudaTemplate(biasReLUEpilogue, BiasReLUOp)
)

func cudaTemplate(e epilogue, op kernels.Op) kernels.Template {
	op.DTypes = cudaDTypes
	return kernels.Template{
		Op:      op,
		Backend: kernels.CUDA,
		Version: cudaVersion(e),
		Space:   cudaSpace,
		// The space's shared-memory constraint takes the float32 or the
		// 16-bit kernel's, whichever is smaller; a search adds its
		// dtype's.
		SearchConstraints: func(shape []int, dt dtype.DType, target device.Target) []schedule.Constraint {
			if target.GPU == nil {
				return nil
			}
			dt = cmp.Or(dt, dtype.Default)
			return []schedule.Constraint{{Name: "shared_memory_per_block_" + string(dt), OK: func(c schedule.Config) bool {
				return cudaSharedBytes(shape, dt, c) <= target.GPU.SharedMemPerBlockOptin
			}}}
		},
		Estimate: cudaEstimate,
		CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
			k.Want("", cudaDTypes...)
			if dt := cmp.Or(k.DType, dtype.Default); dt != dtype.F32 {
				return emitCUDAHalf(k.Name, k.Shape, dt, k.Config, e, op.Name)
			}
			if k.Shape == nil {
				return emitCUDAGeneric(k.Name, k.Config, e, op.Name)
			}
			return emitCUDA(k.Name, k.Shape, k.Config, e, op.Name)
		}),
	}
}

// cudaDTypes are the element types of the CUDA kernels: float32 on the
// FMA units, bf16 and f16 on tensor cores (sm_80 and later).
var cudaDTypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

// CUDA knob values, in the order mutation walks.
var (
	cudaBMs    = []int{32, 64, 128, 256}
	cudaBNs    = []int{32, 64, 128, 256}
	cudaBKs    = []int{8, 16, 32, 64}
	cudaTMs    = []int{2, 4, 8}
	cudaTNs    = []int{4, 8, 16}
	cudaVecs   = []int{1, 4}
	cudaCopies = []string{"regs", "cp_async"}
	cudaStages = []int{1, 2, 3, 4}
	cudaRaster = []int{1, 8}
)

// cudaRegOverhead is what a thread needs besides its tiles (indices,
// pointers, loop counters), in registers, for the estimate behind the
// registers_per_thread constraint.
const cudaRegOverhead = 28

// cudaGeometry is what a config and a shape fix about a kernel. A
// shape-generic kernel's has no m, n, k (0) and generic set.
type cudaGeometry struct {
	generic         bool
	m, n, k         int
	bm, bn, bk      int
	tm, tn          int
	va, vb          int // floats per global load of A and of B
	copy            string
	stages          int
	raster          int // rows of C's block tiles in a group of the launch order
	tx, ty, threads int // threads along N and M, and in all
	lda             int // floats per row of A's tile in shared memory
	aVecs, bVecs    int // vectors of a tile of A and of B
	aLoads, bLoads  int // of them per thread, rounded up
	smem            int // dynamic shared memory, bytes
	regs            int // registers per thread, estimated
	idx             string
}

func newCUDAGeometry(shape []int, c schedule.Config) cudaGeometry {
	m, n, k := checkShape(shape)
	g := cudaGeometry{
		m: m, n: n, k: k,
		bm: c.Int("bm"), bn: c.Int("bn"), bk: c.Int("bk"),
		tm: c.Int("tm"), tn: c.Int("tn"),
		va: c.Int("vec_a"), vb: c.Int("vec_b"),
		copy: c.Str("copy"), stages: c.Int("stages"), raster: c.Int("raster"),
	}
	g.tx, g.ty = g.bn/g.tn, g.bm/g.tm
	g.threads = g.tx * g.ty
	// Four floats of padding keep rows 16-byte aligned and put rows four
	// apart (one thread's rows and the next one's) in different banks.
	g.lda = g.bk + 4
	g.aVecs, g.bVecs = g.bm*g.bk/g.va, g.bk*g.bn/g.vb
	g.aLoads, g.bLoads = ceilDiv(g.aVecs, g.threads), ceilDiv(g.bVecs, g.threads)
	g.smem = 4 * g.stages * (g.bm*g.lda + g.bk*g.bn)
	g.regs = g.tm*g.tn + 4*g.tm + g.tn + cudaRegOverhead
	if g.copy == "regs" && g.stages == 2 {
		g.regs += g.aLoads*g.va + g.bLoads*g.vb // the next tiles, in flight
	}
	g.idx = "int"
	if int64(m)*int64(k) >= 1<<31 || int64(k)*int64(n) >= 1<<31 || int64(m)*int64(n) >= 1<<31 {
		g.idx = "long long"
	}
	return g
}

// cudaSharedBytes is the dynamic shared memory of the kernel of c for
// shape in dt.
func cudaSharedBytes(shape []int, dt dtype.DType, c schedule.Config) int {
	if dt.Size() == 2 {
		return halfSharedBytes(c)
	}
	return newCUDAGeometry(shape, c).smem
}

// blockOrigin emits m0 and n0, the first row and column of the block's
// tile of C. With raster 1 the block's index is its tile's: the GPU
// starts blocks x first, so the blocks running at once sweep a row or two
// of tiles and read all of B. With raster r > 1 the blocks (in that
// order) go down the columns of groups of r rows of tiles, so that those
// running at once read r panels of A and few of B, which L2 then holds.
func blockOrigin(w *cuda.Writer, raster int) {
	if raster == 1 {
		w.Line("const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;")
		return
	}
	w.Line("// Blocks in launch order go down the columns of groups of %d rows of tiles.", raster)
	w.Line("int tile_m, tile_n;")
	w.Scope()
	w.Line("const int id = blockIdx.y * gridDim.x + blockIdx.x, group = id / (%d * gridDim.x);", raster)
	w.Line("const int first = group * %d, rows = min((int)gridDim.y - first, %d), in = id - first * gridDim.x;", raster, raster)
	w.Line("tile_m = first + in %% rows, tile_n = in / rows;")
	w.Close()
	w.Line("const int m0 = tile_m * BM, n0 = tile_n * BN;")
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ceilPow2 is the least power of two ≥ n.
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// cudaSpace returns the knobs for shape on target, with the target's
// limits on threads, shared memory and registers. A CPU target gets the
// same knobs with every point invalid.
func cudaSpace(shape []int, target device.Target) *schedule.Space {
	m, n, k := checkShape(shape)
	gpu := target.GPU
	constraints := []schedule.Constraint{
		{Name: "whole_warps", OK: func(c schedule.Config) bool {
			return (c.Int("bn")/c.Int("tn"))*(c.Int("bm")/c.Int("tm"))%32 == 0
		}},
		// A block tile much larger than the matrix would compute padding.
		{Name: "tile_within_shape", OK: func(c schedule.Config) bool {
			return c.Int("bm") <= max(32, ceilPow2(m)) && c.Int("bn") <= max(32, ceilPow2(n)) && c.Int("bk") <= max(8, ceilPow2(k))
		}},
		// float4 loads need every row of the matrix to start 16 bytes
		// aligned: K (rows of A) or N (rows of B) a multiple of 4.
		{Name: "vec_a_aligned", OK: func(c schedule.Config) bool { return c.Int("vec_a") == 1 || k%4 == 0 }},
		{Name: "vec_b_aligned", OK: func(c schedule.Config) bool { return c.Int("vec_b") == 1 || n%4 == 0 }},
		// Copying through registers overlaps at most the next tile.
		{Name: "regs_copy_two_stages", OK: func(c schedule.Config) bool { return c.Str("copy") != "regs" || c.Int("stages") <= 2 }},
		{Name: "grid_fits", OK: func(c schedule.Config) bool { return ceilDiv(m, c.Int("bm")) <= 65535 }},
	}
	if gpu == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cuda_target", OK: func(schedule.Config) bool { return false }})
	} else {
		constraints = append(constraints,
			schedule.Constraint{Name: "cp_async_needs_sm80", OK: func(c schedule.Config) bool {
				return c.Str("copy") != "cp_async" || gpu.Major >= 8
			}},
			schedule.Constraint{Name: "threads_per_block", OK: func(c schedule.Config) bool {
				return (c.Int("bn")/c.Int("tn"))*(c.Int("bm")/c.Int("tm")) <= gpu.MaxThreadsPerBlock
			}},
			// The kernel of some dtype fits; SearchConstraints adds the
			// searched dtype's.
			schedule.Constraint{Name: "shared_memory_per_block", OK: func(c schedule.Config) bool {
				return min(newCUDAGeometry(shape, c).smem, halfSharedBytes(c)) <= gpu.SharedMemPerBlockOptin
			}},
			schedule.Constraint{Name: "registers_per_thread", OK: func(c schedule.Config) bool {
				g := newCUDAGeometry(shape, c)
				return g.regs <= gpu.MaxRegistersPerThread && g.regs*g.threads <= gpu.RegistersPerBlock
			}})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("bm", cudaBMs...),
		schedule.Choice("bn", cudaBNs...),
		schedule.Choice("bk", cudaBKs...),
		schedule.Choice("tm", cudaTMs...),
		schedule.Choice("tn", cudaTNs...),
		schedule.Choice("vec_a", cudaVecs...),
		schedule.Choice("vec_b", cudaVecs...),
		schedule.Enum("copy", cudaCopies...),
		schedule.Choice("stages", cudaStages...),
		schedule.Choice("raster", cudaRaster...),
	}, constraints...)
}

// cudaVersion hashes the revision, the epilogue and the space of
// 2048x2048x2048 on sm_90.
func cudaVersion(e epilogue) string {
	ref, err := device.Lookup("sm_90")
	if err != nil {
		panic(err)
	}
	rev := cudaRevision
	if e.bias {
		rev = strings.Replace(cudaRevision, "gemm", "gemm-"+strings.ReplaceAll(e.String(), " ", "-"), 1)
	}
	return kernels.Version(rev, cudaSpace([]int{2048, 2048, 2048}, ref), "epilogue "+e.String())
}

// emitCUDA writes the kernel of cfg for shape with the epilogue e; see the
// package doc for the code's shape.
func emitCUDA(name string, shape []int, cfg schedule.Config, e epilogue, op string) kernels.CUDAKernel {
	g := newCUDAGeometry(shape, cfg)
	w := &cudaWriter{g: g, e: e, op: op}
	w.kernel(name, cfg)
	return kernels.CUDAKernel{
		Source:      w.String(),
		Entry:       name,
		Grid:        [3]int{ceilDiv(g.n, g.bn), ceilDiv(g.m, g.bm), 1},
		Block:       [3]int{g.threads, 1, 1},
		SharedBytes: g.smem,
	}
}

// emitCUDAGeneric writes the shape-generic kernel of cfg with the
// epilogue e: m, n and k are arguments, every tile is checked against
// them, and indices are 64-bit. vec_a=4 and vec_b=4 stay float4 loads, so
// the kernel serves K, or N, a multiple of 4 only (CUDALaunch.Multiple),
// as the space requires of the tuned shape.
func emitCUDAGeneric(name string, cfg schedule.Config, e epilogue, op string) kernels.CUDAKernel {
	g := newCUDAGeometry([]int{1, 1, 1}, cfg)
	g.generic, g.m, g.n, g.k, g.idx = true, 0, 0, 0, "long long"
	w := &cudaWriter{g: g, e: e, op: op}
	w.kernel(name, cfg)
	return kernels.CUDAKernel{Source: w.String(), Entry: name, Generic: &kernels.CUDALaunch{
		Block:    [3]int{g.threads, 1, 1},
		Grid:     [3][]kernels.CUDAFactor{{{Dim: 1, Div: g.bn}}, {{Dim: 0, Div: g.bm}}},
		Shared:   kernels.CUDASize{Base: g.smem},
		Multiple: []int{1, g.vb, g.va},
	}}
}

// tail reports whether extent x may leave a partial tile of b: always in
// a generic kernel.
func (g cudaGeometry) tail(x, b int) bool { return g.generic || x%b != 0 }

type cudaWriter struct {
	g  cudaGeometry
	e  epilogue
	op string // the op's name, for the header
	cuda.Writer
}

func (w *cudaWriter) kernel(name string, cfg schedule.Config) {
	g := w.g
	w.Line("// Code generated by autotune. DO NOT EDIT.")
	if g.generic {
		w.Line("// template %s (generic %s), %s of any shape, float32: %s", cudaVersion(w.e), cudaGenericRevision, w.op, w.e.formula())
		w.Line("// config %s", cfg)
		w.Line("// launch: grid ceil(n/%d)xceil(m/%d), block %d, dynamic shared memory %d bytes", g.bn, g.bm, g.threads, g.smem)
	} else {
		w.Line("// template %s, %s %dx%dx%d float32: %s", cudaVersion(w.e), w.op, g.m, g.n, g.k, w.e.formula())
		w.Line("// config %s", cfg)
		w.Line("// launch: grid %dx%d, block %d, dynamic shared memory %d bytes", ceilDiv(g.n, g.bn), ceilDiv(g.m, g.bm), g.threads, g.smem)
	}
	w.Line("")
	w.Line("// lane returns component j of v; j is a constant once loops unroll.")
	w.Line("__device__ __forceinline__ float lane(const float4 &v, int j) { return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w; }")
	w.Line("")
	if g.copy == "cp_async" {
		w.Raw(cuda.CPAsyncHelpers)
		w.Line("")
	}
	params := "float *__restrict__ c, const float *__restrict__ a, const float *__restrict__ b"
	if w.e.bias {
		params += ", const float *__restrict__ bias"
	}
	if g.generic {
		params += ", int m, int n, int k"
	}
	w.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s)`, g.threads, name, params)
	if g.generic {
		w.Line("const int M = m, N = n, K = k;")
	} else {
		w.Line("constexpr int M = %d, N = %d, K = %d;", g.m, g.n, g.k)
	}
	w.Line("constexpr int BM = %d, BN = %d, BK = %d, TM = %d, TN = %d, STAGES = %d;", g.bm, g.bn, g.bk, g.tm, g.tn, g.stages)
	if g.generic {
		w.Line("constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY, LDA = BK + 4;")
		w.Line("const int KT = (K + BK - 1) / BK;")
	} else {
		w.Line("constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY, LDA = BK + 4, KT = (K + BK - 1) / BK;")
	}
	w.Line("typedef %s idx;", g.idx)
	w.Line("// A's tiles are [STAGES][BM][LDA], B's [STAGES][BK][BN].")
	w.Line("extern __shared__ float4 smem[];")
	w.Line("float *const As = reinterpret_cast<float *>(smem);")
	w.Line("float *const Bs = As + STAGES * BM * LDA;")
	w.Line("const int tid = threadIdx.x, tx = tid %% TX, ty = tid / TX;")
	blockOrigin(&w.Writer, g.raster)
	w.Line("// This thread's tile of C: rows i*TY+ty, columns in groups of four,")
	w.Line("// (q*TX+tx)*4 + 0..3, so that neighbouring threads read neighbouring")
	w.Line("// vectors of B's tile.")
	w.Line("float acc[TM][TN];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int j = 0; j < TN; ++j) acc[i][j] = 0.f;")
	w.Line("")
	switch {
	case g.copy == "cp_async":
		w.Line("// A pipeline of STAGES tiles in flight: tile kt+STAGES-1 is copied")
		w.Line("// while tile kt is multiplied.")
		w.Line("#pragma unroll")
		w.Open("for (int s = 0; s < STAGES - 1; ++s)")
		w.Open("if (s < KT)")
		w.tileLoads("s", "s * BK", "async")
		w.Close()
		w.Line("cp_async_commit();")
		w.Close()
		w.Open("for (int kt = 0; kt < KT; ++kt)")
		w.Open("if (kt + STAGES - 1 < KT)")
		w.Line("const int nk = kt + STAGES - 1;")
		w.tileLoads("nk % STAGES", "nk * BK", "async")
		w.Close()
		w.Line("// Committed even when empty, so that the count of groups is kt+STAGES.")
		w.Line("cp_async_commit();")
		w.Line("cp_async_wait<STAGES - 1>();")
		w.Line("__syncthreads();")
		w.compute("kt % STAGES")
		w.Line("__syncthreads();")
		w.Close()
	case g.stages == 2:
		w.Line("// Double buffering: the next tiles go to registers while this one")
		w.Line("// is multiplied, then to the other buffer.")
		w.regStaging()
		w.tileLoads("0", "0", "fetch")
		w.tileLoads("0", "0", "put")
		w.Line("__syncthreads();")
		w.Open("for (int kt = 0; kt < KT; ++kt)")
		w.Open("if (kt + 1 < KT)")
		w.tileLoads("", "(kt + 1) * BK", "fetch")
		w.Close()
		w.compute("kt & 1")
		w.Open("if (kt + 1 < KT)")
		w.tileLoads("(kt + 1) & 1", "", "put")
		w.Close()
		w.Line("__syncthreads();")
		w.Close()
	default:
		w.Open("for (int kt = 0; kt < KT; ++kt)")
		w.tileLoads("0", "kt * BK", "direct")
		w.Line("__syncthreads();")
		w.compute("0")
		w.Line("__syncthreads();")
		w.Close()
	}
	w.Line("")
	w.store()
	w.Close()
}

// regStaging declares the registers that hold the next tiles with
// copy=regs and stages=2.
func (w *cudaWriter) regStaging() {
	g := w.g
	w.Line("%s ra[%d];", vecType(g.va), g.aLoads)
	w.Line("%s rb[%d];", vecType(g.vb), g.bLoads)
}

func vecType(v int) string {
	if v == 4 {
		return "float4"
	}
	return "float"
}

// tileLoads emits the copy of the tiles of A and B at depth k0 into stage
// (expressions). how is direct (global to shared memory through a
// register), fetch (global to the staging registers ra, rb), put (staging
// registers to shared memory) or async (cp.async).
func (w *cudaWriter) tileLoads(stage, k0, how string) {
	g := w.g
	w.Scope()
	defer w.Close()
	if how != "put" {
		w.Line("const int k0 = %s;", k0)
	}
	if how != "fetch" {
		w.Line("float *const as = As + (%s) * BM * LDA, *const bs = Bs + (%s) * BK * BN;", stage, stage)
	}
	// A: row r of the tile, columns cc..cc+va-1.
	w.loads("A", g.aVecs, g.aLoads, g.va, fmt.Sprintf("const int r = v / %d, cc = v %% %d * %d;", g.bk/g.va, g.bk/g.va, g.va),
		w.cond("m0 + r < M", g.tail(g.m, g.bm), "k0 + cc < K", g.tail(g.k, g.bk)),
		"a + (idx)(m0 + r) * K + k0 + cc", "as + r * LDA + cc", "a", "ra", how)
	// B: row r of the tile, columns cc..cc+vb-1.
	w.loads("B", g.bVecs, g.bLoads, g.vb, fmt.Sprintf("const int r = v / %d, cc = v %% %d * %d;", g.bn/g.vb, g.bn/g.vb, g.vb),
		w.cond("k0 + r < K", g.tail(g.k, g.bk), "n0 + cc < N", g.tail(g.n, g.bn)),
		"b + (idx)(k0 + r) * N + n0 + cc", "bs + r * BN + cc", "b", "rb", how)
}

// cond joins the conditions that are needed; "" when none is.
func (w *cudaWriter) cond(a string, needA bool, b string, needB bool) string {
	var parts []string
	if needA {
		parts = append(parts, a)
	}
	if needB {
		parts = append(parts, b)
	}
	return strings.Join(parts, " && ")
}

func (w *cudaWriter) loads(what string, vecs, per, vec int, rc, ok, src, dst, base, staging, how string) {
	vt := vecType(vec)
	zero := "0.f"
	if vec == 4 {
		zero = "make_float4(0.f, 0.f, 0.f, 0.f)"
	}
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < %d; ++i)", per)
	w.Line("const int v = tid + i * NT; // vector of %s's tile", what)
	if per*w.g.threads != vecs {
		w.Line("if (v >= %d) break;", vecs)
	}
	w.Line("%s", rc)
	okExpr := ok
	if okExpr == "" {
		okExpr = "true"
	}
	load := fmt.Sprintf("*reinterpret_cast<const %s *>(%s)", vt, src)
	if ok != "" {
		load = fmt.Sprintf("%s ? %s : %s", ok, load, zero)
	}
	switch how {
	case "direct":
		w.Line("*reinterpret_cast<%s *>(%s) = %s;", vt, dst, load)
	case "fetch":
		w.Line("%s[i] = %s;", staging, load)
	case "put":
		w.Line("*reinterpret_cast<%s *>(%s) = %s[i];", vt, dst, staging)
	case "async":
		if ok == "" {
			w.Line("cp_async<%d>(%s, %s, true);", 4*vec, dst, src)
		} else {
			w.Line("const bool ok = %s;", okExpr)
			w.Line("cp_async<%d>(%s, ok ? %s : %s, ok);", 4*vec, dst, src, base)
		}
	}
	w.Close()
}

// compute emits the product of the tiles in stage s into acc: per four
// steps of K, one float4 of A per row and one of B per group of columns.
func (w *cudaWriter) compute(stage string) {
	w.Scope()
	w.Line("const float *const as = As + (%s) * BM * LDA, *const bs = Bs + (%s) * BK * BN;", stage, stage)
	w.Line("#pragma unroll")
	w.Open("for (int kk = 0; kk < BK; kk += 4)")
	w.Line("float4 av[TM];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i) av[i] = *reinterpret_cast<const float4 *>(as + (i * TY + ty) * LDA + kk);")
	w.Line("#pragma unroll")
	w.Open("for (int j = 0; j < 4; ++j)")
	w.Line("float4 bv[TN / 4];")
	w.Line("#pragma unroll")
	w.Line("for (int q = 0; q < TN / 4; ++q) bv[q] = *reinterpret_cast<const float4 *>(bs + (kk + j) * BN + (q * TX + tx) * 4);")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int jj = 0; jj < TN; ++jj) acc[i][jj] = fmaf(lane(av[i], j), lane(bv[jj / 4], jj %% 4), acc[i][jj]);")
	w.Close()
	w.Close()
	w.Close()
}

// store writes acc to C through the epilogue, a float4 at a time when N
// is a multiple of 4 (every row of C is then 16-byte aligned).
func (w *cudaWriter) store() {
	g := w.g
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < TM; ++i)")
	w.Line("const int r = m0 + i * TY + ty;")
	if g.tail(g.m, g.bm) {
		w.Line("if (r >= M) break; // rows grow with i")
	}
	w.Line("#pragma unroll")
	w.Open("for (int q = 0; q < TN / 4; ++q)")
	w.Line("const int col = n0 + (q * TX + tx) * 4;")
	w.Line("float4 v = make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]);")
	// A generic kernel stores float4s where it loads them from B: N is a
	// multiple of 4 there.
	if !g.generic && g.n%4 == 0 || g.generic && g.vb == 4 {
		if g.tail(g.n, g.bn) {
			w.Line("if (col >= N) continue;")
		}
		if w.e.bias {
			w.Line("const float4 bb = *reinterpret_cast<const float4 *>(bias + col);")
			w.Line("v.x += bb.x; v.y += bb.y; v.z += bb.z; v.w += bb.w;")
			if act := w.e.act; act != nil {
				w.Line("v.x = %s; v.y = %s; v.z = %s; v.w = %s;", act.cuda("v.x"), act.cuda("v.y"), act.cuda("v.z"), act.cuda("v.w"))
			}
		}
		w.Line("*reinterpret_cast<float4 *>(c + (idx)r * N + col) = v;")
	} else {
		w.Line("#pragma unroll")
		w.Open("for (int e = 0; e < 4; ++e)")
		w.Line("if (col + e >= N) break;")
		x := "lane(v, e)"
		if w.e.bias {
			x += " + bias[col + e]"
		}
		if w.e.act != nil {
			x = w.e.act.cuda(x)
		}
		w.Line("c[(idx)r * N + col + e] = %s;", x)
		w.Close()
	}
	w.Close()
	w.Close()
}
