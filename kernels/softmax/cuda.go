package softmax

import (
	"fmt"

	"github.com/autotune-dev/autotune/codegen/cuda"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaRevision is bumped by hand whenever the emitted CUDA changes in a way
// the knob space does not show (see the package doc).
const cudaRevision = "softmax-cuda-1"

// CUDATemplate is the CUDA template of Op: fused softmax in generated CUDA
// C, one or more rows per block (see the package doc).
var CUDATemplate = kernels.Template{
	Op:      Op,
	Backend: kernels.CUDA,
	Version: cudaTemplateVersion,
	Space:   cudaSpace,
	CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
		k.Want("", dtype.F32)
		return emitCUDA(k.Name, k.Shape, k.Config)
	}),
}

// CUDA knob values, in the order mutation walks.
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

// cudaGeometry is what a config and a shape fix about a kernel.
type cudaGeometry struct {
	rows, cols          int
	tpr, rpb, vec       int
	keep, algo, exp     string
	warpsPerRow         int
	regVectors          int // vectors per thread with keep=regs
	rowBuf              int // floats per row of the shared-memory copy with keep=smem
	staticSmem, dynSmem int
}

func newCUDAGeometry(shape []int, c schedule.Config) cudaGeometry {
	rows, cols := checkShape(shape)
	g := cudaGeometry{
		rows: rows, cols: cols,
		tpr: c.Int("tpr"), rpb: c.Int("rows_per_block"), vec: c.Int("vec"),
		keep: c.Str("keep"), algo: c.Str("algo"), exp: c.Str("exp"),
	}
	g.warpsPerRow = g.tpr / 32
	g.regVectors = (cols/g.vec + g.tpr - 1) / g.tpr
	// A row that starts off a vector boundary is copied shifted by up to
	// vec-1 floats, so that its vectors are aligned in shared memory too.
	g.rowBuf = (cols + g.vec - 1 + 3) / 4 * 4
	if g.warpsPerRow > 1 {
		g.staticSmem = 2 * 4 * g.rpb * g.warpsPerRow
	}
	if g.keep == "smem" {
		g.dynSmem = 4 * g.rpb * g.rowBuf
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
			return c.Str("keep") != "regs" || newCUDAGeometry(shape, c).regVectors <= maxRegVectors
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
				g := newCUDAGeometry(shape, c)
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

// emitCUDA writes the kernel of cfg for shape; see the package doc for
// the code's shape.
func emitCUDA(name string, shape []int, cfg schedule.Config) kernels.CUDAKernel {
	g := newCUDAGeometry(shape, cfg)
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

type cudaEmitter struct {
	g cudaGeometry
	cuda.Writer
}

// vecType is the CUDA type of a vector of g.vec floats.
func (g cudaGeometry) vecType() string {
	return map[int]string{1: "float", 2: "float2", 4: "float4"}[g.vec]
}

// lanes are the components of a vector value named q.
func (g cudaGeometry) lanes(q string) []string {
	if g.vec == 1 {
		return []string{q}
	}
	return []string{q + ".x", q + ".y", q + ".z", q + ".w"}[:g.vec]
}

// aligned reports whether every row starts on a vector boundary, so that a
// row has no scalar head or tail.
func (g cudaGeometry) aligned() bool { return g.cols%g.vec == 0 }

func (e *cudaEmitter) exp(arg string) string {
	if e.g.exp == "fast" {
		return "__expf(" + arg + ")"
	}
	return "expf(" + arg + ")"
}

func (e *cudaEmitter) kernel(name string, cfg schedule.Config) {
	g := e.g
	e.Line("// Code generated by autotune. DO NOT EDIT.")
	e.Line("// template %s, softmax %dx%d float32", cudaTemplateVersion, g.rows, g.cols)
	e.Line("// config %s", cfg)
	e.Line("// launch: grid %d, block %d, dynamic shared memory %d bytes", (g.rows+g.rpb-1)/g.rpb, g.tpr*g.rpb, g.dynSmem)
	e.Line("")
	e.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(float *__restrict__ out, const float *__restrict__ in)`, g.tpr*g.rpb, name)
	e.Line("constexpr int R = %d, C = %d, TPR = %d, RPB = %d, VEC = %d;", g.rows, g.cols, g.tpr, g.rpb, g.vec)
	e.Line("const int t = threadIdx.x %% TPR, rib = threadIdx.x / TPR;")
	e.Line("const int row = blockIdx.x * RPB + rib;")
	e.Line("// Rows past R compute nothing but take part in every barrier.")
	e.Line("const bool valid = row < R;")
	e.Line("const float *x = in + (unsigned long long)row * C;")
	e.Line("float *y = out + (unsigned long long)row * C;")
	if g.aligned() {
		e.Line("constexpr int head = 0, nvec = C / VEC;")
	} else {
		e.Line("// The row starts off a vector boundary: scalars up to the first")
		e.Line("// aligned element, then vectors, then a scalar tail.")
		e.Line("const int head = (VEC - (int)((unsigned long long)row * C %% VEC)) %% VEC;")
		e.Line("const int nvec = (C - head) / VEC, tail = head + nvec * VEC;")
	}
	switch g.keep {
	case "smem":
		e.Line("extern __shared__ float4 smem4[];")
		e.Line("// This row's copy, shifted by off so that its vectors are aligned.")
		if g.aligned() {
			e.Line("float *sb = (float *)smem4 + rib * %d;", g.rowBuf)
			e.Line("constexpr int off = 0;")
		} else {
			e.Line("float *sb = (float *)smem4 + rib * %d;", g.rowBuf)
			e.Line("const int off = (VEC - head) %% VEC;")
		}
	case "regs":
		e.Line("%s rb[%d]; // this thread's vectors of the row", g.vecType(), g.regVectors)
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
		for _, v := range g.lanes("rb[j]") {
			body(v)
		}
		e.Close()
		e.Close()
	} else {
		e.Open("for (int k = t; k < nvec; k += TPR)")
		e.Line("const %s q = %s;", vt, load("k"))
		if first && g.keep == "smem" {
			e.Line("reinterpret_cast<%s *>(sb + head + off)[k] = q;", vt)
		}
		for _, v := range g.lanes("q") {
			body(v)
		}
		e.Close()
	}
	if !g.aligned() {
		e.scalarLoops(first, body, "tail + t", "C")
	}
	e.Close()
}

// scalarLoops emits the loop over the scalar elements [from, to) of a row
// that does not start on a vector boundary (the head or the tail).
func (e *cudaEmitter) scalarLoops(first bool, body func(v string), from, to string) {
	e.Open("for (int i = %s; i < %s; i += TPR)", from, to)
	switch {
	case e.g.keep == "smem" && first:
		e.Line("const float v = x[i];")
		e.Line("sb[i + off] = v;")
	case e.g.keep == "smem":
		e.Line("const float v = sb[i + off];")
	default:
		e.Line("const float v = x[i];")
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

// write emits the last pass: y = e^(x-m)·inv, a vector at a time.
func (e *cudaEmitter) write() {
	g := e.g
	f := func(v string) string { return e.exp(v+" - m") + " * inv" }
	scalar := func(from, to string) {
		e.Open("for (int i = %s; i < %s; i += TPR)", from, to)
		if g.keep == "smem" {
			e.Line("y[i] = %s;", f("sb[i + off]"))
		} else {
			e.Line("y[i] = %s;", f("x[i]"))
		}
		e.Close()
	}
	vt := g.vecType()
	e.Open("if (valid)")
	if !g.aligned() {
		scalar("t", "head")
	}
	store := func(q string) {
		if g.vec == 1 {
			e.Line("reinterpret_cast<float *>(y + head)[k] = %s;", f(q))
			return
		}
		e.Line("%s o;", vt)
		for i, l := range g.lanes("o") {
			e.Line("%s = %s;", l, f(g.lanes(q)[i]))
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
