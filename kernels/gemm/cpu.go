package gemm

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
const revision = "gemm-9"

// genericRevision is the revision of the shape-generic code of Template
// and of the epilogue templates (emitGeneric), bumped by hand when that
// code changes; it is not part of Version, since the tuner measures
// specialised kernels only.
const genericRevision = "gemm-generic-4"

// plainRevision is the revision of the plain forms of micro=asm configs
// (kernels.AMD64Plain, emitPlain) of Template and the epilogue
// templates, specialised and generic, bumped by hand when their code
// changes; not part of Version either, since the tuner measures the
// archsimd form.
const plainRevision = "gemm-plain-4"

// Template is the CPU template of Op: BLIS-style blocking with archsimd or
// assembly micro-kernels.
var Template = kernels.Template{
	Op:        Op,
	Backend:   kernels.CPU,
	Version:   version(),
	Earlier:   []kernels.Template{revision4(Op, "gemm-4")},
	Space:     space,
	Default:   defaultConfig,
	Dominated: kernels.ScalarDominated,
	Features:  features,
	Estimate:  estimate,
	Go:        newPackedEmitter(Op, noEpilogue),
	Baselines: append(slices.Clip(baselines), onednnBaselines(noEpilogue)...),
}

// vectorConfig reports whether cfg's kernels use vectors, which need AVX2
// at least: their bf16 and f16 copies convert in assembly then.
func vectorConfig(cfg schedule.Config) bool { return cfg.Int("vec") > 1 }

// goEmitter is the emitter of Template and of the epilogue templates:
// specialised (emitEpilogue, emitAsm), shape-generic (emitGeneric,
// emitAsmGeneric) and plain (emitPlain) kernels of a config, with the
// epilogue e.
type goEmitter struct{ e epilogue }

func (g goEmitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if k.Arch.ISA == kernels.ARM64.ISA {
		return g.emitARM64(f, k)
	}
	k.Want(kernels.AMD64.ISA, dtype.F32)
	switch {
	case k.Arch.Plain:
		emitPlain(f, k.Name, k.Shape, k.Config, g.e)
	case k.Shape == nil:
		emitGeneric(f, k.Name, k.Config, g.e)
	default:
		emitEpilogue(f, k.Name, k.Shape, k.Config, g.e)
	}
	if k.Shape == nil {
		return emitAsmGeneric(k.Name, k.Config, g.e)
	}
	return emitAsm(k.Name, k.Shape, k.Config, g.e)
}

// emitARM64 writes the arm64 kernel of k: the plain form around NEON
// tiles (codegen/neon) for micro=asm, whose vec is neon.Lanes; the
// scalar kernel, plain Go on every architecture, for vec=1.
func (g goEmitter) emitARM64(f *jen.File, k kernels.Kernel) []byte {
	k.Want(kernels.ARM64.ISA, dtype.F32)
	switch {
	case g.Asm(k.Config):
		emitPlain(f, k.Name, k.Shape, k.Config, g.e)
	case k.Config.Int("vec") != 1:
		panic(fmt.Sprintf("gemm: no arm64 kernel of %s: vectors there are NEON assembly (micro=asm)", k.Config))
	case k.Shape == nil:
		emitGeneric(f, k.Name, k.Config, g.e)
	default:
		emitEpilogue(f, k.Name, k.Shape, k.Config, g.e)
	}
	var kr kernel
	if k.Shape == nil {
		kr = newGenericKernel(k.Name, k.Config, g.e)
	} else {
		kr = newKernel(k.Name, k.Shape, k.Config, g.e)
	}
	return neon.File(kr.asmTiles()...)
}

// Asm reports whether cfg's full micro-kernel is assembly (micro=asm).
func (goEmitter) Asm(cfg schedule.Config) bool { return cfg.Str("micro") == "asm" }

// Knob values. The order is the order mutation walks. mc values are
// multiples of 24, so that every mr divides them and only the last block of
// rows can end in a partial tile; nc values are powers of two, multiples of
// every nr.
var (
	vecs   = []int{1, 8, 16}
	mrs    = []int{1, 2, 4, 6, 8, 12}
	nrVecs = []int{1, 2}
	// On arm64 vectors are NEON's 4 lanes, in assembly tiles only, and
	// the 32 V registers hold tiles of up to 4 vectors a row (6×4).
	neonVecs   = []int{1, neon.Lanes}
	neonNRVecs = []int{1, 2, 4}
	kcs        = []int{64, 128, 256, 512}
	mcs        = []int{24, 48, 96, 192, 384, 768}
	ncs        = []int{256, 512, 1024, 2048, 4096}
	unrolls    = []int{1, 2, 4}
	micros     = []string{"go", "asm"} // the full micro-kernel in archsimd Go, or in Go assembly
	splits     = []string{"m", "n"}    // what the goroutines split: runs of rows, or of columns
	chunks     = []int{1, 2, 4, 8}     // runs per goroutine: 1 fixed in advance, more dealt from a counter
	// Where bf16 and f16 become float32: whole arguments copied before
	// the float32 kernel (kernels/halfcopy), A and B converted while
	// packing, or (bf16) B and A packed as bf16 pairs for VDPBF16PS; see
	// packhalf.go. float32 kernels are the same for every value.
	converts = []string{"copy", "pack", kernels.ConvertDot}
)

// registerBudget is how many vector registers a micro-kernel may keep live:
// its mr·nr_vecs accumulators, nr_vecs vectors of B and one broadcast of A.
// Go 1.26's register allocator uses X0–X14 (X15 is the fixed zero register
// of its ABI) on AVX2 and AVX-512 alike, and needs one or two for addresses
// of spilled values; an AVX-512 6×32 tile (12 accumulators, 15 live
// vectors) spilled and ran at 26 GFLOP/s where 4×32 (11) ran at 58–74 on
// one core. Scalar tiles use the same X registers.
const registerBudget = 14

// Cache sizes assumed when the target does not report them.
const (
	fallbackL2 = 256 << 10
	fallbackL3 = 0 // no L3: the B panel must fit L2
)

// space returns the knobs for shape on target; see the package doc for what
// each knob and constraint means.
func space(shape []int, target device.Target) *schedule.Space { return spaceOf(shape, target, false) }

// spaceOf is space, or with rev4 set the space of revision 4, before the
// knobs chunks (every goroutine took one run fixed in advance) and pack_a
// (A was read in place).
func spaceOf(shape []int, target device.Target, rev4 bool) *schedule.Space {
	m, n, k := checkShape(shape)
	cpu := target.CPU
	if cpu == nil {
		cpu = &device.CPU{Cores: 1}
	}
	threads := kernels.ThreadCounts(cpu)
	l2, l3 := cpu.L2, cpu.L3
	if l2 <= 0 {
		l2 = fallbackL2
	}
	if l3 <= 0 {
		l3 = fallbackL3
	}
	isa := cpu.ISA
	var constraints []schedule.Constraint
	if target.CPU == nil {
		// The template has only a Go emitter.
		constraints = append(constraints, schedule.Constraint{
			Name: "needs_cpu_target", OK: func(schedule.Config) bool { return false }})
	}
	constraints = append(constraints, kernels.VectorConstraints(isa)...)
	vecValues, nrValues := vecs, nrVecs
	if kernels.ArchOf(target) == kernels.ARM64 {
		// arm64 has no archsimd: its vectors are the assembly tiles'. The
		// amd64 space, which Version hashes, has neither these values nor
		// the constraint.
		vecValues, nrValues = neonVecs, neonNRVecs
		constraints = append(constraints, schedule.Constraint{Name: "neon_needs_asm", OK: func(c schedule.Config) bool {
			return c.Int("vec") != neon.Lanes || c.Str("micro") == "asm"
		}})
	}
	constraints = append(constraints, []schedule.Constraint{
		// The assembly micro-kernel is vector code and does not unroll
		// (its loop costs 4 instructions against mr·nr_vecs FMAs), so it
		// takes unroll = 1 and the space holds no copies of it.
		{Name: "asm_needs_vectors", OK: func(c schedule.Config) bool {
			return c.Str("micro") != "asm" || (c.Int("vec") > 1 && c.Int("unroll") == 1)
		}},
		{Name: "register_budget", OK: func(c schedule.Config) bool {
			if c.Str("micro") == "asm" {
				return goasm.Fits(c.Int("vec"), c.Int("mr"), c.Int("nr_vecs"))
			}
			return registers(c.Int("mr"), c.Int("nr_vecs")) <= registerBudget
		}},
		// The A block is reused by every strip of the B panel.
		{Name: "a_block_fits_l2", OK: func(c schedule.Config) bool {
			return 4*c.Int("mc")*c.Int("kc") <= l2
		}},
		// Every goroutine packs a B panel of its own, and they share L3.
		{Name: "b_panel_fits_cache", OK: func(c schedule.Config) bool {
			panel := 4 * c.Int("kc") * c.Int("nc")
			if l3 > 0 {
				return panel*c.Int("threads") <= l3
			}
			return panel <= l2
		}},
		// A block as large as the matrix is the same kernel as any larger one.
		{Name: "kc_within_k", OK: func(c schedule.Config) bool { return within(c.Int("kc"), k, kcs) }},
		{Name: "mc_within_m", OK: func(c schedule.Config) bool { return within(c.Int("mc"), m, mcs) }},
		{Name: "nc_within_n", OK: func(c schedule.Config) bool { return within(c.Int("nc"), n, ncs) }},
		// Every goroutine gets at least one tile of rows, or one strip of
		// columns.
		{Name: "threads_at_most_tiles", OK: func(c schedule.Config) bool {
			t := c.Int("threads")
			if c.Str("split") == "n" {
				_, ok := colsPerThread(n, c.Int("nr_vecs")*c.Int("vec"), t)
				return ok
			}
			_, ok := rowsPerThread(m, c.Int("mr"), t)
			return ok
		}},
		// One goroutine splits nothing: split takes its first value, so
		// that the space holds no copies.
		{Name: "split_needs_threads", OK: func(c schedule.Config) bool {
			return c.Int("threads") > 1 || c.Str("split") == "m"
		}},
	}...)
	knobs := []schedule.Knob{
		schedule.Choice("vec", vecValues...),
		schedule.Choice("mr", mrs...),
		schedule.Choice("nr_vecs", nrValues...),
		schedule.Choice("kc", kcs...),
		schedule.Choice("mc", mcs...),
		schedule.Choice("nc", ncs...),
		schedule.Bool("pack_b"),
		schedule.Choice("unroll", unrolls...),
		schedule.Choice("threads", threads...),
		schedule.Enum("micro", micros...),
		schedule.Enum("split", splits...),
	}
	if rev4 {
		return schedule.NewSpace(knobs, constraints...)
	}
	constraints = append(constraints, []schedule.Constraint{
		// One goroutine deals nothing, and every run holds at least one
		// tile of rows, or one strip of columns.
		{Name: "chunks_need_threads", OK: func(c schedule.Config) bool {
			return c.Int("threads") > 1 || c.Int("chunks") == 1
		}},
		{Name: "runs_at_most_tiles", OK: func(c schedule.Config) bool {
			unit, extent := c.Int("mr"), m
			if c.Str("split") == "n" {
				unit, extent = c.Int("nr_vecs")*c.Int("vec"), n
			}
			return c.Int("threads")*c.Int("chunks") <= (extent+unit-1)/unit
		}},
		// The archsimd tiles read A in place.
		{Name: "pack_a_needs_asm", OK: func(c schedule.Config) bool {
			return !c.Bool("pack_a") || c.Str("micro") == "asm"
		}},
		// convert=dot is installed only where the CPU has VDPBF16PS.
		{Name: "dot_needs_avx512_bf16", OK: func(c schedule.Config) bool {
			return c.Str(kernels.ConvertKnob) != kernels.ConvertDot || isa.AVX512BF16
		}},
		// The forms that convert while packing are assembly tiles on
		// packed A and B (packhalf.go): a config without micro=asm,
		// pack_a and pack_b would run the copying form under another
		// name. Until gemm-7 the space held such configs, and a bf16
		// tune of 1024³ spent its dot trials on them: none of the nine
		// it timed ran VDPBF16PS (11.4 ms at best, the copying form's
		// time), where the real dot form runs 1024³ in 5.3–5.6 ms.
		{Name: "packed_convert_needs_asm_tiles", OK: func(c schedule.Config) bool {
			return c.Str(kernels.ConvertKnob) == "copy" || (c.Str("micro") == "asm" && c.Bool("pack_a") && c.Bool("pack_b"))
		}},
		// VDPBF16PS multiplies Z registers: a dot config of 8 lanes
		// would be the pack form. (f16 has no dot form: the search of an
		// f16 workload leaves the value out, kernels.SearchSpace.)
		{Name: "dot_needs_16_lanes", OK: func(c schedule.Config) bool {
			return c.Str(kernels.ConvertKnob) != kernels.ConvertDot || c.Int("vec") == 16
		}},
	}...)
	knobs = append(knobs, schedule.Choice("chunks", chunks...), schedule.Bool("pack_a"), schedule.Enum(kernels.ConvertKnob, converts...))
	return schedule.NewSpace(knobs, constraints...)
}

// registers returns the vector registers an mr × nrVecs micro-kernel keeps
// live: the accumulators, one row of B and one broadcast element of A.
func registers(mr, nrVecs int) int { return mr*nrVecs + nrVecs + 1 }

// within reports whether block b is worth offering for an extent: the
// smallest block always is, a larger one only if the next smaller one does
// not already cover the extent.
func within(b, extent int, blocks []int) bool {
	return b == blocks[0] || b/2 < extent
}

// rowsPerThread splits m rows among threads goroutines in contiguous runs
// of whole mr-row tiles, so that only the last goroutine can end in a
// partial tile. ok is false when some goroutine would get no rows.
func rowsPerThread(m, mr, threads int) (per int, ok bool) {
	return perThread(m, mr, threads)
}

// colsPerThread is rowsPerThread for columns in strips of nr.
func colsPerThread(n, nr, threads int) (per int, ok bool) {
	return perThread(n, nr, threads)
}

// perThread returns how many of extent's elements each of threads
// goroutines takes, in whole units of unit, and whether every goroutine
// gets at least one unit.
func perThread(extent, unit, threads int) (per int, ok bool) {
	units := (extent + unit - 1) / unit
	perUnits := (units + threads - 1) / threads
	return perUnits * unit, (threads-1)*perUnits < units
}

// version hashes revision and the space of a fixed workload on a fixed
// target, so that it is the same on every machine and changes whenever a
// knob, a value or a constraint does.
func version() string { return versionOf(revision, space) }

// revision4 is revision rev of a template of the package before the
// knobs chunks and pack_a (gemm-4, and its epilogues' gemm-bias-4 and
// gemm-bias-relu-4), whose space the landscapes in tune/lab/testdata were
// recorded in (kernels.Template.Earlier).
func revision4(op kernels.Op, rev string) kernels.Template {
	sp := func(shape []int, target device.Target) *schedule.Space { return spaceOf(shape, target, true) }
	return kernels.Template{
		Op:       op,
		Backend:  kernels.CPU,
		Version:  versionOf(rev, sp),
		Space:    sp,
		Estimate: estimate,
		Default: func(shape []int, target device.Target) schedule.Config {
			return defaultOf(sp(shape, target), shape, target, "")
		},
	}
}

func versionOf(rev string, space func([]int, device.Target) *schedule.Space) string {
	ref := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20,
		ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}}}
	return kernels.Version(rev, space([]int{1024, 1024, 1024}, ref), fmt.Sprintf("register_budget=%d", registerBudget))
}

// defaultConfig is a 4×2-vector archsimd tile of the widest vectors the
// target has (on arm64 a NEON assembly tile), on one goroutine, with
// blocks that fit the smallest caches templates assume (256 KiB of L2, no
// L3), shrunk to what the shape offers.
func defaultConfig(shape []int, target device.Target) schedule.Config {
	return defaultOf(space(shape, target), shape, target, ",chunks=1,pack_a=false,convert=copy")
}

// defaultOf is defaultConfig in the space sp, with more, the knobs sp has
// beyond revision 4's, appended.
func defaultOf(sp *schedule.Space, shape []int, target device.Target, more string) schedule.Config {
	m, n, k := checkShape(shape)
	largest := func(pref, extent int, values []int) int {
		best := values[0]
		for _, v := range values {
			if v <= pref && within(v, extent, values) {
				best = v
			}
		}
		return best
	}
	vec, micro := kernels.WidestVector(target), "go"
	if kernels.ArchOf(target) == kernels.ARM64 {
		vec, micro = neon.Lanes, "asm" // NEON is assembly only
	}
	c, err := sp.Parse(fmt.Sprintf(
		"vec=%d,mr=4,nr_vecs=2,kc=%d,mc=%d,nc=%d,pack_b=true,unroll=1,threads=1,micro=%s,split=m%s",
		vec, largest(256, k, kcs), largest(96, m, mcs), largest(256, n, ncs), micro, more))
	if err != nil {
		panic(err) // the knobs are ours: a bug
	}
	return c
}
