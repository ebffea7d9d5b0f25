package attention

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/halfcopy"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way the
// knob space does not show (see the package doc); Version hashes it with the
// space's description. causalRevision is TemplateCausal's: bump it when the
// causal kernels' code changes (a change to the shared emitter usually
// changes both).
const (
	revision       = "attention-7"
	causalRevision = "attention-causal-7"
)

// genericRevision and causalGenericRevision are the revisions of the
// shape-generic code of Template and TemplateCausal (emitGeneric), bumped
// by hand when that code changes; they are not part of Version, since the
// tuner measures specialised kernels only.
const (
	genericRevision       = "attention-generic-4"
	causalGenericRevision = "attention-causal-generic-4"
)

// plainRevision is the revision of the plain forms of micro=asm configs
// (kernels.AMD64Plain, emitPlain) of both templates, specialised and
// generic, bumped by hand when their code changes; not part of Version
// either, since the tuner measures the archsimd form.
const plainRevision = "attention-plain-4"

// Template is the CPU template of Op: fused flash-style tiles with an
// online softmax, in archsimd Go or assembly register tiles.
var Template = newTemplate(false)

// TemplateCausal is the CPU template of CausalOp. It shares Template's knob
// space and emitter; the kernels skip the key blocks above the diagonal, so
// its FLOPs are about half.
var TemplateCausal = newTemplate(true)

// newTemplate returns Template, or TemplateCausal when causal is set.
func newTemplate(causal bool) kernels.Template {
	t := kernels.Template{
		Op:        Op,
		Backend:   kernels.CPU,
		Version:   version(),
		Space:     space,
		Default:   defaultConfig,
		Dominated: kernels.ScalarExpDominated,
		Baselines: baselines,
	}
	if causal {
		t.Op = CausalOp
		t.Version = causalVersion()
		t.Baselines = causalBaselines
	}
	// bf16 and f16: the float32 kernels on float32 copies of q, k, v and
	// o, or (convert=dot) the scores on bf16 pairs (dot.go).
	t.Go = dotEmitter{copying: halfcopy.Emitter{Op: t.Op, F32: goEmitter{causal: causal}, Vector: vectorConfig}, causal: causal}
	return t
}

// vectorConfig reports whether cfg's kernels use amd64's vectors (AVX2
// at least), so that their bf16 and f16 copies convert in amd64
// assembly; NEON's (vec=4) convert in Go.
func vectorConfig(cfg schedule.Config) bool { return cfg.Int("vec") > neon.Lanes }

// goEmitter is the emitter of both templates: specialised (emit),
// shape-generic (emitGeneric) and plain (emitPlain) kernels of a config,
// and the assembly of their tiles (asmFile); causal kernels differ only
// in the loop over key blocks and the masked keys (see emit). dot makes
// the kernels of a bf16 convert=dot config's float32 part (dot.go).
type goEmitter struct{ causal, dot bool }

func (g goEmitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if k.Arch.ISA == kernels.ARM64.ISA && g.Asm(k.Config) {
		// The plain form around the NEON tiles and softmax (neon.go).
		k.Want(kernels.ARM64.ISA, dtype.F32)
		emitPlain(f, k.Name, k.Shape, k.Config, g.causal, false)
		return g.asmFile(k)
	}
	k = kernels.PortableScalar(k) // scalar Go, the same on arm64
	k.Want(kernels.AMD64.ISA, dtype.F32)
	switch {
	case k.Arch.Plain:
		emitPlain(f, k.Name, k.Shape, k.Config, g.causal, g.dot)
	case k.Shape == nil:
		emitGeneric(f, k.Name, k.Config, g.causal)
	default:
		emit(f, k.Name, k.Shape, k.Config, g.causal, g.dot)
	}
	return g.asmFile(k)
}

// asmFile returns the assembly of k's tiles and softmax, specialised or
// shape-generic; nil when they are Go.
func (g goEmitter) asmFile(k kernels.Kernel) []byte {
	if k.Shape == nil {
		return newGenericKernel(k.Name, k.Config, g.causal).asmFile()
	}
	return newKernel(k.Name, k.Shape, k.Config, g.causal, g.dot).asmFile()
}

// Asm reports whether cfg's register tiles are assembly (micro=asm, which
// the space allows with the lanes layout only).
func (goEmitter) Asm(cfg schedule.Config) bool { return cfg.Str("micro") == "asm" }

// Knob values. The order is the order mutation walks.
var (
	vecs       = []int{1, 8, 16}
	neonVecs   = []int{1, neon.Lanes} // on arm64, NEON in assembly tiles only
	blockSizes = []int{1, 4, 8, 16, 32, 64}
	exps       = []string{"f64", "poly4", "poly5"}
	layouts    = []string{"rows", "lanes"}
	tileKeys   = []int{1, 2, 4, 6, 8, 12} // mr: keys (scores) and D rows (output) per register tile of the lanes layout
	tileVecs   = []int{1, 2, 4}           // nv: vectors of query rows per register tile of the lanes layout
	micros     = []string{"go", "asm"}    // how the lanes layout's register tiles are written
	// Where bf16 and f16 become float32: whole arguments copied before
	// the float32 kernel (kernels/halfcopy), or (bf16) both products'
	// register tiles on bf16 pairs for VDPBF16PS (dot.go). float32
	// kernels are the same for every value.
	converts = []string{"copy", "dot"}
)

// registerBudget returns the most vector registers a Go register tile of
// the lanes layout may hold live, mr·nv accumulators, nv loaded vectors and
// one broadcast, on vectors of lanes float32s. Go's register allocator uses
// about 15 of the 32 AVX-512 registers (gemm's package doc has the
// measurement); one is left for the loop. Of AVX2's 16 Y registers it
// leaves a tile fewer: compiled, the 8-lane tiles of 6×1 (8 registers)
// keep their loops in registers, and those of 8×1 (10) and 4×2 (11) spill
// in the loop.
func registerBudget(lanes int) int {
	if lanes == 8 {
		return 8
	}
	return 14
}

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
			return mr*nv+nv+1 <= registerBudget(c.Int("vec"))
		}},
		// convert=dot is installed only where the CPU has VDPBF16PS, and
		// only the lanes layout's 16-lane assembly tiles have a dot form
		// (dot.go): any other config of the value would be the copying
		// form under a second name, timed twice by a search. (f16 has no
		// dot form: the search of an f16 workload leaves the value out,
		// kernels.SearchSpace.)
		{Name: "dot_needs_avx512_bf16", OK: func(c schedule.Config) bool {
			return c.Str(kernels.ConvertKnob) != kernels.ConvertDot || isa.AVX512BF16
		}},
		{Name: "dot_needs_asm_lanes_16", OK: func(c schedule.Config) bool {
			return c.Str(kernels.ConvertKnob) != kernels.ConvertDot ||
				(c.Str("layout") == "lanes" && c.Str("micro") == "asm" && c.Int("vec") == 16)
		}},
	}...)
	if target.CPU == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	vecValues := vecs
	if kernels.ArchOf(target) == kernels.ARM64 {
		// arm64 has no archsimd: its vectors are the assembly tiles'. The
		// amd64 space, which Version hashes, has neither the value nor
		// the constraint.
		vecValues = neonVecs
		constraints = append(constraints, schedule.Constraint{Name: "neon_needs_asm", OK: func(c schedule.Config) bool {
			return c.Int("vec") != neon.Lanes || c.Str("micro") == "asm"
		}})
	}
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("vec", vecValues...),
		schedule.Choice("br", blocks...),
		schedule.Choice("bc", blocks...),
		schedule.Enum("exp", exps...),
		schedule.Choice("threads", threads...),
		schedule.Enum("layout", layouts...),
		schedule.Choice("mr", tileKeys...),
		schedule.Choice("nv", tileVecs...),
		schedule.Enum("micro", micros...),
		schedule.Enum(kernels.ConvertKnob, converts...),
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
	ref := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}}}
	return kernels.Version(rev, space([]int{1, 8, 1024, 64}, ref))
}

// defaultConfig is the rows layout with blocks of up to 64 query rows and
// keys (as many as the sequence has), the widest vectors the target has and
// the degree-5 exp, on one goroutine; on arm64, where S ≥ 4, the lanes
// layout's NEON tiles with the same blocks.
func defaultConfig(shape []int, target device.Target) schedule.Config {
	_, _, s, _ := checkShape(shape)
	block := blockSizes[0]
	for _, n := range blockSizes {
		if n <= s {
			block = n
		}
	}
	text := fmt.Sprintf("vec=%d,br=%d,bc=%d,exp=poly5,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		kernels.WidestVector(target), block, block)
	if kernels.ArchOf(target) == kernels.ARM64 && block >= neon.Lanes {
		// NEON is the lanes layout's assembly tiles: 6×2 vectors of
		// accumulators (16 of the 32 V registers with the step's vectors
		// and broadcasts, an untuned guess) where the block holds two
		// vectors of query rows, else 6×1.
		nv := min(2, block/neon.Lanes)
		text = fmt.Sprintf("vec=%d,br=%d,bc=%d,exp=poly5,threads=1,layout=lanes,mr=6,nv=%d,micro=asm,convert=copy", neon.Lanes, block, block, nv)
	}
	c, err := space(shape, target).Parse(text)
	if err != nil {
		panic(err) // the knobs are ours: a bug
	}
	return c
}
