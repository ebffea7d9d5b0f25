package norm

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// revision is bumped by hand whenever the emitted code changes in a way
// the knob space does not show; Version hashes it with the space. Each op
// has its own, so that a change to one leaves the other's tuning records
// valid: LayerNorm's is revision, RMSNorm's rmsRevision (norm-2 added the
// assembly rows, code and store; norm-3 prefetch; norm-4 the assembly on
// AVX2; norm-5 convert; norm-6 convert=cvtne; norm-7 gamma widened once
// a call for convert=reg and cvtne; norm-8 cvtne's subnormal check once
// a group of vectors, after their stores; norm-9 store=stream for
// convert=reg and cvtne on Z registers; LayerNorm's norm-2 its assembly
// rows and the knobs code, store, prefetch and convert, norm-3
// convert=cvtne, norm-4 gamma and beta widened once a chunk of rows,
// norm-5 as RMSNorm's norm-8, norm-6 as its norm-9).
const (
	revision    = "norm-6"
	rmsRevision = "norm-9"
)

// genericRevision is the revision of the shape-generic code, bumped by
// hand when that code changes (rmsGenericRevision for RMSNorm); it is not
// part of Version, since the tuner measures specialised kernels only.
const (
	genericRevision    = "norm-generic-5"
	rmsGenericRevision = "norm-generic-8"
)

// rev is k's revision.
func (k kind) rev() string {
	if k.layer {
		return revision
	}
	return rmsRevision
}

// RMSTemplate and LayerTemplate are the CPU templates of the two ops: the
// rows in generated Go with archsimd vectors, or RMSNorm's in Go assembly
// (code=asm). They differ only in the op, in LayerNorm's algo knob and in
// RMSNorm's code, store and prefetch knobs; this file is the one place
// that binds the emitters (emit.go, asm.go) to the fields of
// kernels.Template.
var (
	RMSTemplate   = rms.cpuTemplate()
	LayerTemplate = layer.cpuTemplate()
)

func (k kind) cpuTemplate() kernels.Template {
	return kernels.Template{
		Op:        k.op(),
		Backend:   kernels.CPU,
		Version:   k.version(),
		Space:     k.space,
		Default:   k.defaultConfig,
		Dominated: kernels.ScalarDominated,
		Go:        goEmitter{k},
		Baselines: k.baselines(),
	}
}

// goEmitter is the emitter of both CPU templates: specialised when
// kn.Shape is set, shape-generic when it is nil, and for RMSNorm's
// code=asm configs the plain form (kn.Arch.Plain) and the assembly
// (asm.go).
type goEmitter struct{ kind }

func (e goEmitter) EmitGo(f *jen.File, kn kernels.Kernel) []byte {
	if kn.Arch.ISA == kernels.ARM64.ISA && e.Asm(kn.Config) {
		// The plain form around RMSNorm's NEON rows (neon.go).
		kn.Want(kernels.ARM64.ISA, dtypes...)
		emitGo(e.kind, f, kn.Name, kn.Shape, kn.DType, kn.Config, true)
		return emitNEON(e.kind, kn.Name, kn.Shape, kn.Config)
	}
	kn = kernels.PortableScalar(kn) // scalar Go, the same on arm64
	kn.Want(kernels.AMD64.ISA, dtypes...)
	if kn.Arch.Plain && !e.Asm(kn.Config) {
		panic(fmt.Sprintf("norm: no plain form of %s %s: its rows are not assembly", e.name, kn.Config))
	}
	emitGo(e.kind, f, kn.Name, kn.Shape, kn.DType, kn.Config, kn.Arch.Plain)
	return emitAsm(e.kind, kn.Name, kn.Shape, kn.DType, kn.Config)
}

// Asm reports whether cfg's rows are assembly (asmRows).
func (e goEmitter) Asm(cfg schedule.Config) bool { return asmRows(cfg) }

// asmRows reports whether cfg's rows are assembly: code=asm, and
// LayerNorm's NEON vectors (vec=4, which only its arm64 space offers: it
// has no code knob there, and NEON is assembly only).
func asmRows(cfg schedule.Config) bool {
	if code, ok := cfg.Lookup("code"); ok {
		return code.Str() == "asm"
	}
	return cfg.Int("vec") == neon.Lanes // LayerNorm on arm64
}

// Knob values, in the order mutation walks.
var (
	vecs       = []int{1, 8, 16}
	unrolls    = []int{1, 2, 4, 8}
	algos      = []string{"twopass", "onepass"}
	chunkSizes = []int{1, 4, 16, 64}
	codes      = []string{"go", "asm"}
	neonVecs   = []int{1, neon.Lanes} // on arm64, NEON in assembly only
	stores     = []string{"cached", "stream"}
	converts   = []string{"block", "reg", cvtne}
)

// space returns the knobs for shape on target: see the package doc.
func (k kind) space(shape []int, target device.Target) *schedule.Space {
	rows, _ := checkShape(shape)
	cpu := target.CPU
	if cpu == nil {
		cpu = &device.CPU{Cores: 1}
	}
	var chunks []int
	for _, c := range chunkSizes {
		if c == 1 || c <= rows {
			chunks = append(chunks, c)
		}
	}
	constraints := append(kernels.VectorConstraints(cpu.ISA), kernels.RowChunkConstraints(rows)...)
	if target.CPU == nil {
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	vecValues := vecs
	arm64 := kernels.ArchOf(target) == kernels.ARM64
	if arm64 {
		// arm64 has no archsimd: its vectors are RMSNorm's assembly
		// (RMSNorm's neon_needs_asm; LayerNorm's vec=4 is assembly). The
		// amd64 space, which Version hashes, has neither the value nor
		// the constraints.
		vecValues = neonVecs
	}
	knobs := []schedule.Knob{
		schedule.Choice("vec", vecValues...),
		schedule.Choice("unroll", unrolls...),
	}
	if k.layer {
		knobs = append(knobs, schedule.Enum("algo", algos...))
	}
	knobs = append(knobs,
		schedule.Choice("threads", kernels.ThreadCounts(cpu)...),
		schedule.Choice("rows_per_chunk", chunks...),
	)
	if k.layer && arm64 {
		// LayerNorm's vectors on arm64 are NEON assembly, without the
		// knobs of the amd64 assembly (asmRows).
		return schedule.NewSpace(knobs, constraints...)
	}
	knobs = append(knobs, schedule.Enum("code", codes...), schedule.Enum("store", stores...), schedule.Bool("prefetch"),
		schedule.Enum(kernels.ConvertKnob, converts...))
	block := func(c schedule.Config) bool { return c.Str("convert") == "block" }
	goCode := func(c schedule.Config) bool { return c.Str("code") == "go" }
	maxAVX2 := k.asmMaxUnrollAVX2()
	constraints = append(constraints,
		// The assembly (asm.go) is AVX-512's, 16 lanes, or AVX2's, 8
		// lanes with at most 4 vectors in flight (LayerNorm's 2); it
		// inherits their constraints (vec16_needs_avx512,
		// vec8_needs_avx2_fma).
		schedule.Constraint{Name: "asm_needs_vectors", OK: func(c schedule.Config) bool { return goCode(c) || c.Int("vec") > 1 }},
		schedule.Constraint{Name: fmt.Sprintf("asm_vec8_unroll_at_most_%d", maxAVX2), OK: func(c schedule.Config) bool {
			return goCode(c) || c.Int("vec") != asmLanesAVX2 || c.Int("unroll") <= maxAVX2
		}},
		// archsimd has neither non-temporal stores nor prefetches.
		schedule.Constraint{Name: "stream_needs_asm", OK: func(c schedule.Config) bool { return !goCode(c) || c.Str("store") == "cached" }},
		schedule.Constraint{Name: "prefetch_needs_asm", OK: func(c schedule.Config) bool { return !goCode(c) || !c.Bool("prefetch") }},
		// Conversions in registers are the assembly's (asm.go), and
		// stream only on Z registers, whose masks store the 16-bit head
		// and tail of a streamed row (Y registers move a partial
		// vector's words one at a time).
		schedule.Constraint{Name: "convert_reg_needs_asm", OK: func(c schedule.Config) bool { return block(c) || !goCode(c) }},
		schedule.Constraint{Name: "convert_reg_streams_on_z", OK: func(c schedule.Config) bool {
			return block(c) || c.Str("store") == "cached" || c.Int("vec") == asmLanes
		}},
		schedule.Constraint{Name: "convert_reg_unroll_at_most_4_or_2", OK: func(c schedule.Config) bool {
			return block(c) || c.Int("unroll") <= regMaxUnroll[c.Int("vec")]
		}},
		// VCVTNEPS2BF16 is AVX512-BF16's, on Z registers here.
		schedule.Constraint{Name: "cvtne_needs_avx512_bf16", OK: func(c schedule.Config) bool {
			return c.Str("convert") != cvtne || cpu.ISA.AVX512BF16 && c.Int("vec") == asmLanes
		}},
	)
	if arm64 {
		constraints = append(constraints,
			schedule.Constraint{Name: "neon_needs_asm", OK: func(c schedule.Config) bool { return c.Int("vec") != neon.Lanes || !goCode(c) }},
			// NEON has no non-temporal vector store.
			schedule.Constraint{Name: "neon_stores_cached", OK: func(c schedule.Config) bool { return c.Str("store") == "cached" }},
			// NEON kernels convert in Go.
			schedule.Constraint{Name: "convert_reg_needs_amd64", OK: func(c schedule.Config) bool { return block(c) || c.Int("vec") != neon.Lanes }},
		)
	}
	return schedule.NewSpace(knobs, constraints...)
}

// version hashes revision with the space of 4096x4096 on a fixed reference
// CPU with AVX-512 and 4 cores, so that it is the same on every machine.
func (k kind) version() string {
	ref := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}}
	return kernels.Version(k.name+"-"+k.rev(), k.space([]int{4096, 4096}, ref))
}

// defaultConfig is the widest vectors the target has, unrolled by 4, the
// two-pass variance, on one goroutine, in archsimd Go, or for RMSNorm on
// arm64 NEON assembly: valid on every shape.
func (k kind) defaultConfig(shape []int, target device.Target) schedule.Config {
	vec, code := kernels.WidestVector(target), "go"
	if kernels.ArchOf(target) == kernels.ARM64 {
		vec, code = neon.Lanes, "asm"
	}
	text := fmt.Sprintf("vec=%d,unroll=4,threads=1,rows_per_chunk=1", vec)
	if k.layer {
		text += ",algo=twopass"
	}
	if !k.layer || kernels.ArchOf(target) != kernels.ARM64 {
		text += ",code=" + code + ",store=cached,prefetch=false,convert=block"
	}
	c, err := k.space(shape, target).Parse(text)
	if err != nil {
		panic(err) // the knobs are ours: a bug
	}
	return c
}
