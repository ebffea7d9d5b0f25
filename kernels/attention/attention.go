package attention

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way the
// knob space does not show (see the package doc); Version hashes it with the
// space's description. causalRevision is TemplateCausal's: bump it when the
// causal kernels' code changes (a change to the shared emitter usually
// changes both).
const (
	revision       = "attention-3"
	causalRevision = "attention-causal-3"
)

// Template is fused, non-causal scaled dot-product attention: for a shape
// [B, H, S, D], Q (in0), K (in1) and V (in2) are [B][H][S][D] tensors and
// the kernel writes O (out), of the same layout, with
// O[b][h] = softmax(Q[b][h]·K[b][h]ᵀ/√D)·V[b][h].
var Template = newTemplate(false)

// TemplateCausal is fused causal scaled dot-product attention, the op
// attention_causal: as Template, but query row i attends only to key rows
// j ≤ i, O[b][h] = softmax(Q[b][h]·K[b][h]ᵀ/√D + M)·V[b][h] with M[i][j] = 0
// for j ≤ i and -Inf above the diagonal. It shares Template's knob space and
// emitter; the kernels skip the key blocks above the diagonal, so its FLOPs
// are about half.
var TemplateCausal = newTemplate(true)

// newTemplate returns Template, or TemplateCausal when causal is set.
func newTemplate(causal bool) kernels.Template {
	t := kernels.Template{
		Op:        op(),
		Version:   version(),
		Space:     space,
		Args:      args,
		Reference: func(shape []int, ins [][]float32, out []float64) { reference(false, shape, ins, out) },
		Tolerance: tolerance,
		FLOPs: func(shape []int) float64 {
			b, h, s, d := checkShape(shape)
			return 4 * float64(b) * float64(h) * float64(s) * float64(s) * float64(d)
		},
		Bytes: func(shape []int) float64 {
			return 4 * 4 * elements(shape)
		},
		EmitGo:    emitGo,
		EmitAsm:   emitAsm,
		Inputs:    inputs,
		Baselines: baselines,
	}
	if causal {
		t.Op = causalOp
		t.Version = causalVersion()
		t.Reference = func(shape []int, ins [][]float32, out []float64) { reference(true, shape, ins, out) }
		// The two products over the S(S+1)/2 pairs j ≤ i of each head, 2·D
		// each; the softmax is not counted, as in Template.
		t.FLOPs = func(shape []int) float64 {
			b, h, s, d := checkShape(shape)
			return 2 * float64(b) * float64(h) * float64(d) * float64(s) * float64(s+1)
		}
		t.EmitGo = emitGoCausal
		t.EmitAsm = emitAsmCausal
		t.Baselines = causalBaselines
	}
	return t
}

func op() kernels.Op {
	op, err := kernels.Lookup("attention")
	if err != nil {
		panic(err)
	}
	return op
}

// causalOp is TemplateCausal's op. It is spelled out here rather than taken
// from kernels.Lookup so that the package does not depend on the entry in
// kernels/ops.go being there; TestCausalOp checks that they agree once it is.
var causalOp = kernels.Op{
	Name:    "attention_causal",
	Dims:    []string{"B", "H", "S", "D"},
	Example: "1x8x1024x64",
	Summary: "softmax(Q·Kᵀ/√D + causal mask)·V over [B][H][S][D] tensors: query i attends to keys j ≤ i",
}

// checkShape panics unless shape is [B, H, S, D] with all four positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a bug.
func checkShape(shape []int) (b, h, s, d int) {
	if len(shape) != 4 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1 || shape[3] < 1 {
		panic(fmt.Sprintf("attention: shape %v, want [B H S D] with all ≥ 1", shape))
	}
	return shape[0], shape[1], shape[2], shape[3]
}

func elements(shape []int) float64 {
	b, h, s, d := checkShape(shape)
	return float64(b) * float64(h) * float64(s) * float64(d)
}

func args(shape []int) (ins []int, out int) {
	b, h, s, d := checkShape(shape)
	n := b * h * s * d
	return []int{n, n, n}, n
}

// Knob values. The order is the order mutation walks.
var (
	vecs       = []int{1, 8, 16}
	blockSizes = []int{1, 4, 8, 16, 32, 64}
	exps       = []string{"f64", "poly4", "poly5"}
	layouts    = []string{"rows", "lanes"}
	tileKeys   = []int{1, 2, 4, 6, 8, 12} // mr: keys (scores) and D rows (output) per register tile of the lanes layout
	tileVecs   = []int{1, 2, 4}           // nv: vectors of query rows per register tile of the lanes layout
	micros     = []string{"go", "asm"}    // how the lanes layout's register tiles are written
)

// registerBudget is the most vector registers a register tile of the lanes
// layout may hold live: mr·nv accumulators, nv loaded vectors and one
// broadcast. Go's register allocator uses about 15 of the 32 AVX-512
// registers (gemm's package doc has the measurement); one is left for the
// loop.
const registerBudget = 14

// expDegree maps the exp knob to golang.NewExp's degree.
var expDegree = map[string]int{"f64": 0, "poly4": 4, "poly5": 5}

// space returns the knobs for shape on target; see the package doc for what
// each knob and constraint means. br and bc offer the block sizes up to S
// (and 1): a larger block would be a smaller one with the same work.
func space(shape []int, target device.Target) *schedule.Space {
	b, h, s, _ := checkShape(shape)
	cpu := target.CPU
	if cpu == nil {
		cpu = &device.CPU{Cores: 1}
	}
	threads := kernels.ThreadCounts(cpu)
	var blocks []int
	for _, n := range blockSizes {
		if n == 1 || n <= s {
			blocks = append(blocks, n)
		}
	}
	isa := cpu.ISA
	constraints := append(kernels.VectorConstraints(isa), []schedule.Constraint{
		// Work is dealt in units of one block of query rows of one head; a
		// goroutine without a unit is waste.
		{Name: "threads_at_most_blocks", OK: func(c schedule.Config) bool {
			br := c.Int("br")
			return c.Int("threads") <= b*h*((s+br-1)/br)
		}},
		// The rows layout has no register tile: one value of mr and nv
		// each, or the space would hold copies of every rows point.
		{Name: "rows_has_no_tile", OK: func(c schedule.Config) bool {
			return c.Str("layout") != "rows" || (c.Int("mr") == 1 && c.Int("nv") == 1)
		}},
		// A lanes tile covers nv vectors of query rows, which must divide
		// the block of br rows.
		{Name: "lanes_tile_divides_br", OK: func(c schedule.Config) bool {
			return c.Str("layout") != "lanes" || c.Int("br")%(c.Int("nv")*c.Int("vec")) == 0
		}},
		// Assembly tiles are the lanes layout's, on vectors.
		{Name: "asm_needs_lanes_vectors", OK: func(c schedule.Config) bool {
			return c.Str("micro") != "asm" || (c.Str("layout") == "lanes" && c.Int("vec") > 1)
		}},
		{Name: "register_budget", OK: func(c schedule.Config) bool {
			mr, nv := c.Int("mr"), c.Int("nv")
			if c.Str("micro") == "asm" {
				return goasm.Fits(c.Int("vec"), mr, nv)
			}
			return mr*nv+nv+1 <= registerBudget
		}},
	}...)
	if target.CPU == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("vec", vecs...),
		schedule.Choice("br", blocks...),
		schedule.Choice("bc", blocks...),
		schedule.Enum("exp", exps...),
		schedule.Choice("threads", threads...),
		schedule.Enum("layout", layouts...),
		schedule.Choice("mr", tileKeys...),
		schedule.Choice("nv", tileVecs...),
		schedule.Enum("micro", micros...),
	}, constraints...)
}

// version hashes revision and the space of a fixed workload on a fixed
// target, so that it is the same on every machine and changes whenever a
// knob, a value or a constraint does.
func version() string { return versionOf(revision, space) }

// causalVersion is version for TemplateCausal: its own revision, the same
// space.
func causalVersion() string { return versionOf(causalRevision, space) }

func versionOf(rev string, space func([]int, device.Target) *schedule.Space) string {
	ref := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}}
	return kernels.Version(rev, space([]int{1, 8, 1024, 64}, ref))
}

// reference computes attention in float64: per query row the scores, their
// maximum subtracted before exp, the weights' sum, and the weighted sum of
// V's rows divided by it. With causal, row i meets only keys j ≤ i (the
// masked scores' weights e^-Inf are 0, so they are left out).
func reference(causal bool, shape []int, ins [][]float32, out []float64) {
	b, h, s, d := checkShape(shape)
	n := b * h * s * d
	q, k, v := ins[0][:n], ins[1][:n], ins[2][:n]
	out = out[:n]
	scale := 1 / math.Sqrt(float64(d))
	w := make([]float64, s)
	for bh := range b * h {
		base := bh * s * d
		for i := range s {
			qi := q[base+i*d : base+(i+1)*d]
			w := w[:s]
			if causal {
				w = w[:i+1]
			}
			m := math.Inf(-1)
			for j := range w {
				kj := k[base+j*d : base+(j+1)*d]
				dot := 0.0
				for x := range qi {
					dot += float64(qi[x]) * float64(kj[x])
				}
				w[j] = dot * scale
				m = max(m, w[j])
			}
			sum := 0.0
			for j := range w {
				w[j] = math.Exp(w[j] - m)
				sum += w[j]
			}
			o := out[base+i*d : base+(i+1)*d]
			clear(o)
			for j, wj := range w {
				vj := v[base+j*d : base+(j+1)*d]
				for x := range o {
					o[x] += wj * float64(vj[x])
				}
			}
			for x := range o {
				o[x] /= sum
			}
		}
	}
}

// Error model of the tolerance (see the package doc). Inputs are assumed to
// be at most inputBound in magnitude, as the tuner's harness (±[0.125, 4])
// and the tests draw them.
const (
	eps32      = 0x1p-24
	inputBound = 4
	argError   = 88 * eps32 // s-m rounds in float32; terms below e^-88 do not count
	expError   = 2.7e-6     // the worst exp variant, poly4
)

// tolerance is rel = 4·2^-24 and
//
//	abs = inputBound · (2·(σ + argError + expError) + 8·2^-24·(1+√S))
//	σ   = 8·2^-24·D·inputBound² / √D
//
// about 6.1e-4 for S = 1024, D = 64; see the package doc.
func tolerance(shape []int) (rel, abs float64) {
	_, _, s, d := checkShape(shape)
	sigma := 8 * eps32 * float64(d) * inputBound * inputBound / math.Sqrt(float64(d))
	weight := sigma + argError + expError
	return 4 * eps32, inputBound * (2*weight + 8*eps32*(1+math.Sqrt(float64(s))))
}
