package softmax

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way the
// knob space does not show (see the package doc); Version hashes it with the
// space's description.
const revision = "softmax-1"

// Template is the fused row-wise softmax: for a shape [rows, cols], dst and
// src are row-major rows×cols matrices and each row of dst is the softmax of
// the same row of src.
var Template = kernels.Template{
	Op:        op(),
	Version:   version(),
	Space:     space,
	Args:      args,
	Reference: reference,
	Tolerance: tolerance,
	FLOPs:     func(shape []int) float64 { return flopsPerElement * elements(shape) },
	Bytes:     func(shape []int) float64 { return 2 * 4 * elements(shape) },
	EmitGo:    emitGo,
	Inputs:    inputs,
	Baselines: baselines,
}

// flopsPerElement counts max, subtract, exp (as one), add to the sum and
// multiply by 1/sum.
const flopsPerElement = 5

func op() kernels.Op {
	op, err := kernels.Lookup("softmax")
	if err != nil {
		panic(err)
	}
	return op
}

// checkShape panics unless shape is [rows, cols] with both positive: the
// tuner parses shapes with kernels.Op.ParseShape, so anything else is a bug.
func checkShape(shape []int) (rows, cols int) {
	if len(shape) != 2 || shape[0] < 1 || shape[1] < 1 {
		panic(fmt.Sprintf("softmax: shape %v, want [rows cols] with both ≥ 1", shape))
	}
	return shape[0], shape[1]
}

func elements(shape []int) float64 {
	rows, cols := checkShape(shape)
	return float64(rows) * float64(cols)
}

func args(shape []int) (ins []int, out int) {
	rows, cols := checkShape(shape)
	return []int{rows * cols}, rows * cols
}

// Knob values. The order is the order mutation walks.
var (
	vecs       = []int{1, 8, 16}
	unrolls    = []int{1, 2, 4, 8}
	algos      = []string{"threepass", "online"}
	exps       = []string{"f64", "poly4", "poly5"}
	chunkSizes = []int{1, 4, 16, 64}
)

// expDegree maps the exp knob to golang.NewExp's degree.
var expDegree = map[string]int{"f64": 0, "poly4": 4, "poly5": 5}

// space returns the knobs for shape on target. threads runs from 1 to the
// target's cores; rows_per_chunk offers only sizes up to rows, and only
// matters with more than one thread.
func space(shape []int, target device.Target) *schedule.Space {
	rows, _ := checkShape(shape)
	cpu := target.CPU
	if cpu == nil {
		cpu = &device.CPU{Cores: 1}
	}
	threads := kernels.ThreadCounts(cpu)
	var chunks []int
	for _, c := range chunkSizes {
		if c == 1 || c <= rows {
			chunks = append(chunks, c)
		}
	}
	isa := cpu.ISA
	constraints := append(kernels.VectorConstraints(isa), []schedule.Constraint{
		// One thread walks the rows in order; chunk sizes would all be the
		// same kernel.
		{Name: "rows_per_chunk_needs_threads", OK: func(c schedule.Config) bool {
			return c.Int("threads") > 1 || c.Int("rows_per_chunk") == 1
		}},
		{Name: "threads_at_most_chunks", OK: func(c schedule.Config) bool {
			chunk := c.Int("rows_per_chunk")
			return c.Int("threads") <= (rows+chunk-1)/chunk
		}},
	}...)
	if target.CPU == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("vec", vecs...),
		schedule.Choice("unroll", unrolls...),
		schedule.Enum("algo", algos...),
		schedule.Enum("exp", exps...),
		schedule.Choice("threads", threads...),
		schedule.Choice("rows_per_chunk", chunks...),
	}, constraints...)
}

// version hashes revision and the space of a fixed workload on a fixed
// target, so that it is the same on every machine and changes whenever a
// knob, a value or a constraint does.
func version() string { return versionOf(revision, space) }

// versionOf is the version of revision rev of a space function: its space
// for 4096x1024 on a fixed reference CPU with AVX-512 and 4 cores.
func versionOf(rev string, space func([]int, device.Target) *schedule.Space) string {
	ref := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}}
	return kernels.Version(rev, space([]int{4096, 1024}, ref))
}

// reference computes softmax in float64, subtracting the row maximum first.
// A row that is all -Inf has maximum -Inf, -Inf-(-Inf) is NaN, and so every
// output of that row is NaN; the generated kernels give NaN there too.
func reference(shape []int, ins [][]float32, out []float64) {
	rows, cols := checkShape(shape)
	src := ins[0][:rows*cols]
	out = out[:rows*cols]
	for r := range rows {
		s, d := src[r*cols:(r+1)*cols], out[r*cols:(r+1)*cols]
		m := math.Inf(-1)
		for _, x := range s {
			m = max(m, float64(x))
		}
		sum := 0.0
		for i, x := range s {
			d[i] = math.Exp(float64(x) - m)
			sum += d[i]
		}
		for i := range d {
			d[i] /= sum
		}
	}
}

// Error budget of the tolerance, relative to each output (see the package
// doc): the subtraction x-max rounds in float32 with an error of up to
// 2^-24·|x-max|, and exp turns that into a relative error; above 88 the
// output is below abs anyway. The worst exp variant (poly4) is off by 2.7e-6
// in each term and in the sum. The float32 sum of cols terms adds an error
// that grows like √cols for terms of one sign.
const (
	eps32       = 0x1p-24
	argError    = 88 * eps32 // 5.2e-6
	expError    = 2 * 2.7e-6 // each term and the sum
	roundingErr = 4 * eps32  // the reciprocal, the product, slack
	absTol      = 1e-37      // outputs of e^-88 and below are flushed to 0
)

// tolerance is rel = argError + expError + roundingErr + 2^-24·√cols·4 and abs
// = 1e-37, about 1.5e-5 for 1023 columns and 4e-5 for 100000.
func tolerance(shape []int) (rel, abs float64) {
	_, cols := checkShape(shape)
	return argError + expError + roundingErr + 4*eps32*math.Sqrt(float64(cols)), absTol
}
