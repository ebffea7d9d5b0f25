package norm

import (
	"cmp"
	"fmt"

	"github.com/autotune-dev/autotune/codegen/cuda"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// cudaRevision is bumped by hand whenever the emitted CUDA changes in a
// way the knob space does not show.
const cudaRevision = "norm-cuda-1"

// cudaGenericRevision is cudaRevision's counterpart for the shape-generic
// kernels, which are not part of Version.
const cudaGenericRevision = "norm-cuda-generic-1"

// RMSCUDATemplate and LayerCUDATemplate are the CUDA templates of the two
// ops: a warp or a block per row, float32 statistics reduced with warp
// shuffles and, across warps, through shared memory; x, y, gamma and beta
// in f32, bf16 or f16.
var (
	RMSCUDATemplate   = rms.cudaTemplate()
	LayerCUDATemplate = layer.cudaTemplate()
)

func (k kind) cudaTemplate() kernels.Template {
	return kernels.Template{
		Op:      k.op(),
		Backend: kernels.CUDA,
		Version: k.cudaVersion(),
		Space:   k.cudaSpace,
		CUDA: kernels.CUDAFunc(func(kn kernels.Kernel) kernels.CUDAKernel {
			kn.Want("", dtypes...)
			dt := cmp.Or(kn.DType, dtype.Default)
			if kn.Shape == nil {
				return emitCUDAGeneric(k, kn.Name, dt, kn.Config)
			}
			return emitCUDA(k, kn.Name, kn.Shape, dt, kn.Config)
		}),
	}
}

// CUDA knob values, in the order mutation walks.
var (
	cudaThreadsPerRow = []int{32, 64, 128, 256, 512, 1024}
	cudaRowsPerBlock  = []int{1, 2, 4, 8}
	cudaVecs          = []int{1, 2, 4}
)

// cudaSpace returns the knobs for shape on target:
//
//	tpr             32 … 1024  threads per row, a warp or more
//	rows_per_block  1, 2, 4, 8 (those ≤ rows)
//	vec             1, 2, 4    4-, 8-, 16-byte loads: float, float2, float4,
//	                           or 2, 4, 8 elements of bf16 or f16
//	algo            LayerNorm's, as on the CPU
//
// A row of several warps has its block to itself
// (multiwarp_rows_alone): the rare rows whose sum of squares overflows
// float32 take a branch with barriers of its own, and a block's threads
// must all meet every barrier. vec must divide cols, so that every row
// starts on a vector boundary; the space has no dtype, so a 16-bit kernel
// whose rows are not a multiple of its 2·vec elements sweeps them an
// element at a time.
func (k kind) cudaSpace(shape []int, target device.Target) *schedule.Space {
	rows, cols := checkShape(shape)
	var rpbs []int
	for _, r := range cudaRowsPerBlock {
		if r == 1 || r <= rows {
			rpbs = append(rpbs, r)
		}
	}
	constraints := []schedule.Constraint{
		{Name: "vec_divides_cols", OK: func(c schedule.Config) bool { return cols%c.Int("vec") == 0 }},
		// Threads beyond the row's vectors would only idle; a warp is
		// the least a row gets.
		{Name: "threads_at_most_vectors", OK: func(c schedule.Config) bool {
			return c.Int("tpr") == 32 || c.Int("tpr") <= cols/c.Int("vec")
		}},
		{Name: "multiwarp_rows_alone", OK: func(c schedule.Config) bool {
			return c.Int("tpr") == 32 || c.Int("rows_per_block") == 1
		}},
	}
	if gpu := target.GPU; gpu == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cuda_target", OK: func(schedule.Config) bool { return false }})
	} else {
		constraints = append(constraints, schedule.Constraint{Name: "threads_per_block", OK: func(c schedule.Config) bool {
			return c.Int("tpr")*c.Int("rows_per_block") <= gpu.MaxThreadsPerBlock
		}})
	}
	knobs := []schedule.Knob{
		schedule.Choice("tpr", cudaThreadsPerRow...),
		schedule.Choice("rows_per_block", rpbs...),
		schedule.Choice("vec", cudaVecs...),
	}
	if k.layer {
		knobs = append(knobs, schedule.Enum("algo", algos...))
	}
	return schedule.NewSpace(knobs, constraints...)
}

// cudaVersion hashes cudaRevision with the space of 4096x4096 on sm_90.
func (k kind) cudaVersion() string {
	ref, err := device.Lookup("sm_90")
	if err != nil {
		panic(err)
	}
	return kernels.Version(k.name+"-"+cudaRevision, k.cudaSpace([]int{4096, 4096}, ref))
}

// cudaEmitter writes one kernel. A shape-generic one has no rows and
// cols (0) and generic set.
type cudaEmitter struct {
	kind
	cuda.Writer
	generic       bool
	rows, cols    int
	dt            dtype.DType
	tpr, rpb, vec int
	ev            int // elements per vector: vec, or 2·vec of a 16-bit dtype
	onepass       bool
	warps         int // warps per row
}

// newCUDAEmitter returns the emitter of cfg for dt; rows and cols are
// the caller's to set.
func newCUDAEmitter(k kind, dt dtype.DType, cfg schedule.Config) *cudaEmitter {
	e := &cudaEmitter{kind: k, dt: dt,
		tpr: cfg.Int("tpr"), rpb: cfg.Int("rows_per_block"), vec: cfg.Int("vec"),
		onepass: k.layer && cfg.Str("algo") == "onepass"}
	e.ev = e.vec * 4 / dt.Size()
	e.warps = e.tpr / 32
	return e
}

// emitCUDA writes the kernel of cfg for shape and dt: each row's threads
// sweep it in vectors of vec 32-bit words (floats, or pairs of 16-bit
// elements converted to float), reduce the sums by warp shuffles (and
// across the row's warps through shared memory), and write y in a last
// sweep. A row whose float32 sum of squares is not finite (inputs near
// 1e18) computes it again scaled by its largest magnitude: two more
// sweeps, for those rows only.
func emitCUDA(k kind, name string, shape []int, dt dtype.DType, cfg schedule.Config) kernels.CUDAKernel {
	e := newCUDAEmitter(k, dt, cfg)
	e.rows, e.cols = checkShape(shape)
	e.kernel(name, cfg)
	return kernels.CUDAKernel{
		Source: e.String(),
		Entry:  name,
		Grid:   [3]int{(e.rows + e.rpb - 1) / e.rpb, 1, 1},
		Block:  [3]int{e.tpr * e.rpb, 1, 1},
	}
}

// emitCUDAGeneric writes the shape-generic kernel of cfg for dt: rows and
// cols are arguments, and a row whose length the vector's elements do not
// divide (which the space rules out for the tuned shape in float32) is
// swept an element at a time, so that every config serves every shape:
// only then does every row start on a vector boundary.
func emitCUDAGeneric(k kind, name string, dt dtype.DType, cfg schedule.Config) kernels.CUDAKernel {
	e := newCUDAEmitter(k, dt, cfg)
	e.generic = true
	e.kernel(name, cfg)
	return kernels.CUDAKernel{Source: e.String(), Entry: name, Generic: &kernels.CUDALaunch{
		Block: [3]int{e.tpr * e.rpb, 1, 1},
		Grid:  [3][]kernels.CUDAFactor{{{Dim: 0, Div: e.rpb}}},
	}}
}

// vecType is the CUDA type of a vector of vec floats, or of vec 32-bit
// words of two 16-bit elements each.
func (e *cudaEmitter) vecType() string {
	if e.half() {
		return map[int]string{1: "unsigned", 2: "uint2", 4: "uint4"}[e.vec]
	}
	return map[int]string{1: "float", 2: "float2", 4: "float4"}[e.vec]
}

// half reports whether the elements are 16-bit (bf16, f16): kept as their
// bits and converted by codegen/cuda's HalfHelpers.
func (e *cudaEmitter) half() bool { return e.dt.Size() == 2 }

// elemType is the CUDA type of an element in memory.
func (e *cudaEmitter) elemType() string {
	if e.half() {
		return "unsigned short"
	}
	return "float"
}

// load is the float value of the element x in memory.
func (e *cudaEmitter) load(x string) string {
	if e.half() {
		return fmt.Sprintf("at_%s_to_float(%s)", e.dt, x)
	}
	return x
}

// store is the element that stores the float v, rounded to nearest even.
func (e *cudaEmitter) store(v string) string {
	if e.half() {
		return fmt.Sprintf("at_float_to_%s(%s)", e.dt, v)
	}
	return v
}

// lanes are the components of a vector value named q: floats, or words.
func (e *cudaEmitter) lanes(q string) []string {
	if e.vec == 1 {
		return []string{q}
	}
	return []string{q + ".x", q + ".y", q + ".z", q + ".w"}[:e.vec]
}

// floats returns the names of the float values of vector q: its lanes,
// or of a 16-bit dtype the halves of each word, converted by a line it
// emits per word.
func (e *cudaEmitter) floats(q string) []string {
	if !e.half() {
		return e.lanes(q)
	}
	var fs []string
	for i, w := range e.lanes(q) {
		f := fmt.Sprintf("%s%d", q, i)
		e.Line("const float2 %s = at_%sx2_to_float2(%s);", f, e.dt, w)
		fs = append(fs, f+".x", f+".y")
	}
	return fs
}

// elemName is how the header names the elements.
func (e *cudaEmitter) elemName() string {
	if e.half() {
		return string(e.dt) + ", float32 statistics"
	}
	return "float32"
}

func (e *cudaEmitter) kernel(name string, cfg schedule.Config) {
	e.Line("// Code generated by autotune. DO NOT EDIT.")
	if e.generic {
		e.Line("// template %s (generic %s), %s of any shape, %s", e.cudaVersion(), cudaGenericRevision, e.kind.name, e.elemName())
		e.Line("// config %s", cfg)
		e.Line("// launch: grid ceil(rows/%d), block %d", e.rpb, e.tpr*e.rpb)
	} else {
		e.Line("// template %s, %s %dx%d %s", e.cudaVersion(), e.kind.name, e.rows, e.cols, e.elemName())
		e.Line("// config %s", cfg)
		e.Line("// launch: grid %d, block %d", (e.rows+e.rpb-1)/e.rpb, e.tpr*e.rpb)
	}
	e.Line("")
	if e.half() {
		e.Raw(cuda.HalfHelpers(e.dt))
		e.Line("")
	}
	et := e.elemType()
	params := fmt.Sprintf("%[1]s *__restrict__ out, const %[1]s *__restrict__ in, const %[1]s *__restrict__ gamma", et)
	if e.layer {
		params += fmt.Sprintf(", const %s *__restrict__ beta", et)
	}
	if e.generic {
		params += ", int rows, int cols"
	}
	e.Open(`extern "C" __global__ void __launch_bounds__(%d) %s(%s)`, e.tpr*e.rpb, name, params)
	if e.generic {
		e.Line("constexpr int TPR = %d, RPB = %d;", e.tpr, e.rpb)
		e.Line("const int R = rows, C = cols, NV = C / %d;", e.ev)
		e.Line("constexpr float eps = %gf;", e.eps)
		e.Line("const float n = (float)C;")
		if e.scalarForm() {
			e.Line("// Rows of a multiple of %d %s are swept in vectors, others %s at a time.", e.ev,
				map[bool]string{true: "elements", false: "floats"}[e.half()], map[bool]string{true: "an element", false: "a float"}[e.half()])
			e.Line("const bool vecs = C %% %d == 0;", e.ev)
		}
	} else {
		e.Line("constexpr int R = %d, C = %d, TPR = %d, RPB = %d, NV = C / %d;", e.rows, e.cols, e.tpr, e.rpb, e.ev)
		e.Line("constexpr float eps = %gf, n = (float)C;", e.eps)
		if e.scalarOnly() {
			e.Line("// Rows of %d elements, not a multiple of %d: swept an element at a time.", e.cols, e.ev)
		}
	}
	if e.scalarForm() || e.scalarOnly() {
		e.Line("const %s *xs = in + (unsigned long long)(blockIdx.x * RPB + threadIdx.x / TPR) * C;", et)
		e.Line("%s *ys = out + (unsigned long long)(blockIdx.x * RPB + threadIdx.x / TPR) * C;", et)
	}
	e.Line("const int t = threadIdx.x %% TPR, rib = threadIdx.x / TPR;")
	e.Line("const int row = blockIdx.x * RPB + rib;")
	e.Line("// Rows past R are only in blocks of one-warp rows, which meet no barrier.")
	e.Line("if (row >= R) return;")
	if !e.scalarOnly() {
		e.Line("const %s *x = reinterpret_cast<const %s *>(in + (unsigned long long)row * C);", e.vecType(), e.vecType())
		e.Line("%s *y = reinterpret_cast<%s *>(out + (unsigned long long)row * C);", e.vecType(), e.vecType())
		e.Line("const %s *g = reinterpret_cast<const %s *>(gamma);", e.vecType(), e.vecType())
		if e.layer {
			e.Line("const %s *b = reinterpret_cast<const %s *>(beta);", e.vecType(), e.vecType())
		}
	}
	if e.warps > 1 {
		e.Line("__shared__ float red[%d];", e.warps)
		e.Line("const int warp = t / 32, lane = t %% 32;")
	}
	// dev is each element's deviation: x itself for RMSNorm, x-k-m for
	// LayerNorm (k = x[0], see the package doc).
	dev := func(l string) string { return l }
	if e.layer {
		e.Line("const float k = %s;", e.load("in[(unsigned long long)row * C]"))
		dev = func(l string) string { return "(" + l + " - k - m)" }
		if e.onepass {
			e.Line("float s = 0.f, ss = 0.f;")
			e.sweep(func(l string) { e.Line("{ const float d = %s - k; s += d; ss = fmaf(d, d, ss); }", l) })
			e.reduce("s", "+")
			e.reduce("ss", "+")
			e.Line("const float m = s / n;")
			e.Line("float inv = 1.f / sqrtf(fmaxf(ss / n - m * m, 0.f) + eps);")
		} else {
			e.Line("float s = 0.f;")
			e.sweep(func(l string) { e.Line("s += %s - k;", l) })
			e.reduce("s", "+")
			e.Line("const float m = s / n;")
			e.Line("float ss = 0.f;")
			e.sweep(func(l string) { e.Line("{ const float d = %s; ss = fmaf(d, d, ss); }", dev(l)) })
			e.reduce("ss", "+")
			e.Line("float inv = 1.f / sqrtf(ss / n + eps);")
		}
	} else {
		e.Line("float ss = 0.f;")
		e.sweep(func(l string) { e.Line("ss = fmaf(%[1]s, %[1]s, ss);", l) })
		e.reduce("ss", "+")
		e.Line("float inv = 1.f / sqrtf(ss / n + eps);")
	}
	e.Open("if (!(ss <= 3.402823466e38f))")
	e.Line("// The squares overflowed float32: again, scaled by the largest magnitude mx.")
	e.Line("float mx = 0.f;")
	e.sweep(func(l string) { e.Line("mx = fmaxf(mx, fabsf(%s));", dev(l)) })
	e.reduce("mx", "max")
	e.Line("const float sc = 1.f / mx;")
	e.Line("float s2 = 0.f;")
	e.sweep(func(l string) { e.Line("{ const float u = %s * sc; s2 = fmaf(u, u, s2); }", dev(l)) })
	e.reduce("s2", "+")
	e.Line("// eps/mx² is 0 where mx² overflows, and negligible wherever this runs.")
	e.Line("inv = 1.f / (mx * sqrtf(s2 / n + eps / (mx * mx)));")
	e.Close()
	e.write(dev)
	e.Close()
}

// sweep emits the loop over this thread's vectors of the row, body
// getting the name of each float.
func (e *cudaEmitter) sweep(body func(l string)) {
	e.scalarOr(func() {
		e.Line("const float q = %s;", e.load("xs[v]"))
		body("q")
	}, func() {
		e.Line("const %s q = x[v];", e.vecType())
		for _, l := range e.floats("q") {
			body(l)
		}
	})
}

// scalarOr emits the loop over this thread's elements of the row with
// scalar as its body, or over its vectors with vector, or both, chosen by
// vecs at run time (scalarForm).
func (e *cudaEmitter) scalarOr(scalar, vector func()) {
	if e.scalarForm() || e.scalarOnly() {
		if e.scalarForm() {
			e.Open("if (!vecs)")
		}
		e.Open("for (int v = t; v < C; v += TPR)")
		scalar()
		e.Close()
		if !e.scalarForm() {
			return
		}
		e.Close()
		e.Open("else")
	}
	e.Open("for (int v = t; v < NV; v += TPR)")
	vector()
	e.Close()
	if e.scalarForm() {
		e.Close()
	}
}

// scalarForm reports whether the kernel sweeps rows that its vectors do
// not divide an element at a time: a generic kernel of vectors.
func (e *cudaEmitter) scalarForm() bool { return e.generic && e.ev > 1 }

// scalarOnly reports whether a specialised kernel sweeps its rows an
// element at a time: 16-bit rows that are not a multiple of the vector's
// elements (the space checks vec against float32's).
func (e *cudaEmitter) scalarOnly() bool { return !e.generic && e.cols%e.ev != 0 }

// reduce emits the reduction of v over the row's threads: shuffles within
// each warp, then, for rows of several warps, through red, which a
// barrier first frees from the previous reduction. Every thread combines
// the warps' values in the same order, so all hold the same result.
func (e *cudaEmitter) reduce(v, op string) {
	combine := func(a, b string) string {
		if op == "max" {
			return "fmaxf(" + a + ", " + b + ")"
		}
		return a + " + " + b
	}
	e.Line("#pragma unroll")
	e.Line("for (int o = 16; o > 0; o >>= 1) %s = %s;", v, combine(v, "__shfl_xor_sync(0xffffffffu, "+v+", o)"))
	if e.warps == 1 {
		return
	}
	e.Line("__syncthreads();")
	e.Line("if (lane == 0) red[warp] = %s;", v)
	e.Line("__syncthreads();")
	e.Line("%s = red[0];", v)
	e.Line("#pragma unroll")
	e.Line("for (int w = 1; w < %d; ++w) %s = %s;", e.warps, v, combine(v, "red[w]"))
}

// write emits the last sweep: y = dev·inv·gamma (+ beta), a 16-bit y
// rounded to nearest even.
func (e *cudaEmitter) write(dev func(string) string) {
	y := func(x, g, b string) string {
		if e.layer {
			return fmt.Sprintf("fmaf(%s * inv, %s, %s)", dev(x), g, b)
		}
		return fmt.Sprintf("%s * inv * %s", x, g)
	}
	e.scalarOr(func() {
		e.Line("ys[v] = %s;", e.store(y(e.load("xs[v]"), e.load("gamma[v]"), e.load("beta[v]"))))
	}, func() {
		e.Line("const %s q = x[v], gv = g[v];", e.vecType())
		if e.layer {
			e.Line("const %s bv = b[v];", e.vecType())
		}
		qs, gs := e.floats("q"), e.floats("gv")
		bs := qs // unused by RMSNorm's y
		if e.layer {
			bs = e.floats("bv")
		}
		e.Line("%s o;", e.vecType())
		for i, o := range e.lanes("o") {
			if e.half() {
				e.Line("%s = at_float2_to_%sx2(%s, %s);", o, e.dt, y(qs[2*i], gs[2*i], bs[2*i]), y(qs[2*i+1], gs[2*i+1], bs[2*i+1]))
				continue
			}
			e.Line("%s = %s;", o, y(qs[i], gs[i], bs[i]))
		}
		e.Line("y[v] = o;")
	})
}
