package softmax

import (
	"cmp"
	"fmt"

	"github.com/autotune-dev/autotune/codegen/cuda"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaRevision is bumped by hand whenever the emitted CUDA changes in a way
// the knob space does not show (see the package doc).
const cudaRevision = "softmax-cuda-2"

// cudaGenericRevision is cudaRevision's counterpart for the shape-generic
// CUDA kernels, which are not part of Version.
const cudaGenericRevision = "softmax-cuda-generic-1"

// CUDATemplate is the CUDA template of Op: fused softmax in generated CUDA
// C, one or more rows per block, of f32, bf16 and f16 (see the package
// doc).
var CUDATemplate = kernels.Template{
	Op:      Op,
	Backend: kernels.CUDA,
	Version: cudaTemplateVersion,
	Space:   cudaSpace,
	CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
		k.Want("", cudaDTypes...)
		if k.Shape == nil {
			return emitCUDAGeneric(k.Name, cmp.Or(k.DType, dtype.Default), k.Config)
		}
		return emitCUDA(k.Name, k.Shape, cmp.Or(k.DType, dtype.Default), k.Config)
	}),
}

// cudaDTypes are the element types the CUDA kernels have.
var cudaDTypes = []dtype.DType{dtype.F32, dtype.BF16, dtype.F16}

// CUDA knob values, in the order mutation walks. vec is the width of a
// load in 32-bit words: that many floats, or twice as many bf16 or f16
// elements (up to 8 in a 16-byte load).
var (
	cudaThreadsPerRow = []int{32, 64, 128, 256, 512, 1024}
	cudaRowsPerBlock  = []int{1, 2, 4, 8}
	cudaVecs          = []int{1, 2, 4}
	cudaKeeps         = []string{"global", "smem", "regs"}
	cudaExps          = []string{"fast", "precise"}
)

// maxRegVectors bounds the vectors a thread holds with keep=regs: 16
// float4s are 64 registers, a quarter of the most a thread may have.
const maxRegVectors = 16

// cudaGeometry is what a config, a shape and a dtype fix about a kernel.
// A shape-generic kernel's has no rows and cols (0) and generic set: what
// depends on them is computed in the kernel.
type cudaGeometry struct {
	generic             bool
	rows, cols          int
	dt                  dtype.DType
	tpr, rpb, vec       int
	ev                  int // elements per vector: vec, or 2·vec of a 16-bit dtype
	keep, algo, exp     string
	warpsPerRow         int
	regVectors          int // vectors per thread with keep=regs
	rowBuf              int // elements per row of the shared-memory copy with keep=smem
	staticSmem, dynSmem int
}

// newCUDAGeometry returns the geometry of c for shape and dt. The space's
// constraints take f32's: a 16-bit kernel of a config holds no more
// vectors in registers and about half the shared memory.
func newCUDAGeometry(shape []int, dt dtype.DType, c schedule.Config) cudaGeometry {
	rows, cols := checkShape(shape)
	g := cudaGeometry{
		rows: rows, cols: cols, dt: dt,
		tpr: c.Int("tpr"), rpb: c.Int("rows_per_block"), vec: c.Int("vec"),
		keep: c.Str("keep"), algo: c.Str("algo"), exp: c.Str("exp"),
	}
	g.ev = g.vec * 4 / dt.Size()
	g.warpsPerRow = g.tpr / 32
	g.regVectors = (cols/g.ev + g.tpr - 1) / g.tpr
	// A row that starts off a vector boundary is copied shifted by up to
	// ev-1 elements, so that its vectors are aligned in shared memory too;
	// each row starts on 16 bytes.
	per16 := 16 / dt.Size()
	g.rowBuf = (cols + g.ev - 1 + per16 - 1) / per16 * per16
	if g.warpsPerRow > 1 {
		g.staticSmem = 2 * 4 * g.rpb * g.warpsPerRow
	}
	if g.keep == "smem" {
		g.dynSmem = dt.Size() * g.rpb * g.rowBuf
	}
	return g
}

// cudaSpace returns the knobs for shape on target, with the target's
// limits on threads and shared memory per block. A CPU target gets the
// same knobs with every point invalid.
func cudaSpace(shape []int, target device.Target) *schedule.Space {
	rows, cols := checkShape(shape)
	gpu := target.GPU
	var rpbs []int
	for _, r := range cudaRowsPerBlock {
		if r == 1 || r <= rows {
			rpbs = append(rpbs, r)
		}
	}
	constraints := []schedule.Constraint{
		{Name: "vec_at_most_cols", OK: func(c schedule.Config) bool { return c.Int("vec") <= cols }},
		// Threads beyond the row's vectors would only idle; a warp is the
		// least a row gets.
		{Name: "threads_at_most_vectors", OK: func(c schedule.Config) bool {
			tpr, vec := c.Int("tpr"), c.Int("vec")
			return tpr == 32 || tpr <= (cols+vec-1)/vec
		}},
		{Name: "regs_fit", OK: func(c schedule.Config) bool {
			return c.Str("keep") != "regs" || newCUDAGeometry(shape, dtype.F32, c).regVectors <= maxRegVectors
		}},
	}
	if gpu == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cuda_target", OK: func(schedule.Config) bool { return false }})
	} else {
		constraints = append(constraints,
			schedule.Constraint{Name: "threads_per_block", OK: func(c schedule.Config) bool {
				return c.Int("tpr")*c.Int("rows_per_block") <= gpu.MaxThreadsPerBlock
			}},
			schedule.Constraint{Name: "shared_memory_per_block", OK: func(c schedule.Config) bool {
				g := newCUDAGeometry(shape, dtype.F32, c)
				return g.staticSmem+g.dynSmem <= gpu.SharedMemPerBlock
			}})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("tpr", cudaThreadsPerRow...),
		schedule.Choice("rows_per_block", rpbs...),
		schedule.Choice("vec", cudaVecs...),
		schedule.Enum("keep", cudaKeeps...),
		schedule.Enum("algo", algos...),
		schedule.Enum("exp", cudaExps...),
	}, constraints...)
}

var cudaTemplateVersion = cudaVersion()

// cudaVersion hashes cudaRevision with the space of 4096x1024 on sm_90.
func cudaVersion() string {
	ref, err := device.Lookup("sm_90")
	if err != nil {
		panic(err)
	}
	return kernels.Version(cudaRevision, cudaSpace([]int{4096, 1024}, ref))
}

// emitCUDA writes the kernel of cfg for shape and dt; see the package doc
// for the code's shape.
func emitCUDA(name string, shape []int, dt dtype.DType, cfg schedule.Config) kernels.CUDAKernel {
	g := newCUDAGeometry(shape, dt, cfg)
	e := &cudaEmitter{g: g}
	e.kernel(name, cfg)
	return kernels.CUDAKernel{
		Source:      e.String(),
		Entry:       name,
		Grid:        [3]int{(g.rows + g.rpb - 1) / g.rpb, 1, 1},
		Block:       [3]int{g.tpr * g.rpb, 1, 1},
		SharedBytes: g.dynSmem,
	}
}

// emitCUDAGeneric writes the shape-generic kernel of cfg for dt: rows and
// cols are arguments, every row may start off a vector boundary, and the
// shared-memory copy of keep=smem is sized on the host. keep=regs keeps
// nothing: how many vectors a thread would hold depends on cols, so the
// generic kernel re-reads the row as keep=global does.
func emitCUDAGeneric(name string, dt dtype.DType, cfg schedule.Config) kernels.CUDAKernel {
	g := newCUDAGeometry([]int{1, 1}, dt, cfg)
	g.generic, g.rows, g.cols, g.regVectors, g.rowBuf, g.dynSmem = true, 0, 0, 0, 0, 0
	if g.keep == "regs" {
		g.keep = "global"
	}
	e := &cudaEmitter{g: g}
	e.kernel(name, cfg)
	l := &kernels.CUDALaunch{
		Block: [3]int{g.tpr * g.rpb, 1, 1},
		Grid:  [3][]kernels.CUDAFactor{{{Dim: 0, Div: g.rpb}}},
	}
	if g.keep == "smem" {
		l.Shared = kernels.CUDASize{Per: dt.Size() * g.rpb, Dim: 1, Add: g.ev - 1, Round: 16 / dt.Size()}
	}
	return kernels.CUDAKernel{Source: e.String(), Entry: name, Generic: l}
}

type cudaEmitter struct {
	g cudaGeometry
	cuda.Writer
}

// vecType is the CUDA type of a vector of g.vec floats, or of g.vec
// 32-bit words of two 16-bit elements each.
func (g cudaGeometry) vecType() string {
	if g.half() {
		return map[int]string{1: "unsigned", 2: "uint2", 4: "uint4"}[g.vec]
	}
	return map[int]string{1: "float", 2: "float2", 4: "float4"}[g.vec]
}

// half reports whether the elements are 16-bit (bf16, f16): kept as their
// bits and converted by codegen/cuda's HalfHelpers.
func (g cudaGeometry) half() bool { return g.dt.Size() == 2 }

// elemType is the CUDA type of an element in memory.
func (g cudaGeometry) elemType() string {
	if g.half() {
		return "unsigned short"
	}
	return "float"
}

// load is the float value of the element e in memory.
func (g cudaGeometry) load(e string) string {
	if g.half() {
		return fmt.Sprintf("at_%s_to_float(%s)", g.dt, e)
	}
	return e
}

// store is the element that stores the float v, rounded to nearest even.
func (g cudaGeometry) store(v string) string {
	if g.half() {
		return fmt.Sprintf("at_float_to_%s(%s)", g.dt, v)
	}
	return v
}

// lanes are the components of a vector value named q: floats, or words
// of two 16-bit elements.
func (g cudaGeometry) lanes(q string) []string {
	if g.vec == 1 {
		return []string{q}
	}
	return []string{q + ".x", q + ".y", q + ".z", q + ".w"}[:g.vec]
}

// aligned reports whether every row starts on a vector boundary, so that a
// row has no scalar head or tail.
func (g cudaGeometry) aligned() bool { return !g.generic && g.cols%g.ev == 0 }

func (e *cudaEmitter) exp(arg string) string {
	if e.g.exp == "fast" {
		return "__expf(" + arg + ")"
	}
	return "expf(" + arg + ")"
}

func (e *cudaEmitter) kernel(name string, cfg schedule.Config) {
	g := e.g
	elem := "float32"
	if g.half() {
		elem = string(g.dt) + ", float32 statistics"
	}
	e.Line("// Code generated by autotune. DO NOT EDIT.")
	if g.generic {
		e.Line("// template %s (generic %s), softmax of any shape, %s", cudaTemplateVersion, cudaGenericRevision, elem)
		e.Line("// config %s", cfg)
		e.Line("// launch: grid ceil(rows/%d), block %d, dynamic shared memory %s", g.rpb, g.tpr*g.rpb,
			map[bool]string{true: fmt.Sprintf("%d·(cols+%d rounded up to %d) bytes", g.dt.Size()*g.rpb, g.ev-1, 16/g.dt.Size()), false: "0 bytes"}[g.keep == "smem"])
	} else {
		e.Line("// template %s, softmax %dx%d %s", cudaTemplateVersion, g.rows, g.cols, elem)
		e.Line("// config %s", cfg)
		e.Line("// launch: grid %d, block %d, dynamic shared memory %d bytes", (g.rows+g.rpb-1)/g.rpb, g.tpr*g.rpb, g.dynSmem)
	}
	e.Line("")
	if g.half() {
		e.Raw(cuda.HalfHelpers(g.dt))
		e.Line("")
	}
	et := g.elemType()
	if g.generic {
		e.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ out, const %s *__restrict__ in, int rows, int cols)`, g.tpr*g.rpb, name, et, et)
		e.Line("const int R = rows, C = cols;")
		e.Line("constexpr int TPR = %d, RPB = %d, VEC = %d;", g.tpr, g.rpb, g.ev)
	} else {
		e.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s *__restrict__ out, const %s *__restrict__ in)`, g.tpr*g.rpb, name, et, et)
		e.Line("constexpr int R = %d, C = %d, TPR = %d, RPB = %d, VEC = %d;", g.rows, g.cols, g.tpr, g.rpb, g.ev)
	}
	e.Line("const int t = threadIdx.x %% TPR, rib = threadIdx.x / TPR;")
	e.Line("const int row = blockIdx.x * RPB + rib;")
	e.Line("// Rows past R compute nothing but take part in every barrier.")
	e.Line("const bool valid = row < R;")
	e.Line("const %s *x = in + (unsigned long long)row * C;", et)
	e.Line("%s *y = out + (unsigned long long)row * C;", et)
	if g.aligned() {
		e.Line("constexpr int head = 0, nvec = C / VEC;")
	} else {
		e.Line("// The row starts off a vector boundary: scalars up to the first")
		e.Line("// aligned element, then vectors, then a scalar tail.")
		if g.generic || g.ev > g.cols {
			e.Line("// A vector is longer than a row: a head past the row's end is all of it.")
			e.Line("const int head0 = (VEC - (int)((unsigned long long)row * C %% VEC)) %% VEC, head = head0 < C ? head0 : C;")
		} else {
			e.Line("const int head = (VEC - (int)((unsigned long long)row * C %% VEC)) %% VEC;")
		}
		e.Line("const int nvec = (C - head) / VEC, tail = head + nvec * VEC;")
	}
	switch g.keep {
	case "smem":
		e.Line("extern __shared__ float4 smem4[];")
		e.Line("// This row's copy, shifted by off so that its vectors are aligned.")
		if g.generic {
			e.Line("// Each row's copy starts on 16 bytes (the host sizes the buffer alike).")
			e.Line("const int RB = (C + VEC - 1 + %[1]d - 1) / %[1]d * %[1]d;", 16/g.dt.Size())
			e.Line("%[1]s *sb = (%[1]s *)smem4 + rib * RB;", et)
		} else {
			e.Line("%[1]s *sb = (%[1]s *)smem4 + rib * %[2]d;", et, g.rowBuf)
		}
		if g.aligned() {
			e.Line("constexpr int off = 0;")
		} else {
			e.Line("const int off = (VEC - head) %% VEC;")
		}
	case "regs":
		// At least one element: when the row is shorter than a vector, every
		// element is a tail element and rb goes unused, but NVRTC, unlike g++
		// and clang, rejects an array of size 0.
		e.Line("%s rb[%d]; // this thread's vectors of the row", g.vecType(), max(g.regVectors, 1))
	}
	if g.warpsPerRow > 1 {
		e.Line("__shared__ float red_a[RPB][%d], red_b[RPB][%d];", g.warpsPerRow, g.warpsPerRow)
		e.Line("const int warp = t / 32, lane = t %% 32;")
	}
	e.Line("")

	if g.algo == "online" {
		e.Line("// One pass for the maximum m and the sum s of e^(x-m), one exp per element.")
		e.Line("float m = -3.402823466e38f, s = 0.f;")
		e.pass(true, func(v string) {
			e.Line("{ const float hi = fmaxf(m, %[1]s), lo = fminf(m, %[1]s), e = %[2]s; s = %[1]s > m ? fmaf(s, e, 1.f) : s + e; m = hi; }", v, e.exp("lo - hi"))
		})
		e.reduceOnline()
	} else {
		e.Line("float m = -3.402823466e38f;")
		e.pass(true, func(v string) { e.Line("m = fmaxf(m, %s);", v) })
		e.reduce("m", "red_a", func(a, b string) string { return "fmaxf(" + a + ", " + b + ")" })
		e.Line("float s = 0.f;")
		e.pass(false, func(v string) { e.Line("s += %s;", e.exp(v+" - m")) })
		e.reduce("s", "red_b", func(a, b string) string { return a + " + " + b })
	}
	e.Line("const float inv = 1.f / s;")
	e.write()
	e.Close()
}

// pass emits a loop over this thread's elements of the row that runs body
// on each (body gets the name of a float). The first pass reads the
// input from global memory and, with keep=smem or keep=regs, keeps it.
func (e *cudaEmitter) pass(first bool, body func(v string)) {
	g := e.g
	e.Open("if (valid)")
	if !g.aligned() {
		e.scalarLoops(first, body, "t", "head")
	}
	vt := g.vecType()
	load := func(k string) string {
		switch {
		case first || g.keep == "global":
			return fmt.Sprintf("reinterpret_cast<const %s *>(x + head)[%s]", vt, k)
		case g.keep == "smem":
			return fmt.Sprintf("reinterpret_cast<const %s *>(sb + head + off)[%s]", vt, k)
		}
		panic("unreachable")
	}
	if g.keep == "regs" {
		e.Line("#pragma unroll")
		e.Open("for (int j = 0; j < %d; ++j)", g.regVectors)
		e.Line("const int k = t + j * TPR;")
		e.Open("if (k < nvec)")
		if first {
			e.Line("rb[j] = %s;", load("k"))
		}
		e.floats("rb[j]", body)
		e.Close()
		e.Close()
	} else {
		e.Open("for (int k = t; k < nvec; k += TPR)")
		e.Line("const %s q = %s;", vt, load("k"))
		if first && g.keep == "smem" {
			e.Line("reinterpret_cast<%s *>(sb + head + off)[k] = q;", vt)
		}
		e.floats("q", body)
		e.Close()
	}
	if !g.aligned() {
		e.scalarLoops(first, body, "tail + t", "C")
	}
	e.Close()
}

// floats runs body on each float of the vector value q: its lanes, or
// the two elements of each of its words, converted (p0.x, p0.y, ...).
func (e *cudaEmitter) floats(q string, body func(v string)) {
	g := e.g
	for i, l := range g.lanes(q) {
		if !g.half() {
			body(l)
			continue
		}
		e.Line("const float2 p%d = at_%sx2_to_float2(%s);", i, g.dt, l)
		body(fmt.Sprintf("p%d.x", i))
		body(fmt.Sprintf("p%d.y", i))
	}
}

// scalarLoops emits the loop over the scalar elements [from, to) of a row
// that does not start on a vector boundary (the head or the tail).
func (e *cudaEmitter) scalarLoops(first bool, body func(v string), from, to string) {
	e.Open("for (int i = %s; i < %s; i += TPR)", from, to)
	g := e.g
	switch {
	case g.keep == "smem" && first && g.half():
		e.Line("const unsigned short h = x[i];")
		e.Line("sb[i + off] = h;")
		e.Line("const float v = %s;", g.load("h"))
	case g.keep == "smem" && first:
		e.Line("const float v = x[i];")
		e.Line("sb[i + off] = v;")
	case g.keep == "smem":
		e.Line("const float v = %s;", g.load("sb[i + off]"))
	default:
		e.Line("const float v = %s;", g.load("x[i]"))
	}
	body("v")
	e.Close()
}

// reduce emits the reduction of v over the row's threads with op: within
// each warp by shuffles, then across the row's warps through red.
func (e *cudaEmitter) reduce(v, red string, op func(a, b string) string) {
	e.Line("#pragma unroll")
	e.Line("for (int o = 16; o > 0; o >>= 1) %s = %s;", v, op(v, "__shfl_xor_sync(0xffffffffu, "+v+", o)"))
	if e.g.warpsPerRow == 1 {
		return
	}
	e.Line("if (lane == 0) %s[rib][warp] = %s;", red, v)
	e.Line("__syncthreads();")
	e.Line("%s = %s[rib][0];", v, red)
	e.Line("#pragma unroll")
	e.Line("for (int w = 1; w < %d; ++w) %s = %s;", e.g.warpsPerRow, v, op(v, red+"[rib][w]"))
}

// reduceOnline emits the reduction of the pairs (m, s): the larger maximum
// wins and the other sum is rescaled to it.
func (e *cudaEmitter) reduceOnline() {
	combine := func(m2, s2 string) {
		e.Line("{ const float m2 = %s, s2 = %s, hi = fmaxf(m, m2); s = s * %s + s2 * %s; m = hi; }",
			m2, s2, e.exp("m - hi"), e.exp("m2 - hi"))
	}
	e.Line("#pragma unroll")
	e.Open("for (int o = 16; o > 0; o >>= 1)")
	combine("__shfl_xor_sync(0xffffffffu, m, o)", "__shfl_xor_sync(0xffffffffu, s, o)")
	e.Close()
	if e.g.warpsPerRow == 1 {
		return
	}
	e.Line("if (lane == 0) { red_a[rib][warp] = m; red_b[rib][warp] = s; }")
	e.Line("__syncthreads();")
	e.Line("m = red_a[rib][0], s = red_b[rib][0];")
	e.Line("#pragma unroll")
	e.Open("for (int w = 1; w < %d; ++w)", e.g.warpsPerRow)
	combine("red_a[rib][w]", "red_b[rib][w]")
	e.Close()
}

// write emits the last pass: y = e^(x-m)·inv, a vector at a time,
// rounded to nearest even for a 16-bit dtype.
func (e *cudaEmitter) write() {
	g := e.g
	f := func(v string) string { return e.exp(v+" - m") + " * inv" }
	scalar := func(from, to string) {
		e.Open("for (int i = %s; i < %s; i += TPR)", from, to)
		if g.keep == "smem" {
			e.Line("y[i] = %s;", g.store(f(g.load("sb[i + off]"))))
		} else {
			e.Line("y[i] = %s;", g.store(f(g.load("x[i]"))))
		}
		e.Close()
	}
	vt := g.vecType()
	e.Open("if (valid)")
	if !g.aligned() {
		scalar("t", "head")
	}
	store := func(q string) {
		switch {
		case g.half():
			e.Line("%s o;", vt)
			for i, l := range g.lanes("o") {
				e.Line("const float2 p%d = at_%sx2_to_float2(%s);", i, g.dt, g.lanes(q)[i])
				e.Line("%s = at_float2_to_%sx2(%s, %s);", l, g.dt, f(fmt.Sprintf("p%d.x", i)), f(fmt.Sprintf("p%d.y", i)))
			}
		case g.vec == 1:
			e.Line("reinterpret_cast<float *>(y + head)[k] = %s;", f(q))
			return
		default:
			e.Line("%s o;", vt)
			for i, l := range g.lanes("o") {
				e.Line("%s = %s;", l, f(g.lanes(q)[i]))
			}
		}
		e.Line("reinterpret_cast<%s *>(y + head)[k] = o;", vt)
	}
	switch g.keep {
	case "regs":
		e.Line("#pragma unroll")
		e.Open("for (int j = 0; j < %d; ++j)", g.regVectors)
		e.Line("const int k = t + j * TPR;")
		e.Open("if (k < nvec)")
		store("rb[j]")
		e.Close()
		e.Close()
	default:
		e.Open("for (int k = t; k < nvec; k += TPR)")
		if g.keep == "smem" {
			e.Line("const %s q = reinterpret_cast<const %s *>(sb + head + off)[k];", vt, vt)
		} else {
			e.Line("const %s q = reinterpret_cast<const %s *>(x + head)[k];", vt, vt)
		}
		store("q")
		e.Close()
	}
	if !g.aligned() {
		scalar("tail + t", "C")
	}
	e.Close()
}
