package gemm

import (
	"fmt"

	"github.com/autotune-dev/autotune/codegen/cuda"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaHalfRevision identifies the emitted code of the bf16 and f16
// kernels (tensor cores) in their headers and golden files. Version does
// not cover it: when the 16-bit code changes, bump cudaRevision too, so
// that records of the old code are no longer the best.
const cudaHalfRevision = "gemm-cuda-mma-3"

// halfGeometry is what a config, a shape and a 16-bit dtype fix about a
// tensor-core kernel. The knobs keep their meaning (see the package doc):
// the block tile is bm×bn×bk (bk at least 16, one mma's depth), the block
// has (bm/tm)·(bn/tn) threads, each of which accumulates tm·tn elements of
// C, so a warp owns a warp tile of wm×wn = 32·tm·tn elements, made of
// m16n8 fragments; copy and stages shape the pipeline; vec_a and vec_b ask
// for 16-byte copies (8 elements), which a row can take only when K (for
// A) or N (for B) is a multiple of 8: elsewhere, and for vec 1, elements
// are copied one at a time.
type halfGeometry struct {
	dt         dtype.DType
	generic    bool
	m, n, k    int
	bm, bn, bk int
	wm, wn     int // warp tile
	threads    int
	stages     int
	raster     int  // as cudaGeometry's
	async      bool // cp.async; else copies through registers
	va, vb     bool // 16-byte copies asked for
	smem       int  // dynamic shared memory, bytes
	idx        string
}

// halfPad is the padding of every row of a tile in shared memory, in
// elements: 16 bytes, which keeps rows 16-byte aligned (cp.async,
// ldmatrix) and puts the eight rows an ldmatrix reads in different banks.
const halfPad = 8

func newHalfGeometry(shape []int, dt dtype.DType, c schedule.Config) halfGeometry {
	m, n, k := checkShape(shape)
	g := halfGeometry{
		dt: dt, m: m, n: n, k: k,
		bm: c.Int("bm"), bn: c.Int("bn"), bk: max(16, c.Int("bk")),
		stages: c.Int("stages"), raster: c.Int("raster"), async: c.Str("copy") == "cp_async",
		va: c.Int("vec_a") == 4, vb: c.Int("vec_b") == 4,
	}
	tm, tn := c.Int("tm"), c.Int("tn")
	g.threads = (g.bm / tm) * (g.bn / tn)
	g.wm, g.wn = warpTile(g.bm, g.bn, 32*tm*tn)
	g.smem = halfSharedBytes(c)
	g.idx = "int"
	if int64(m)*int64(k) >= 1<<31 || int64(k)*int64(n) >= 1<<31 || int64(m)*int64(n) >= 1<<31 {
		g.idx = "long long"
	}
	return g
}

// halfSharedBytes is the dynamic shared memory of the 16-bit kernel of
// c: stages slices of A and of B, their rows bk+halfPad and bn+halfPad
// elements long (bk at least 16).
func halfSharedBytes(c schedule.Config) int {
	bm, bn, bk := c.Int("bm"), c.Int("bn"), max(16, c.Int("bk"))
	return 2 * c.Int("stages") * (bm*(bk+halfPad) + bk*(bn+halfPad))
}

// warpTile splits the block tile bm×bn into warp tiles of area elements,
// both sides powers of two of at least 16 (ldmatrix.x4 loads 16 rows of A
// and 16 columns of B) that divide the block's, as square as can be, the
// taller one on a tie. One exists for every config of the space: area ≤
// bm·bn there (whole warps), so wm = min(bm, area/16) leaves wn ≤ bn.
func warpTile(bm, bn, area int) (wm, wn int) {
	for h := 16; h <= bm; h *= 2 {
		w := area / h
		if w < 16 || w > bn {
			continue
		}
		if wm == 0 || abs(h-w) < abs(wm-wn) || abs(h-w) == abs(wm-wn) && h > wm {
			wm, wn = h, w
		}
	}
	if wm == 0 {
		panic(fmt.Sprintf("gemm: no warp tile of %d elements in a block of %dx%d", area, bm, bn))
	}
	return wm, wn
}

func abs(x int) int { return max(x, -x) }

// vecA and vecB are vecWhen's conditions for the rows of A (extent K)
// and of B (extent N).
func (g halfGeometry) vecA() string { return g.vecWhen(g.va, "K", g.k) }
func (g halfGeometry) vecB() string { return g.vecWhen(g.vb, "N", g.n) }

// vecWhen is the condition for 16-byte copies of rows of extent dim: ""
// when never, "true" when always, else the run-time test.
func (g halfGeometry) vecWhen(asked bool, dim string, x int) string {
	switch {
	case !asked:
		return ""
	case g.generic:
		return dim + " % 8 == 0"
	case x%8 == 0:
		return "true"
	}
	return ""
}

func (g halfGeometry) tail(x, b int) bool { return g.generic || x%b != 0 }

// emitCUDAHalf writes the tensor-core kernel of cfg for shape (nil: the
// shape-generic kernel, whose 16-byte copies and paired stores are chosen
// at run time, so that it serves every shape) in the 16-bit dtype dt.
func emitCUDAHalf(name string, shape []int, dt dtype.DType, cfg schedule.Config, e epilogue, op string) kernels.CUDAKernel {
	generic := shape == nil
	if generic {
		shape = []int{1, 1, 1}
	}
	g := newHalfGeometry(shape, dt, cfg)
	if generic {
		g.generic, g.m, g.n, g.k, g.idx = true, 0, 0, 0, "long long"
	}
	w := &halfWriter{g: g, e: e, op: op, name: name}
	w.kernel(cfg)
	k := kernels.CUDAKernel{Source: w.String(), Entry: name, Block: [3]int{g.threads, 1, 1}, SharedBytes: g.smem}
	if generic {
		k.Block, k.SharedBytes = [3]int{}, 0
		k.Generic = &kernels.CUDALaunch{
			Block:  [3]int{g.threads, 1, 1},
			Grid:   [3][]kernels.CUDAFactor{{{Dim: 1, Div: g.bn}}, {{Dim: 0, Div: g.bm}}},
			Shared: kernels.CUDASize{Base: g.smem},
		}
	} else {
		k.Grid = [3]int{ceilDiv(g.n, g.bn), ceilDiv(g.m, g.bm), 1}
	}
	return k
}

type halfWriter struct {
	g    halfGeometry
	e    epilogue
	op   string
	name string
	cuda.Writer
}

// kernel writes the tensor-core kernel: see the package doc for the
// code's shape.
func (w *halfWriter) kernel(cfg schedule.Config) {
	g := w.g
	dt := string(g.dt)
	w.Line("// Code generated by autotune. DO NOT EDIT.")
	if g.generic {
		w.Line("// template %s (%s), %s of any shape, %s on tensor cores, float32 accumulation: %s", cudaVersion(w.e), cudaHalfRevision, w.op, dt, w.e.formula())
		w.Line("// config %s", cfg)
		w.Line("// launch: grid ceil(n/%d)xceil(m/%d), block %d, dynamic shared memory %d bytes", g.bn, g.bm, g.threads, g.smem)
	} else {
		w.Line("// template %s (%s), %s %dx%dx%d %s on tensor cores, float32 accumulation: %s", cudaVersion(w.e), cudaHalfRevision, w.op, g.m, g.n, g.k, dt, w.e.formula())
		w.Line("// config %s", cfg)
		w.Line("// launch: grid %dx%d, block %d, dynamic shared memory %d bytes", ceilDiv(g.n, g.bn), ceilDiv(g.m, g.bm), g.threads, g.smem)
	}
	w.Line("")
	w.Raw(cuda.HalfHelpers(g.dt))
	w.Line("")
	w.Raw(cuda.MMAHelpers(g.dt))
	w.Line("")
	if g.async {
		w.Raw(cuda.CPAsyncHelpers)
		w.Line("")
	}
	params := "unsigned short *__restrict__ c, const unsigned short *__restrict__ a, const unsigned short *__restrict__ b"
	if w.e.bias {
		params += ", const unsigned short *__restrict__ bias"
	}
	if g.generic {
		params += ", int m, int n, int k"
	}
	w.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s)`, g.threads, w.name, params)
	if g.generic {
		w.Line("const int M = m, N = n, K = k;")
	} else {
		w.Line("constexpr int M = %d, N = %d, K = %d;", g.m, g.n, g.k)
	}
	w.Line("constexpr int BM = %d, BN = %d, BK = %d, WM = %d, WN = %d, STAGES = %d;", g.bm, g.bn, g.bk, g.wm, g.wn, g.stages)
	w.Line("constexpr int NT = %d, MI = WM / 16, NI = WN / 8, LDA = BK + %d, LDB = BN + %d;", g.threads, halfPad, halfPad)
	if g.generic {
		w.Line("const int KT = (K + BK - 1) / BK;")
	} else {
		w.Line("constexpr int KT = (K + BK - 1) / BK;")
	}
	w.Line("typedef %s idx;", g.idx)
	w.Line("// A's tiles are [STAGES][BM][LDA], B's [STAGES][BK][LDB], 16-bit elements.")
	w.Line("extern __shared__ uint4 smem[];")
	w.Line("unsigned short *const As = reinterpret_cast<unsigned short *>(smem);")
	w.Line("unsigned short *const Bs = As + STAGES * BM * LDA;")
	w.Line("const int tid = threadIdx.x, lane = tid %% 32, warp = tid / 32;")
	w.Line("// This warp's tile of C: rows wm0..wm0+WM-1, columns wn0..wn0+WN-1 of the block's.")
	w.Line("const int wm0 = warp / (BN / WN) * WM, wn0 = warp %% (BN / WN) * WN;")
	blockOrigin(&w.Writer, g.raster)
	if v := g.vecA(); v != "" && v != "true" {
		w.Line("const bool veca = %s;", v)
	}
	if v := g.vecB(); v != "" && v != "true" {
		w.Line("const bool vecb = %s;", v)
	}
	w.Line("// acc[i][j] is the m16n8 fragment of C at rows wm0+16i, columns wn0+8j.")
	w.Line("float acc[MI][NI][4];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < MI; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int j = 0; j < NI; ++j)")
	w.Line("\t\t#pragma unroll")
	w.Line("\t\tfor (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;")
	w.Line("")
	w.Line("// A pipeline of STAGES tiles: tile kt+STAGES-1 is copied while tile kt")
	w.Line("// is multiplied. Copies that are not cp.async land at once, into a")
	if g.stages == 1 {
		w.Line("// stage no warp reads any more (the barrier ending the last step).")
	} else {
		w.Line("// stage no warp reads any more (the barrier starting the step).")
	}
	w.Line("#pragma unroll")
	w.Open("for (int s = 0; s < STAGES - 1; ++s)")
	w.Open("if (s < KT)")
	w.tileLoads("s", "s * BK")
	w.Close()
	w.commit()
	w.Close()
	w.Open("for (int kt = 0; kt < KT; ++kt)")
	if g.stages == 1 {
		// One stage: the copy of tile kt overwrites tile kt-1, so every
		// warp must be done with it (the barrier ending the last step).
		w.nextTile()
		if g.async {
			w.Line("cp_async_commit();")
			w.Line("cp_async_wait<0>();")
		}
		w.Line("__syncthreads();")
		w.compute("kt % STAGES")
		w.Line("__syncthreads();")
	} else {
		// One barrier a step: past it tile kt has landed for every
		// thread and every warp is done with tile kt-1, whose stage the
		// copy of tile kt+STAGES-1 then fills while tile kt is
		// multiplied.
		if g.async {
			w.Line("// Groups committed: STAGES-1+kt; all but the newest STAGES-2 have landed, tile kt's among them.")
			w.Line("cp_async_wait<STAGES - 2>();")
		}
		w.Line("__syncthreads();")
		w.nextTile()
		if g.async {
			w.Line("// Committed even when empty, so that the count of groups stays STAGES+kt.")
			w.Line("cp_async_commit();")
		}
		w.compute("kt % STAGES")
	}
	w.Close()
	w.Line("")
	w.store()
	w.Close()
}

// nextTile emits the copy of tile kt+STAGES-1, where there is one, into
// its stage, the one tile kt-1 was in.
func (w *halfWriter) nextTile() {
	w.Open("if (kt + STAGES - 1 < KT)")
	w.Line("const int nk = kt + STAGES - 1;")
	w.tileLoads("nk % STAGES", "nk * BK")
	w.Close()
}

func (w *halfWriter) commit() {
	if w.g.async {
		w.Line("cp_async_commit();")
	}
}

// tileLoads emits the copy of the tiles of A and B at depth k0 into
// stage (expressions).
func (w *halfWriter) tileLoads(stage, k0 string) {
	g := w.g
	w.Scope()
	defer w.Close()
	w.Line("const int k0 = %s;", k0)
	w.Line("unsigned short *const as = As + (%s) * BM * LDA, *const bs = Bs + (%s) * BK * LDB;", stage, stage)
	w.operand(operandCopy{
		what: "A", rows: "BM", cols: "BK", vec: g.vecA(), vecVar: "veca",
		rowOK: "m0 + r < M", rowTail: g.tail(g.m, g.bm), colOK: "k0 + cc < K", colTail: g.tail(g.k, g.bk),
		src: "a + (idx)(m0 + r) * K + k0 + cc", dst: "as + r * LDA + cc", base: "a",
	})
	w.operand(operandCopy{
		what: "B", rows: "BK", cols: "BN", vec: g.vecB(), vecVar: "vecb",
		rowOK: "k0 + r < K", rowTail: g.tail(g.k, g.bk), colOK: "n0 + cc < N", colTail: g.tail(g.n, g.bn),
		src: "b + (idx)(k0 + r) * N + n0 + cc", dst: "bs + r * LDB + cc", base: "b",
	})
}

// operandCopy describes the copy of one operand's tile, rows×cols, row r
// and column cc of it at src in global memory and dst in shared memory.
type operandCopy struct {
	what, rows, cols string
	vec, vecVar      string // vecWhen's condition, and the variable holding it at run time
	rowOK, colOK     string
	rowTail, colTail bool
	src, dst, base   string
}

// operand emits the copy: 16 bytes at a time when vec says so (a chunk is
// then wholly inside the matrix or wholly outside, K or N being a
// multiple of 8), element by element otherwise; whatever lies outside
// the matrix is zero.
func (w *halfWriter) operand(o operandCopy) {
	ok := joinCond(o.rowOK, o.rowTail, o.colOK, o.colTail)
	switch o.vec {
	case "":
		w.scalarCopy(o, ok)
	case "true":
		w.vectorCopy(o, ok)
	default:
		w.Open("if (%s)", o.vecVar)
		w.vectorCopy(o, ok)
		w.Close()
		w.Open("else")
		w.scalarCopy(o, ok)
		w.Close()
	}
}

func joinCond(a string, needA bool, b string, needB bool) string {
	switch {
	case needA && needB:
		return a + " && " + b
	case needA:
		return a
	case needB:
		return b
	}
	return ""
}

func (w *halfWriter) vectorCopy(o operandCopy, ok string) {
	w.Line("#pragma unroll")
	w.Open("for (int v = tid; v < %s * %s / 8; v += NT)", o.rows, o.cols)
	w.Line("const int r = v / (%s / 8), cc = v %% (%s / 8) * 8; // 8 elements of %s's tile", o.cols, o.cols, o.what)
	switch {
	case w.g.async && ok == "":
		w.Line("cp_async<16>(reinterpret_cast<float *>(%s), reinterpret_cast<const float *>(%s), true);", o.dst, o.src)
	case w.g.async:
		w.Line("const bool ok = %s;", ok)
		w.Line("cp_async<16>(reinterpret_cast<float *>(%s), reinterpret_cast<const float *>(ok ? %s : %s), ok);", o.dst, o.src, o.base)
	case ok == "":
		w.Line("*reinterpret_cast<uint4 *>(%s) = *reinterpret_cast<const uint4 *>(%s);", o.dst, o.src)
	default:
		w.Line("*reinterpret_cast<uint4 *>(%s) = %s ? *reinterpret_cast<const uint4 *>(%s) : make_uint4(0u, 0u, 0u, 0u);", o.dst, ok, o.src)
	}
	w.Close()
}

func (w *halfWriter) scalarCopy(o operandCopy, ok string) {
	w.Line("#pragma unroll 4")
	w.Open("for (int v = tid; v < %s * %s; v += NT)", o.rows, o.cols)
	w.Line("const int r = v / %s, cc = v %% %s; // an element of %s's tile", o.cols, o.cols, o.what)
	if ok == "" {
		w.Line("*(%s) = *(%s);", o.dst, o.src)
	} else {
		w.Line("*(%s) = %s ? *(%s) : (unsigned short)0;", o.dst, ok, o.src)
	}
	w.Close()
}

// compute emits the product of the tiles in stage s into acc, 16 deep at
// a time: A's fragments by ldmatrix (16 rows × 16 columns each), B's by
// ldmatrix.trans (16 deep × 16 columns: two n8 fragments), then the mma.
func (w *halfWriter) compute(stage string) {
	w.Scope()
	w.Line("const unsigned short *const as = As + (%s) * BM * LDA, *const bs = Bs + (%s) * BK * LDB;", stage, stage)
	w.Line("#pragma unroll")
	w.Open("for (int kk = 0; kk < BK; kk += 16)")
	w.Line("// Lanes 8q..8q+7 give the rows of 8x8 matrix q: rows +0..7 or +8..15")
	w.Line("// (q odd), columns +0..7 or +8..15 (q ≥ 2).")
	w.Line("unsigned af[MI][4], bf[NI][2];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < MI; ++i) at_ldmatrix_x4(af[i], as + (wm0 + 16 * i + lane %% 16) * LDA + kk + lane / 16 * 8);")
	w.Line("#pragma unroll")
	w.Open("for (int j = 0; j < NI; j += 2)")
	w.Line("unsigned t[4];")
	w.Line("at_ldmatrix_x4_trans(t, bs + (kk + lane %% 16) * LDB + wn0 + 8 * j + lane / 16 * 8);")
	w.Line("bf[j][0] = t[0]; bf[j][1] = t[1]; bf[j + 1][0] = t[2]; bf[j + 1][1] = t[3];")
	w.Close()
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < MI; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int j = 0; j < NI; ++j) at_mma(acc[i][j], af[i], bf[j]);")
	w.Close()
	w.Close()
}

// store writes acc to C through the epilogue, rounded to the dtype. Lane
// 4g+t holds, of each fragment, rows g and g+8, columns 2t and 2t+1: a
// pair, stored as one 32-bit word where N is even (every pair is then
// aligned and wholly inside C or outside).
func (w *halfWriter) store() {
	g := w.g
	dt := string(g.dt)
	pairs := "false"
	switch {
	case g.generic:
		pairs = "N % 2 == 0"
	case g.n%2 == 0:
		pairs = "true"
	}
	w.Line("const bool pairs = %s;", pairs)
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < MI; ++i)")
	w.Line("#pragma unroll")
	w.Open("for (int h = 0; h < 2; ++h)")
	w.Line("const int r = m0 + wm0 + 16 * i + lane / 4 + 8 * h;")
	if g.tail(g.m, g.bm) {
		w.Line("if (r >= M) continue;")
	}
	w.Line("#pragma unroll")
	w.Open("for (int j = 0; j < NI; ++j)")
	w.Line("const int col = n0 + wn0 + 8 * j + 2 * (lane %% 4);")
	w.Line("float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];")
	if w.e.bias {
		w.Line("if (col < N) v0 += at_%s_to_float(bias[col]);", dt)
		w.Line("if (col + 1 < N) v1 += at_%s_to_float(bias[col + 1]);", dt)
		if act := w.e.act; act != nil {
			w.Line("v0 = %s; v1 = %s;", act.cuda("v0"), act.cuda("v1"))
		}
	}
	w.Line("unsigned short *const p = c + (idx)r * N + col;")
	w.Open("if (pairs)")
	w.Line("if (col < N) *reinterpret_cast<unsigned *>(p) = at_float2_to_%sx2(v0, v1);", dt)
	w.Close()
	w.Open("else")
	w.Line("if (col < N) p[0] = at_float_to_%s(v0);", dt)
	w.Line("if (col + 1 < N) p[1] = at_float_to_%s(v1);", dt)
	w.Close()
	w.Close()
	w.Close()
	w.Close()
}
