package attention

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/autotune-dev/autotune/codegen/cuda"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaRevision and cudaCausalRevision are bumped by hand whenever the
// emitted CUDA changes in a way the knob space does not show (see the
// package doc); a change to the shared emitter usually changes both.
const (
	cudaRevision       = "attention-cuda-4"
	cudaCausalRevision = "attention-causal-cuda-4"
)

// cudaGenericRevision is the revisions' counterpart for the shape-generic
// kernels of both templates, which are not part of Version.
const cudaGenericRevision = "attention-cuda-generic-3"

// cudaGenericMaxD is the largest head dimension a shape-generic kernel
// holds: its output accumulators are registers, sized when it is compiled.
const cudaGenericMaxD = 128

// CUDATemplate and CUDATemplateCausal are the CUDA templates of Op and
// CausalOp: FlashAttention-2 style, a block of query rows per thread block,
// K and V in tiles through shared memory, an online softmax (see the
// package doc); Q, K, V and O in f32, bf16 or f16, the scores, the
// online softmax and P·V in float32.
var (
	CUDATemplate       = newCUDATemplate(false)
	CUDATemplateCausal = newCUDATemplate(true)
)

func newCUDATemplate(causal bool) kernels.Template {
	op, rev := Op, cudaRevision
	if causal {
		op, rev = CausalOp, cudaCausalRevision
	}
	return kernels.Template{
		Op:      op,
		Backend: kernels.CUDA,
		Version: cudaVersion(rev),
		Space:   cudaSpace,
		Default: cudaDefault,
		// In float32 kv_copy=mma is the cp_async kernel (newCUDAGeometry).
		SearchConstraints: func(_ []int, dt dtype.DType, _ device.Target) []schedule.Constraint {
			if cmp.Or(dt, dtype.Default).Size() == 2 {
				return nil
			}
			return []schedule.Constraint{{Name: "mma_is_cp_async_in_f32", OK: func(c schedule.Config) bool {
				return c.Str("kv_copy") != "mma"
			}}}
		},
		Estimate: cudaEstimate,
		CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
			k.Want("", dtypes...)
			dt := cmp.Or(k.DType, dtype.Default)
			if k.Shape == nil {
				return emitCUDAGeneric(k.Name, dt, k.Config, causal)
			}
			if dt.Size() == 2 && k.Config.Str("kv_copy") == "mma" {
				return emitCUDAMMA(k.Name, k.Shape, dt, k.Config, causal)
			}
			return emitCUDA(k.Name, k.Shape, dt, k.Config, causal)
		}),
	}
}

// CUDA knob values, in the order mutation walks.
var (
	cudaBRs    = []int{16, 32, 64, 128}
	cudaBCs    = []int{16, 32, 64, 128}
	cudaWarps  = []int{1, 2, 4, 8}
	cudaTNs    = []int{2, 4, 8}
	cudaCopies = []string{"sync", "cp_async", "mma"}
)

// cudaMaxTM bounds a thread's query rows: each costs it tn scores, D/TX
// outputs and a float4 of Q in registers.
const cudaMaxTM = 8

// cudaRegOverhead is what a thread needs besides its tiles, in registers,
// for the estimate behind the registers_per_thread constraint.
const cudaRegOverhead = 32

// cudaGeometry is what a config and a shape fix about a kernel. A
// shape-generic kernel's has generic set, d cudaGenericMaxD (what its
// registers hold) and no b, h, s (0); its tiles' columns are computed in
// the kernel.
type cudaGeometry struct {
	generic        bool
	b, h, s, d     int
	br, bc, tn     int
	warps, threads int
	copy           string
	stages         int
	tx, ty, tm     int // threads along a row's keys, row groups, rows per thread
	dq             int // D rounded up to 4: the columns of Q·Kᵀ's loop
	wv             int // floats per load of V and store of O
	dv             int // D rounded up to a multiple of tx·wv: the columns of P·V
	dn             int // output columns per thread and row, dv/tx
	dl             int // columns of the tiles in shared memory, zero past D
	ld, ldv, ldp   int // row strides of Q and K, V, P in shared memory
	vl             int // elements per global load of Q, K, V
	smem, regs     int
	idx            string
	dt             dtype.DType
}

// in16 returns g for the 16-bit dtype dt (bf16, f16), or g itself for
// f32. The tiles in shared memory stay float32, converted as they are
// loaded, so the loads go through registers: kv_copy=cp_async, which
// copies bytes, is the sync copy in 16 bits, with one stage (a 16-bit
// kernel needs no more shared memory than the float32 one the space
// checked). A load is 16 bytes (8 elements) where D allows, else 8, 4
// or 2 bytes.
func (g cudaGeometry) in16(dt dtype.DType) cudaGeometry {
	g.dt = dt
	if !g.half() {
		return g
	}
	g.copy, g.stages = "sync", 1
	g.smem = 4 * (g.br*g.ld + g.stages*g.bc*(g.ld+g.ldv) + g.br*g.ldp)
	g.vl = 1
	for _, n := range []int{8, 4, 2} {
		if g.d%n == 0 {
			g.vl = n
			break
		}
	}
	return g
}

// half reports whether Q, K, V and O are 16-bit (bf16, f16): kept as
// their bits and converted by codegen/cuda's HalfHelpers.
func (g cudaGeometry) half() bool { return g.dt.Size() == 2 }

// elemType is the CUDA type of an element in memory.
func (g cudaGeometry) elemType() string {
	if g.half() {
		return "unsigned short"
	}
	return "float"
}

// load is the float value of the element x in memory.
func (g cudaGeometry) load(x string) string {
	if g.half() {
		return fmt.Sprintf("at_%s_to_float(%s)", g.dt, x)
	}
	return x
}

// store is the element that stores the float v, rounded to nearest even.
func (g cudaGeometry) store(v string) string {
	if g.half() {
		return fmt.Sprintf("at_float_to_%s(%s)", g.dt, v)
	}
	return v
}

func newCUDAGeometry(shape []int, c schedule.Config) cudaGeometry {
	b, h, s, d := checkShape(shape)
	g := cudaGeometry{
		b: b, h: h, s: s, d: d,
		br: c.Int("br"), bc: c.Int("bc"), tn: c.Int("tn"), warps: c.Int("warps"),
		copy: c.Str("kv_copy"), dt: dtype.F32,
	}
	g.threads = 32 * g.warps
	g.stages = 1
	if g.copy == "mma" {
		// Tensor cores are for bf16 and f16 (emitCUDAMMA); float32
		// kernels and shape-generic ones copy as cp_async does.
		g.copy = "cp_async"
	}
	if g.copy == "cp_async" {
		g.stages = 2
	}
	g.tx = max(1, g.bc/g.tn)
	g.ty = max(1, g.threads/g.tx)
	g.tm = max(1, g.br/g.ty)
	g.dq = (d + 3) / 4 * 4
	switch {
	case d%(4*g.tx) == 0:
		g.wv, g.dv = 4, d
	case d%(2*g.tx) == 0:
		g.wv, g.dv = 2, d
	default:
		g.wv, g.dv = 1, (d+g.tx-1)/g.tx*g.tx
	}
	g.dn = g.dv / g.tx
	g.dl = (max(g.dq, g.dv) + 3) / 4 * 4
	// Four floats of padding keep rows 16-byte aligned and put neighbouring
	// threads' keys (rows) in different banks.
	g.ld, g.ldv, g.ldp = g.dl+4, g.dl, g.bc+4
	g.vl = 1
	if d%4 == 0 {
		g.vl = 4
	}
	g.smem = 4 * (g.br*g.ld + g.stages*g.bc*(g.ld+g.ldv) + g.br*g.ldp)
	g.regs = g.tm*g.tn + g.tm*g.dn + 6*g.tm + 4*g.tn + g.dn + cudaRegOverhead
	g.idx = "int"
	if int64(b)*int64(h)*int64(s)*int64(d) >= 1<<31 {
		g.idx = "long long"
	}
	return g
}

// cudaSpace returns the knobs for shape on target, with the target's
// limits. A CPU target gets the same knobs with every point invalid.
func cudaSpace(shape []int, target device.Target) *schedule.Space {
	b, h, s, d := checkShape(shape)
	gpu := target.GPU
	pow2 := func(n int) int {
		p := 1
		for p < n {
			p *= 2
		}
		return p
	}
	constraints := []schedule.Constraint{
		// A row's keys are spread over tx = bc/tn threads of one warp, whose
		// maxima and sums are reduced by shuffles.
		{Name: "row_in_warp", OK: func(c schedule.Config) bool { return rowInWarp(c.Int("bc"), c.Int("tn")) }},
		{Name: "rows_per_thread", OK: func(c schedule.Config) bool {
			return rowsPerThread(c.Int("br"), c.Int("bc"), c.Int("warps"), c.Int("tn"))
		}},
		// kv_copy=mma keeps the CUDA-core constraints, which float32 and
		// shape-generic kernels of its configs obey; tn means nothing to
		// the tensor-core form, whose configs take the least tn valid there.
		{Name: "mma_tiles", OK: func(c schedule.Config) bool {
			return c.Str("kv_copy") != "mma" || mmaFits(d, c) && mmaLeastTN(c)
		}},
		{Name: "tile_within_shape", OK: func(c schedule.Config) bool {
			return c.Int("br") <= max(16, pow2(s)) && c.Int("bc") <= max(16, pow2(s))
		}},
		{Name: "grid_fits", OK: func(schedule.Config) bool { return b*h <= 65535 }},
	}
	if gpu == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cuda_target", OK: func(schedule.Config) bool { return false }})
	} else {
		constraints = append(constraints,
			schedule.Constraint{Name: "cp_async_needs_sm80", OK: func(c schedule.Config) bool {
				return c.Str("kv_copy") == "sync" || gpu.Major >= 8
			}},
			schedule.Constraint{Name: "threads_per_block", OK: func(c schedule.Config) bool {
				return 32*c.Int("warps") <= gpu.MaxThreadsPerBlock
			}},
			schedule.Constraint{Name: "shared_memory_per_block", OK: func(c schedule.Config) bool {
				return newCUDAGeometry(shape, c).smem <= gpu.SharedMemPerBlockOptin
			}},
			// kv_copy=mma counts the tensor-core kernel's registers only: a
			// float32 kernel of its config may spill, which costs it time,
			// not correctness, and the CUDA-core form's count would forbid
			// two m16 tiles a warp at D = 128 (32 rows a thread there).
			schedule.Constraint{Name: "registers_per_thread", OK: func(c schedule.Config) bool {
				g := newCUDAGeometry(shape, c)
				regs := g.regs
				if c.Str("kv_copy") == "mma" {
					regs = mmaRegs(mmaTiles(c), g.bc, g.d)
				}
				return regs <= gpu.MaxRegistersPerThread && regs*g.threads <= gpu.RegistersPerBlock
			}})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("br", cudaBRs...),
		schedule.Choice("bc", cudaBCs...),
		schedule.Choice("warps", cudaWarps...),
		schedule.Choice("tn", cudaTNs...),
		schedule.Enum("kv_copy", cudaCopies...),
	}, constraints...)
}

// rowInWarp and rowsPerThread are the CUDA-core form's constraints on
// its tiles (see cudaSpace).
func rowInWarp(bc, tn int) bool { return bc%tn == 0 && bc/tn <= 32 }

func rowsPerThread(br, bc, warps, tn int) bool {
	ty := 32 * warps / (bc / max(1, tn))
	return ty >= 1 && br%ty == 0 && br/ty <= cudaMaxTM
}

// mmaLeastTN reports whether c's tn is the least of cudaTNs that the
// CUDA-core form takes with c's other knobs, so that a tensor-core kernel
// is one point of the space, not one per tn.
func mmaLeastTN(c schedule.Config) bool {
	for _, tn := range cudaTNs {
		if rowInWarp(c.Int("bc"), tn) && rowsPerThread(c.Int("br"), c.Int("bc"), c.Int("warps"), tn) {
			return tn == c.Int("tn")
		}
	}
	return false
}

// cudaDefault is the tensor-core config of 64 query rows (4 warps) and
// 64 keys where the target and the head dimension take it (bf16 and f16
// kernels run on tensor cores, float32 ones copy by cp.async), else
// nothing: the space's first valid config.
func cudaDefault(shape []int, target device.Target) schedule.Config {
	sp := cudaSpace(shape, target)
	for _, text := range []string{"br=64,bc=64,warps=4,tn=4,kv_copy=mma", "br=16,bc=16,warps=1,tn=2,kv_copy=mma"} {
		c, err := sp.Parse(text)
		if err == nil && sp.Check(c) == nil {
			return c
		}
	}
	return schedule.Config{}
}

// emitCUDA writes the kernel of cfg for shape and dt; see the package doc.
func emitCUDA(name string, shape []int, dt dtype.DType, cfg schedule.Config, causal bool) kernels.CUDAKernel {
	g := newCUDAGeometry(shape, cfg).in16(dt)
	w := &cudaWriter{g: g, causal: causal}
	w.kernel(name, cfg)
	return kernels.CUDAKernel{
		Source:      w.String(),
		Entry:       name,
		Grid:        [3]int{(g.s + g.br - 1) / g.br, g.b * g.h, 1},
		Block:       [3]int{g.threads, 1, 1},
		SharedBytes: g.smem,
	}
}

// emitCUDAGeneric writes the shape-generic kernel of cfg: b, h, s and d
// are arguments, d at most cudaGenericMaxD (CUDALaunch.Max). Q, K and V
// are loaded a float at a time and O stored so, whatever d; the tiles in
// shared memory are d rounded up to 4 and to the threads of a row
// (CUDALaunch.Shared), and every tile of rows and keys is checked against
// s.
func emitCUDAGeneric(name string, dt dtype.DType, cfg schedule.Config, causal bool) kernels.CUDAKernel {
	g := newCUDAGeometry([]int{1, 1, 1, cudaGenericMaxD}, cfg).in16(dt)
	g.generic, g.b, g.h, g.s, g.idx = true, 0, 0, 0, "long long"
	g.vl, g.wv = 1, 1
	g.dv = (g.d + g.tx - 1) / g.tx * g.tx
	g.dn = g.dv / g.tx
	w := &cudaWriter{g: g, causal: causal}
	w.kernel(name, cfg)
	br, bc := g.br, g.bc
	return kernels.CUDAKernel{Source: w.String(), Entry: name, Generic: &kernels.CUDALaunch{
		Block: [3]int{g.threads, 1, 1},
		Grid:  [3][]kernels.CUDAFactor{{{Dim: 2, Div: br}}, {{Dim: 0, Div: 1}, {Dim: 1, Div: 1}}},
		Shared: kernels.CUDASize{
			Base: 4 * (4*br + 4*g.stages*bc + br*(bc+4)),
			Per:  4 * (br + 2*g.stages*bc), Dim: 3, Round: g.dlRound(),
		},
		Max: []int{0, 0, 0, cudaGenericMaxD},
	}}
}

// dlRound is what a generic kernel rounds d up to for the columns of its
// tiles (DL): 4, for float4 reads of Q and K, and the threads of a row
// (a power of two), for the columns of P·V.
func (g cudaGeometry) dlRound() int { return max(4, g.tx) }

type cudaWriter struct {
	g      cudaGeometry
	causal bool
	cuda.Writer
}

// scale is 1/√D·log2(e), folded into Q so that the weights are exp2 of
// the scores minus their maximum.
func (g cudaGeometry) scale() string {
	if g.generic {
		return "(1.442695041f / sqrtf((float)D))"
	}
	return fmt.Sprintf("%.9gf", float32(1/math.Sqrt(float64(g.d))*math.Log2E))
}

// tail reports whether extent x may leave a partial tile of b: always in
// a generic kernel.
func (g cudaGeometry) tail(x, b int) bool { return g.generic || x%b != 0 }

func (w *cudaWriter) kernel(name string, cfg schedule.Config) {
	g := w.g
	op, rev := Op.Name, cudaRevision
	if w.causal {
		op, rev = CausalOp.Name, cudaCausalRevision
	}
	elem := "float32"
	if g.half() {
		elem = string(g.dt) + ", float32 scores and sums"
	}
	w.Line("// Code generated by autotune. DO NOT EDIT.")
	if g.generic {
		w.Line("// template %s (generic %s), %s of any shape with d ≤ %d, %s", cudaVersion(rev), cudaGenericRevision, op, g.d, elem)
		w.Line("// config %s", cfg)
		w.Line("// launch: grid ceil(s/%d)x(b·h), block %d, dynamic shared memory %d·DL + %d bytes (DL below)",
			g.br, g.threads, 4*(g.br+2*g.stages*g.bc), 4*(4*g.br+4*g.stages*g.bc+g.br*(g.bc+4)))
	} else {
		w.Line("// template %s, %s %dx%dx%dx%d %s", cudaVersion(rev), op, g.b, g.h, g.s, g.d, elem)
		w.Line("// config %s", cfg)
		w.Line("// launch: grid %dx%d, block %d, dynamic shared memory %d bytes", (g.s+g.br-1)/g.br, g.b*g.h, g.threads, g.smem)
	}
	w.Line("")
	w.Line("// lane returns component j of v; j is a constant once loops unroll.")
	w.Line("__device__ __forceinline__ float lane(const float4 &v, int j) { return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w; }")
	w.Line("")
	if g.copy == "cp_async" {
		w.Raw(cuda.CPAsyncHelpers)
		w.Line("")
	}
	if g.half() {
		w.Raw(cuda.HalfHelpers(g.dt))
		w.Line("")
	}
	params := fmt.Sprintf("%[1]s *__restrict__ out, const %[1]s *__restrict__ q, const %[1]s *__restrict__ k, const %[1]s *__restrict__ v", g.elemType())
	if g.generic {
		params += ", int b, int h, int s, int d"
	}
	w.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s)`, g.threads, name, params)
	if g.generic {
		w.Line("const int S = s, D = d;")
		w.Line("constexpr int BR = %d, BC = %d, TN = %d, TX = %d, TY = %d, TM = %d;", g.br, g.bc, g.tn, g.tx, g.ty, g.tm)
		w.Line("// The tiles' columns: D rounded up to %d (DL), zero past D.", g.dlRound())
		w.Line("const int DQ = (D + 3) / 4 * 4, DL = (D + %[1]d - 1) / %[1]d * %[1]d, LD = DL + 4, LDV = DL, KT = (S + BC - 1) / BC;", g.dlRound())
		w.Line("constexpr int DN = %d, WV = 1, LDP = %d; // DN·TX = %d, the largest D", g.dn, g.ldp, g.d)
	} else {
		w.Line("constexpr int S = %d, D = %d, BR = %d, BC = %d, TN = %d, TX = %d, TY = %d, TM = %d;", g.s, g.d, g.br, g.bc, g.tn, g.tx, g.ty, g.tm)
		w.Line("constexpr int DQ = %d, DL = %d, DN = %d, WV = %d, LD = %d, LDV = %d, LDP = %d, KT = (S + BC - 1) / BC;", g.dq, g.dl, g.dn, g.wv, g.ld, g.ldv, g.ldp)
	}
	w.Line("typedef %s idx;", g.idx)
	w.Line("// Q's tile is [BR][LD], K's [%d][BC][LD], V's [%d][BC][LDV], the weights [BR][LDP];", g.stages, g.stages)
	w.Line("// columns from D to DL hold zeros.")
	w.Line("extern __shared__ float4 smem[];")
	w.Line("float *const Qs = reinterpret_cast<float *>(smem);")
	w.Line("float *const Ks = Qs + BR * LD;")
	w.Line("float *const Vs = Ks + %d * BC * LD;", g.stages)
	w.Line("float *const Ps = Vs + %d * BC * LDV;", g.stages)
	w.Line("// Thread (ty, tx) holds rows i*TY+ty of the block and, of each tile,")
	w.Line("// keys j*TX+tx; its row group is TX neighbouring lanes of one warp.")
	w.Line("const int tid = threadIdx.x, tx = tid %% TX, ty = tid / TX;")
	if w.causal {
		w.Line("// The last blocks of rows meet the most keys: start them first.")
		w.Line("const int q0 = (gridDim.x - 1 - blockIdx.x) * BR;")
	} else {
		w.Line("const int q0 = blockIdx.x * BR;")
	}
	w.Line("const idx head = (idx)blockIdx.y * S * D;")
	w.Line("const %s *const qh = q + head, *const kh = k + head, *const vh = v + head;", g.elemType())
	w.Line("")
	w.Line("// Q, scaled by 1/sqrt(D)*log2(e): the weights are then exp2(score - max).")
	w.loads("q", "Qs", "LD", "BR", "q0", g.tail(g.s, g.br), g.scale(), false)
	if w.causal {
		w.Line("// Key tiles past the block's last row are never touched.")
		w.Line("const int kts = min(KT, (min(q0 + BR, S) - 1) / BC + 1);")
	} else {
		w.Line("%s int kts = KT;", map[bool]string{true: "const", false: "constexpr"}[g.generic])
	}
	w.Line("float m[TM], l[TM], acc[TM][DN];")
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < TM; ++i)")
	w.Line("m[i] = -3.0e38f; // finite, so that the first rescaling is exp2(-huge) = 0, not NaN")
	w.Line("l[i] = 0.f;")
	w.Line("#pragma unroll")
	w.Line("for (int u = 0; u < DN; ++u) acc[i][u] = 0.f;")
	w.Close()
	if g.copy == "cp_async" {
		w.Line("// K and V double-buffered: tile kt+1 is copied while tile kt is used.")
		w.kvLoads("0", "0", true)
		w.Line("cp_async_commit();")
		w.Open("for (int kt = 0; kt < kts; ++kt)")
		w.Open("if (kt + 1 < kts)")
		w.kvLoads("(kt + 1) & 1", "(kt + 1) * BC", true)
		w.Close()
		w.Line("cp_async_commit();")
		w.Line("cp_async_wait<1>();")
		w.Line("__syncthreads();")
		w.tile("kt & 1")
		w.Line("__syncthreads();")
		w.Close()
	} else {
		w.Open("for (int kt = 0; kt < kts; ++kt)")
		w.kvLoads("0", "kt * BC", false)
		w.Line("__syncthreads();")
		w.tile("0")
		w.Line("__syncthreads();")
		w.Close()
	}
	w.Line("")
	w.store()
	w.Close()
}

// cudaVersion hashes rev with the space of 1x8x1024x64 on sm_90.
func cudaVersion(rev string) string {
	ref, err := device.Lookup("sm_90")
	if err != nil {
		panic(err)
	}
	return kernels.Version(rev, cudaSpace([]int{1, 8, 1024, 64}, ref))
}

// loads emits the copy of BR or BC rows from row r0 of the head's tensor
// src to the shared-memory tile dst with row stride ld, zeros past S (when
// check) and past D, multiplied by scale unless it is "". async uses
// cp.async.
func (w *cudaWriter) loads(src, dst, ld, rows, r0 string, check bool, scale string, async bool) {
	g := w.g
	if g.generic {
		w.genericLoads(src, dst, ld, rows, r0, scale, async)
		return
	}
	vecs := map[string]int{"BR": g.br, "BC": g.bc}[rows] * g.dl / g.vl
	per := (vecs + g.threads - 1) / g.threads
	vt, zero := "float", "0.f"
	if g.vl == 4 {
		vt, zero = "float4", "make_float4(0.f, 0.f, 0.f, 0.f)"
	}
	if g.half() {
		vt = map[int]string{1: "unsigned short", 2: "unsigned", 4: "uint2", 8: "uint4"}[g.vl]
		zero = map[int]string{1: "(unsigned short)0", 2: "0u", 4: "make_uint2(0u, 0u)", 8: "make_uint4(0u, 0u, 0u, 0u)"}[g.vl]
	}
	var ok []string
	if check {
		ok = append(ok, fmt.Sprintf("%s + r < S", r0))
	}
	if g.dl != g.d {
		ok = append(ok, "cc < D")
	}
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < %d; ++i)", per)
	w.Line("const int e = tid + i * %d;", g.threads)
	if per*g.threads != vecs {
		w.Line("if (e >= %d) break;", vecs)
	}
	w.Line("const int r = e / %d, cc = e %% %d * %d;", g.dl/g.vl, g.dl/g.vl, g.vl)
	at := fmt.Sprintf("%sh + (idx)(%s + r) * D + cc", src, r0)
	to := fmt.Sprintf("%s + r * %s + cc", dst, ld)
	okExpr := strings.Join(ok, " && ")
	switch {
	case g.half():
		w.halfLoad(vt, zero, at, to, okExpr, scale)
	case async && okExpr == "":
		w.Line("cp_async<%d>(%s, %s, true);", 4*g.vl, to, at)
	case async:
		w.Line("const bool ok = %s;", okExpr)
		w.Line("cp_async<%d>(%s, ok ? %s : %sh, ok);", 4*g.vl, to, at, src)
	default:
		load := fmt.Sprintf("*reinterpret_cast<const %s *>(%s)", vt, at)
		if okExpr != "" {
			load = fmt.Sprintf("(%s) ? %s : %s", okExpr, load, zero)
		}
		if scale == "" {
			w.Line("*reinterpret_cast<%s *>(%s) = %s;", vt, to, load)
			break
		}
		w.Line("%s x = %s;", vt, load)
		if g.vl == 4 {
			w.Line("x.x *= %[1]s; x.y *= %[1]s; x.z *= %[1]s; x.w *= %[1]s;", scale)
		} else {
			w.Line("x *= %s;", scale)
		}
		w.Line("*reinterpret_cast<%s *>(%s) = x;", vt, to)
	}
	w.Close()
}

// halfLoad emits the load of the vector vt of vl 16-bit elements at at
// (zero unless ok, when ok is not ""), its conversion to float, times
// scale unless it is "", and its store to the float tile at to.
func (w *cudaWriter) halfLoad(vt, zero, at, to, ok, scale string) {
	g := w.g
	load := fmt.Sprintf("*reinterpret_cast<const %s *>(%s)", vt, at)
	if ok != "" {
		load = fmt.Sprintf("(%s) ? %s : %s", ok, load, zero)
	}
	w.Line("const %s x = %s;", vt, load)
	var fs []string
	if g.vl == 1 {
		fs = []string{g.load("x")}
	} else {
		words := []string{"x.x", "x.y", "x.z", "x.w"}[:g.vl/2]
		if g.vl == 2 {
			words = []string{"x"}
		}
		for i, word := range words {
			w.Line("const float2 f%d = at_%sx2_to_float2(%s);", i, g.dt, word)
			fs = append(fs, fmt.Sprintf("f%d.x", i), fmt.Sprintf("f%d.y", i))
		}
	}
	if scale != "" {
		for i := range fs {
			fs[i] += " * " + scale
		}
	}
	for i := 0; i < len(fs); i += 4 {
		switch len(fs) - i {
		case 1:
			w.Line("*(%s + %d) = %s;", to, i, fs[i])
		case 2:
			w.Line("*reinterpret_cast<float2 *>(%s + %d) = make_float2(%s);", to, i, strings.Join(fs[i:i+2], ", "))
		default:
			w.Line("*reinterpret_cast<float4 *>(%s + %d) = make_float4(%s);", to, i, strings.Join(fs[i:i+4], ", "))
		}
	}
}

// genericLoads is loads in a generic kernel: an element at a time, DL
// columns, every row checked against S.
func (w *cudaWriter) genericLoads(src, dst, ld, rows, r0, scale string, async bool) {
	w.Open("for (int e = tid; e < %s * DL; e += %d)", rows, w.g.threads)
	w.Line("const int r = e / DL, cc = e %% DL;")
	at := fmt.Sprintf("%sh + (idx)(%s + r) * D + cc", src, r0)
	to := fmt.Sprintf("%s + r * %s + cc", dst, ld)
	w.Line("const bool ok = %s + r < S && cc < D;", r0)
	switch {
	case async:
		w.Line("cp_async<4>(%s, ok ? %s : %sh, ok);", to, at, src)
	case scale == "":
		w.Line("%s[r * %s + cc] = ok ? %s : 0.f;", dst, ld, w.g.load("*("+at+")"))
	default:
		w.Line("%s[r * %s + cc] = ok ? %s * %s : 0.f;", dst, ld, w.g.load("*("+at+")"), scale)
	}
	w.Close()
}

// kvLoads emits the copy of the key and value tile at key k0 to stage.
func (w *cudaWriter) kvLoads(stage, k0 string, async bool) {
	w.Scope()
	w.Line("const int k0 = %s;", k0)
	w.Line("float *const ks = Ks + (%s) * BC * LD, *const vs = Vs + (%s) * BC * LDV;", stage, stage)
	w.loads("k", "ks", "LD", "BC", "k0", w.g.tail(w.g.s, w.g.bc), "", async)
	w.loads("v", "vs", "LDV", "BC", "k0", w.g.tail(w.g.s, w.g.bc), "", async)
	w.Close()
}

// tile emits the work on the key tile in stage: the scores, the online
// softmax, the weights through shared memory and their product with V.
func (w *cudaWriter) tile(stage string) {
	g := w.g
	w.Scope()
	w.Line("const float *const ks = Ks + (%s) * BC * LD, *const vs = Vs + (%s) * BC * LDV;", stage, stage)
	w.Line("const int k0 = kt * BC;")
	w.Line("float sc[TM][TN];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int j = 0; j < TN; ++j) sc[i][j] = 0.f;")
	w.Line("#pragma unroll")
	w.Open("for (int d = 0; d < DQ; d += 4)")
	w.Line("float4 qv[TM], kv[TN];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i) qv[i] = *reinterpret_cast<const float4 *>(Qs + (i * TY + ty) * LD + d);")
	w.Line("#pragma unroll")
	w.Line("for (int j = 0; j < TN; ++j) kv[j] = *reinterpret_cast<const float4 *>(ks + (j * TX + tx) * LD + d);")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int j = 0; j < TN; ++j)")
	w.Line("\t\tsc[i][j] = fmaf(qv[i].w, kv[j].w, fmaf(qv[i].z, kv[j].z, fmaf(qv[i].y, kv[j].y, fmaf(qv[i].x, kv[j].x, sc[i][j]))));")
	w.Close()
	tail := g.tail(g.s, g.bc)
	if tail || w.causal {
		var conds []string
		if tail {
			conds = append(conds, "key >= S")
		}
		if w.causal {
			conds = append(conds, "key > q0 + i * TY + ty")
		}
		guard := "if (k0 + BC > S)"
		if w.causal && tail {
			guard = "if (k0 + BC > S || k0 + BC - 1 > q0)"
		} else if w.causal {
			guard = "if (k0 + BC - 1 > q0)"
		}
		w.Line("// Keys past S%s get no weight.", map[bool]string{true: ", and keys after a row", false: ""}[w.causal])
		w.Open(guard)
		w.Line("#pragma unroll")
		w.Line("for (int i = 0; i < TM; ++i)")
		w.Line("\t#pragma unroll")
		w.Open("\tfor (int j = 0; j < TN; ++j)")
		w.Line("const int key = k0 + j * TX + tx;")
		w.Line("if (%s) sc[i][j] = __int_as_float(0xff800000); // -Inf", strings.Join(conds, " || "))
		w.Close()
		w.Close()
	}
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < TM; ++i)")
	w.Line("float mx = sc[i][0];")
	w.Line("#pragma unroll")
	w.Line("for (int j = 1; j < TN; ++j) mx = fmaxf(mx, sc[i][j]);")
	if g.tx > 1 {
		w.Line("#pragma unroll")
		w.Line("for (int o = TX / 2; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));")
	}
	w.Line("const float mn = fmaxf(m[i], mx), alpha = exp2f(m[i] - mn);")
	w.Line("m[i] = mn;")
	w.Line("l[i] *= alpha;")
	w.Line("#pragma unroll")
	w.Line("for (int u = 0; u < DN; ++u) acc[i][u] *= alpha;")
	w.Line("#pragma unroll")
	w.Open("for (int j = 0; j < TN; ++j)")
	w.Line("const float p = exp2f(sc[i][j] - mn);")
	w.Line("l[i] += p;")
	w.Line("Ps[(i * TY + ty) * LDP + j * TX + tx] = p;")
	w.Close()
	w.Close()
	w.Line("// A row's weights were written by its own row group, in this warp.")
	w.Line("__syncwarp();")
	w.Line("#pragma unroll")
	w.Open("for (int c = 0; c < BC; c += 4)")
	w.Line("float4 pv[TM];")
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i) pv[i] = *reinterpret_cast<const float4 *>(Ps + (i * TY + ty) * LDP + c);")
	w.Line("#pragma unroll")
	w.Open("for (int jj = 0; jj < 4; ++jj)")
	w.Line("float vv[DN];")
	w.Line("#pragma unroll")
	switch g.wv {
	case 4:
		w.Open("for (int u = 0; u < DN / 4; ++u)")
		w.Line("const float4 t = *reinterpret_cast<const float4 *>(vs + (c + jj) * LDV + (u * TX + tx) * 4);")
		w.Line("vv[4 * u] = t.x, vv[4 * u + 1] = t.y, vv[4 * u + 2] = t.z, vv[4 * u + 3] = t.w;")
		w.Close()
	case 2:
		w.Open("for (int u = 0; u < DN / 2; ++u)")
		w.Line("const float2 t = *reinterpret_cast<const float2 *>(vs + (c + jj) * LDV + (u * TX + tx) * 2);")
		w.Line("vv[2 * u] = t.x, vv[2 * u + 1] = t.y;")
		w.Close()
	default:
		if g.generic {
			w.Line("for (int u = 0; u < DN; ++u) vv[u] = u * TX + tx < DL ? vs[(c + jj) * LDV + u * TX + tx] : 0.f;")
			break
		}
		w.Line("for (int u = 0; u < DN; ++u) vv[u] = vs[(c + jj) * LDV + u * TX + tx];")
	}
	w.Line("#pragma unroll")
	w.Line("for (int i = 0; i < TM; ++i)")
	w.Line("\t#pragma unroll")
	w.Line("\tfor (int u = 0; u < DN; ++u) acc[i][u] = fmaf(lane(pv[i], jj), vv[u], acc[i][u]);")
	w.Close()
	w.Close()
	w.Close()
}

// store emits O = acc/l, l summed over the row group first.
func (w *cudaWriter) store() {
	g := w.g
	w.Line("%s *const oh = out + head;", g.elemType())
	w.Line("#pragma unroll")
	w.Open("for (int i = 0; i < TM; ++i)")
	w.Line("float sum = l[i];")
	if g.tx > 1 {
		w.Line("#pragma unroll")
		w.Line("for (int o = TX / 2; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);")
	}
	w.Line("const float inv = 1.f / sum;")
	w.Line("const int row = q0 + i * TY + ty;")
	if g.tail(g.s, g.br) {
		w.Line("if (row >= S) continue;")
	}
	w.Line("#pragma unroll")
	switch {
	case g.half() && g.wv > 1:
		w.halfStore()
	case g.wv == 4:
		w.Line("for (int u = 0; u < DN / 4; ++u) *reinterpret_cast<float4 *>(oh + (idx)row * D + (u * TX + tx) * 4) = make_float4(acc[i][4 * u] * inv, acc[i][4 * u + 1] * inv, acc[i][4 * u + 2] * inv, acc[i][4 * u + 3] * inv);")
	case g.wv == 2:
		w.Line("for (int u = 0; u < DN / 2; ++u) *reinterpret_cast<float2 *>(oh + (idx)row * D + (u * TX + tx) * 2) = make_float2(acc[i][2 * u] * inv, acc[i][2 * u + 1] * inv);")
	default:
		w.Open("for (int u = 0; u < DN; ++u)")
		if g.generic || g.dv != g.d {
			w.Line("if (u * TX + tx >= D) break;")
		}
		w.Line("oh[(idx)row * D + u * TX + tx] = %s;", g.store("acc[i][u] * inv"))
		w.Close()
	}
	w.Close()
}

// halfStore emits the store of a row's wv output columns at a time in
// 16 bits: wv/2 words of two elements, rounded to nearest even.
func (w *cudaWriter) halfStore() {
	g := w.g
	pair := func(j int) string {
		return fmt.Sprintf("at_float2_to_%sx2(acc[i][%[2]d * u + %[3]d] * inv, acc[i][%[2]d * u + %[4]d] * inv)", g.dt, g.wv, j, j+1)
	}
	at := fmt.Sprintf("oh + (idx)row * D + (u * TX + tx) * %d", g.wv)
	if g.wv == 2 {
		w.Line("for (int u = 0; u < DN / 2; ++u) *reinterpret_cast<unsigned *>(%s) = %s;", at, pair(0))
		return
	}
	w.Line("for (int u = 0; u < DN / 4; ++u) *reinterpret_cast<uint2 *>(%s) = make_uint2(%s, %s);", at, pair(0), pair(2))
}

// cudaEstimate is a rough time of cfg for shape on a GPU target, for the
// first batch of a tune, when nothing is measured yet: the op's FLOPs at
// a rate that depends on the form, over the share of a multiprocessor's
// warps the config keeps resident (at least 8 hide the latency of a
// load). Only the order matters, and the rates are relative, not any
// GPU's: tensor cores (kv_copy=mma, which float32 searches leave out, so
// its rate is the 16-bit one) 16 times the FMA units; two m16 tiles of
// rows a warp read each K and V fragment from shared memory once for two
// mma instructions (FlashAttention-2's reason for them), 1.3 times one;
// key tiles of 16 keys pay the online softmax's rescaling per 16 keys.
// The rates were not fitted: a tune's first batch needs the tensor-core
// forms first, and the measurements rank them.
func cudaEstimate(shape []int, target device.Target, cfg schedule.Config) float64 {
	gpu := target.GPU
	if gpu == nil {
		return math.Inf(1)
	}
	b, h, s, d := checkShape(shape)
	flops := 4 * float64(b*h) * float64(s) * float64(s) * float64(d)
	g := newCUDAGeometry(shape, cfg)
	rate, regs, smem := 1.0, g.regs, g.smem
	if cfg.Str("kv_copy") == "mma" {
		mt := mmaTiles(cfg)
		rate = 16 * map[int]float64{1: 1, 2: 1.3}[mt] * map[int]float64{16: 0.8, 32: 0.95, 64: 1, 128: 0.95}[g.bc]
		regs, smem = mmaRegs(mt, g.bc, d), mmaSmem(g.br, g.bc, d)
	}
	blocks := gpu.MaxBlocksPerSM
	if smem > 0 {
		blocks = min(blocks, gpu.SharedMemPerSM/smem)
	}
	blocks = min(blocks, gpu.RegistersPerSM/max(1, regs*g.threads))
	warps := min(gpu.MaxWarpsPerSM, blocks*g.warps)
	occupancy := min(1, float64(warps)/8)
	if occupancy == 0 {
		return math.Inf(1)
	}
	return flops / rate / occupancy
}
