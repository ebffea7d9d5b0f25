package softmax

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way the
// knob space does not show (see the package doc); Version hashes it with the
// space's description.
const revision = "softmax-7"

// genericRevision is the revision of the shape-generic code
// (emitGoGeneric), bumped by hand when that code changes; it is not part
// of Version, since the tuner measures specialised kernels only.
const genericRevision = "softmax-generic-7"

// Template is the CPU template of Op: fused softmax in generated Go with
// archsimd vectors, or with the rows in Go assembly on AVX-512 or AVX2.
var Template = kernels.Template{
	Op:        Op,
	Backend:   kernels.CPU,
	Version:   version(),
	Earlier:   []kernels.Template{rev2},
	Space:     space,
	Default:   defaultConfig,
	Dominated: kernels.ScalarExpDominated,
	Estimate:  estimate,
	Go:        goEmitter{},
	Baselines: baselines,

	SearchConstraints: searchConstraints,
}

// searchConstraints leaves the degree-3 exp out of a float32 search: its
// error is below the rounding of a 16-bit result only.
func searchConstraints(_ []int, dt dtype.DType, _ device.Target) []schedule.Constraint {
	if dt.Size() == 2 {
		return nil
	}
	return []schedule.Constraint{{Name: "poly3_needs_16bit", OK: func(c schedule.Config) bool { return c.Str("exp") != poly3 }}}
}

// goEmitter is Template's emitter: specialised (emitGo, emitAsm),
// shape-generic (emitGoGeneric, emitAsmGeneric) and plain (emitPlain)
// kernels of the same config.
type goEmitter struct{}

func (g goEmitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if k.Arch.ISA == kernels.ARM64.ISA && g.Asm(k.Config) {
		// The plain form around the NEON rows (neon.go).
		k.Want(kernels.ARM64.ISA, dtype.F32, dtype.BF16, dtype.F16)
		emitPlain(f, k.Name, k.Shape, k.DType, k.Config)
		return emitNEON(k.Name, k.Shape, k.Config)
	}
	k = kernels.PortableScalar(k) // scalar Go, the same on arm64
	k.Want(kernels.AMD64.ISA, dtype.F32, dtype.BF16, dtype.F16)
	switch {
	case k.Arch.Plain:
		emitPlain(f, k.Name, k.Shape, k.DType, k.Config)
	case k.Shape == nil:
		emitGoGeneric(f, k.Name, k.DType, k.Config)
	default:
		emitGo(f, k.Name, k.Shape, k.DType, k.Config)
	}
	half := newKernel(k.Name, k.DType, k.Config).half
	if k.Shape == nil {
		return goasm.WithHalf(emitAsmGeneric(k.Name, k.DType, k.Config), half)
	}
	return goasm.WithHalf(emitAsm(k.Name, k.Shape, k.DType, k.Config), half)
}

// Asm reports whether cfg's rows are assembly (code=asm).
func (goEmitter) Asm(cfg schedule.Config) bool { return cfg.Str("code") == "asm" }

// Knob values. The order is the order mutation walks.
var (
	vecs       = []int{1, 8, 16}
	neonVecs   = []int{1, neon.Lanes} // on arm64, NEON in assembly only
	unrolls    = []int{1, 2, 4, 8}
	algos      = []string{"threepass", "online"}
	exps       = []string{"f64", "poly4", "poly5"}
	chunkSizes = []int{1, 4, 16, 64}
	codes      = []string{"go", "asm"}
	converts   = []string{"block", "reg", cvtne}
	stores     = []string{"cached", "stream"}
)

// poly3 is the exp of 16-bit results: the assembly's degree-3 exp in base
// 2 (codegen/goasm.Exp), off by 7.6e-5, under bf16's and f16's rounding
// but not float32's, so a float32 search leaves it out (searchConstraints).
const poly3 = "poly3"

// expDegree maps the exp knob to golang.NewExp's degree, and poly3 to
// goasm.Exp's.
var expDegree = map[string]int{"f64": 0, "poly4": 4, "poly5": 5, poly3: 3}

// space returns the knobs for shape on target. threads runs from 1 to the
// target's cores; rows_per_chunk offers only sizes up to rows, and only
// matters with more than one thread.
func space(shape []int, target device.Target) *schedule.Space { return spaceOf(shape, target, true) }

// spaceOf returns the space of archsimd Go's knobs, and with asm those of
// the assembly form (code, prefetch) and their constraints.
func spaceOf(shape []int, target device.Target, asm bool) *schedule.Space {
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
	constraints := append(kernels.VectorConstraints(isa), kernels.RowChunkConstraints(rows)...)
	if target.CPU == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	vecValues := vecs
	arm64 := kernels.ArchOf(target) == kernels.ARM64
	if arm64 {
		// arm64 has no archsimd: its vectors are the assembly's
		// (neon_needs_asm). The amd64 space, which Version hashes, has
		// neither the value nor the constraint.
		vecValues = []int{1}
		if asm {
			vecValues = neonVecs
		}
	}
	expValues := exps
	if asm {
		expValues = append(slices.Clip(exps), poly3)
	}
	knobs := []schedule.Knob{
		schedule.Choice("vec", vecValues...),
		schedule.Choice("unroll", unrolls...),
		schedule.Enum("algo", algos...),
		schedule.Enum("exp", expValues...),
		schedule.Choice("threads", threads...),
		schedule.Choice("rows_per_chunk", chunks...),
	}
	if !asm {
		return schedule.NewSpace(knobs, constraints...)
	}
	knobs = append(knobs,
		schedule.Enum("code", codes...),
		schedule.Bool("prefetch"),
		schedule.Enum(kernels.ConvertKnob, converts...),
		schedule.Enum("store", stores...),
	)
	goCode := func(c schedule.Config) bool { return c.Str("code") == "go" }
	constraints = append(constraints, []schedule.Constraint{
		// The assembly (asm.go) is one form: three passes, a polynomial
		// exp, on AVX-512 vectors with at most four in flight or on AVX2
		// vectors with at most two (it inherits vec16_needs_avx512 and
		// vec8_needs_avx2_fma).
		{Name: "asm_needs_vectors", OK: func(c schedule.Config) bool { return goCode(c) || c.Int("vec") > 1 }},
		{Name: "asm_needs_threepass", OK: func(c schedule.Config) bool { return goCode(c) || c.Str("algo") == "threepass" }},
		{Name: "asm_needs_poly_exp", OK: func(c schedule.Config) bool { return goCode(c) || c.Str("exp") != "f64" }},
		{Name: "asm_unroll_at_most_4", OK: func(c schedule.Config) bool { return goCode(c) || c.Int("unroll") <= asmMaxUnroll }},
		{Name: "asm_vec8_unroll_at_most_2", OK: func(c schedule.Config) bool {
			return goCode(c) || c.Int("vec") != asmLanesAVX2 || c.Int("unroll") <= asmMaxUnrollAVX2
		}},
		// archsimd has no prefetch.
		{Name: "prefetch_needs_asm", OK: func(c schedule.Config) bool { return !c.Bool("prefetch") || !goCode(c) }},
		// Conversions in registers are the assembly's (asmhalf.go).
		{Name: "convert_reg_needs_asm", OK: func(c schedule.Config) bool { return c.Str("convert") == "block" || !goCode(c) }},
		{Name: "cvtne_needs_avx512_bf16", OK: func(c schedule.Config) bool {
			return c.Str("convert") != cvtne || isa.AVX512BF16 && c.Int("vec") == asmLanes
		}},
		// The degree-3 exp is amd64's assembly's (codegen/goasm.Exp).
		{Name: "poly3_needs_amd64_asm", OK: func(c schedule.Config) bool {
			return c.Str("exp") != poly3 || !goCode(c) && c.Int("vec") != neon.Lanes
		}},
		// Streamed stores are the 16-bit scaling's (asmhalf.go): a
		// float32 kernel's dst is its scratch between the passes.
		{Name: "stream_needs_convert_reg", OK: func(c schedule.Config) bool {
			return c.Str("store") == "cached" || c.Str("convert") != "block"
		}},
	}...)
	if arm64 {
		constraints = append(constraints, schedule.Constraint{Name: "neon_needs_asm", OK: func(c schedule.Config) bool {
			return c.Int("vec") != neon.Lanes || !goCode(c)
		}}, schedule.Constraint{Name: "convert_reg_needs_amd64", OK: func(c schedule.Config) bool {
			return c.Str("convert") == "block" || c.Int("vec") != neon.Lanes
		}})
	}
	return schedule.NewSpace(knobs, constraints...)
}

// rev2 is revision softmax-2, before the assembly form: the space of the
// archsimd Go knobs alone. The landscapes in tune/lab/testdata were recorded
// with it (kernels.Template.Earlier).
var rev2 = kernels.Template{
	Op:      Op,
	Backend: kernels.CPU,
	Version: versionOf("softmax-2", func(shape []int, target device.Target) *schedule.Space {
		return spaceOf(shape, target, false)
	}),
	Space:     func(shape []int, target device.Target) *schedule.Space { return spaceOf(shape, target, false) },
	Dominated: kernels.ScalarExpDominated,
	Estimate:  estimate,
	Default: func(shape []int, target device.Target) schedule.Config {
		return parseDefault(spaceOf(shape, target, false),
			fmt.Sprintf("vec=%d,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1", kernels.WidestVector(target)))
	},
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

// defaultConfig is, with vectors, the assembly's three passes on the
// widest the target has with the degree-5 exp, unrolled by 4 on AVX-512
// and by 2 on AVX2 (the most each takes), and by 4 on NEON (arm64);
// without, scalar Go, the online
// algorithm with the degree-5 exp, unrolled by 4; on one goroutine: fast
// on every shape, and valid on every one.
func defaultConfig(shape []int, target device.Target) schedule.Config {
	cfg := "vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"
	if kernels.ArchOf(target) == kernels.ARM64 {
		cfg = fmt.Sprintf("vec=%d,unroll=%d,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", neon.Lanes, neonMaxUnroll)
	}
	switch kernels.WidestVector(target) {
	case asmLanes:
		cfg = fmt.Sprintf("vec=%d,unroll=%d,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=reg,store=cached", asmLanes, asmMaxUnroll)
	case asmLanesAVX2:
		cfg = fmt.Sprintf("vec=%d,unroll=%d,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=reg,store=cached", asmLanesAVX2, asmMaxUnrollAVX2)
	}
	return parseDefault(space(shape, target), cfg)
}

// parseDefault parses a default config, which is valid in sp by design.
func parseDefault(sp *schedule.Space, cfg string) schedule.Config {
	c, err := sp.Parse(cfg)
	if err != nil {
		panic(err) // the knobs are ours: a bug
	}
	return c
}
