package softmax

import (
	"fmt"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way the
// knob space does not show (see the package doc); Version hashes it with the
// space's description.
const revision = "softmax-2"

// genericRevision is the revision of the shape-generic code
// (emitGoGeneric), bumped by hand when that code changes; it is not part
// of Version, since the tuner measures specialised kernels only.
const genericRevision = "softmax-generic-2"

// Template is the CPU template of Op: fused softmax in generated Go with
// archsimd vectors.
var Template = kernels.Template{
	Op:            Op,
	Backend:       kernels.CPU,
	Version:       version(),
	Space:         space,
	Default:       defaultConfig,
	EmitGo:        emitGo,
	EmitGoGeneric: emitGoGeneric,
	Baselines:     baselines,
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

// defaultConfig is the widest vectors the target has, the online algorithm
// with the degree-5 exp, unrolled by 4, on one goroutine: fast on every
// shape, and valid on every one.
func defaultConfig(shape []int, target device.Target) schedule.Config {
	c, err := space(shape, target).Parse(fmt.Sprintf("vec=%d,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1",
		kernels.WidestVector(target)))
	if err != nil {
		panic(err) // the knobs are ours: a bug
	}
	return c
}
