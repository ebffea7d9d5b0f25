package amd64

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// A Level is what a kernel needs of the CPU beyond scalar Go.
type Level int

const (
	Scalar     Level = iota
	AVX2FMA          // AVX2 and FMA: Float32x8
	AVX512           // AVX-512: Float32x16
	AVX512BF16       // AVX-512 and its bf16 dot product, VDPBF16PS (gemm's convert=dot)
)

// ISA returns the instruction sets of l, for the templates' vector
// constraints.
func (l Level) ISA() device.ISA {
	switch l {
	case Scalar:
		return device.ISA{SSE42: true}
	case AVX2FMA:
		return device.ISA{SSE42: true, AVX2: true, FMA: true}
	case AVX512:
		return device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}
	}
	return device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}
}

// SIMDCond is the condition, in code under SIMDTag, that the CPU has l.
// archsimd does not report AVX512-BF16, which CPUFiles' reading does
// (every kernel that needs it calls assembly, so its package has them).
func (l Level) SIMDCond() jen.Code {
	switch l {
	case AVX2FMA:
		return jen.Qual(golang.ArchSIMD, "X86").Dot("AVX2").Call().Op("&&").Qual(golang.ArchSIMD, "X86").Dot("FMA").Call()
	case AVX512BF16:
		return jen.Qual(golang.ArchSIMD, "X86").Dot("AVX512").Call().Op("&&").Id(CPUVar).Dot("avx512BF16")
	}
	return jen.Qual(golang.ArchSIMD, "X86").Dot("AVX512").Call()
}

// PlainCond is the condition, in code under PlainTag, that the CPU has l,
// as CPUFiles read it (CPUVar).
func (l Level) PlainCond() jen.Code {
	switch l {
	case AVX2FMA:
		return jen.Id(CPUVar).Dot("avx2FMA")
	case AVX512BF16:
		return jen.Id(CPUVar).Dot("avx512BF16")
	}
	return jen.Id(CPUVar).Dot("avx512")
}

// CPUVar is the variable of CPUFiles that holds what the CPU has.
const CPUVar = "cpuHas"

// The build constraints of a generated package's files: archsimd exists
// with GOEXPERIMENT=simd on amd64 only, so the vector forms are under
// SIMDTag; the plain forms, which the other amd64 builds run, under
// PlainTag.
const (
	SIMDTag  = "goexperiment.simd && amd64"
	PlainTag = "!goexperiment.simd && amd64"
)

// Forms says how a generated package compiles a config.
type Forms struct {
	// Needs is what the config as tuned (its vector form) needs of the
	// CPU; Scalar when it needs nothing and is its only form.
	Needs Level
	// Scalar is the config of its scalar form: the config itself when it
	// needs nothing.
	Scalar schedule.Config
	// Plain says whether the vector form calls Go assembly, and so has a
	// plain form.
	Plain bool
}

// FormsOf works out the forms of cfg of tmpl at shape (the tuned shape, or
// the op's example for a generic default) on target, a CPU. The scalar
// form is cfg with vec=1 when that is a valid config for a CPU without
// vectors, else the template's default there.
func FormsOf(tmpl kernels.Template, cfg schedule.Config, shape []int, target device.Target) (Forms, error) {
	// What a config needs is what the template's own space says: the
	// lowest level whose space rejects it for no more reasons than the
	// widest level's does (a 16-lane vector, or assembly of AVX-512
	// instructions, is rejected below AVX-512), so that a template without
	// a vector knob needs nothing. Reasons every level shares (a target
	// read from a fingerprint has no cache sizes, which some spaces
	// constrain blocks by) are not the ISA's.
	at := func(l Level) device.Target {
		cpu := *target.CPU
		cpu.ISA = l.ISA()
		return device.Target{Name: target.Name, CPU: &cpu}
	}
	widest, err := tmpl.Space(shape, at(AVX512BF16)).Violated(cfg)
	if err != nil {
		return Forms{}, fmt.Errorf("amd64: %s: %w", tmpl.Op.Name, err)
	}
	f := Forms{Needs: AVX512BF16}
	for l := Scalar; l < AVX512BF16; l++ {
		if v, err := tmpl.Space(shape, at(l)).Violated(cfg); err == nil && len(v) == len(widest) {
			f.Needs = l
			break
		}
	}
	if f.Needs == Scalar {
		f.Scalar = cfg
		return f, nil
	}
	f.Plain = HasAsm(tmpl, cfg)
	scalarTarget := at(Scalar)
	if c, ok := WithScalarVec(cfg); ok {
		space := tmpl.Space(shape, scalarTarget)
		if c, err := space.Parse(c.String()); err == nil && space.Valid(c) {
			f.Scalar = c
			return f, nil
		}
	}
	c, err := tmpl.DefaultConfig(shape, scalarTarget)
	if err != nil {
		return Forms{}, fmt.Errorf("amd64: %w", err)
	}
	f.Scalar = c
	return f, nil
}

// WithScalarVec returns cfg with its vec knob (the vector width in lanes,
// kernels.VectorConstraints) at 1, and whether it has one.
func WithScalarVec(cfg schedule.Config) (schedule.Config, bool) {
	if _, ok := cfg.Lookup("vec"); !ok {
		return cfg, false
	}
	names, vals := make([]string, cfg.Len()), make([]schedule.Value, cfg.Len())
	for i := range names {
		names[i], vals[i] = cfg.Name(i), cfg.At(i)
		if names[i] == "vec" {
			vals[i] = schedule.IntValue(1)
		}
	}
	c, err := schedule.NewConfig(names, vals)
	return c, err == nil
}

// HasAsm reports whether the kernels of cfg call Go assembly. An emitter
// that panics has none here; emitting the kernel reports its panic.
func HasAsm(tmpl kernels.Template, cfg schedule.Config) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return tmpl.Go.Asm(cfg)
}

// EmitClearWrapper adds to f, under SIMDTag, the function wrap with
// params that calls call and then clears the upper halves of the vector
// registers. Go's archsimd code returns with them dirty, and the
// SSE-encoded scalar Go that runs next on the thread (the caller's, any
// goroutine's) then runs several times slower until something clears
// them: so dispatch runs the wrapper. Goroutines a kernel starts (threads
// > 1) clear them themselves before they end (golang.F32.Goroutine). A
// plain form needs no wrapper: only its assembly uses the vector
// registers, and it ends in VZEROUPPER.
func EmitClearWrapper(f *jen.File, wrap, name string, params []jen.Code, call jen.Code) {
	f.Commentf("%s runs %s, then clears the upper halves of the vector registers (VZEROUPPER), so that the scalar code after it does not pay for mixing AVX and SSE.", wrap, name)
	f.Func().Id(wrap).Params(params...).Block(call, jen.Qual(golang.ArchSIMD, "ClearAVXUpperBits").Call())
}

// AsmFile returns the name of an assembly file of op and its build
// constraint (none: the file name's _amd64 suffix is one): that of
// kernels whose plain forms call it too is in every amd64 build, that of
// kernels without plain forms (vector forms only) with the experiment
// only.
func AsmFile(op string, plain bool) (name, constraint string) {
	if plain {
		return op + "_amd64.s", ""
	}
	return op + "_simd_amd64.s", "goexperiment.simd"
}

// A TextFile is a Go file that is the same in every generated package
// that has it, but for the package clause and header: Body under the
// build constraint Tag (none when empty), importing Imports.
type TextFile struct {
	Name, Tag, Body string
	Imports         []string
}

// The CPU detection of the plain forms (cpuHas), its assembly and its
// tests.
var (
	//go:embed cpu_amd64.go.txt
	cpuSource string
	//go:embed cpu_amd64.s.txt
	cpuAsm string
	//go:embed cpu_amd64_test.go.txt
	cpuTest string
	//go:embed cpu_simd_test.go.txt
	cpuSIMDTest string
)

// CPUFiles are the Go files of the CPU detection that every package with
// plain forms has: it reads the CPU's features by CPUID and XGETBV in the
// package's own assembly (CPUAsm) as Go's runtime reads them, GODEBUG's
// cpu settings included, and a test checks that reading against
// archsimd.X86 in a build with the experiment.
func CPUFiles() []TextFile {
	return []TextFile{
		{Name: "cpu_amd64.go", Body: cpuSource, Imports: []string{"os", "runtime", "strings"}},
		{Name: "cpu_amd64_test.go", Body: cpuTest, Imports: []string{"os", "runtime", "strings", "testing"}},
		{Name: "cpu_simd_test.go", Tag: SIMDTag, Body: cpuSIMDTest, Imports: []string{"os", "simd/archsimd", "testing"}},
	}
}

// CPUAsmFile is the name and body of the assembly of CPUFiles.
func CPUAsmFile() (name, body string) { return "cpu_amd64.s", cpuAsm }

// PlainLegend says what "also plain" means in a generated package's list
// of kernels.
const PlainLegend = "built without GOEXPERIMENT=simd on amd64, its plain form"

// BuildsDoc is the "Builds" section of a generated package's doc: what
// each build runs, for a package with plain forms or without.
func BuildsDoc(plain bool) string {
	var b strings.Builder
	b.WriteString("Built with GOEXPERIMENT=simd on amd64 (build tag goexperiment.simd), the vector kernels (simd/archsimd, and ")
	b.WriteString("Go assembly tiles where the config has them) run at the speed autotune measured, each only on a CPU that has ")
	b.WriteString("the instructions it needs (AVX2 and FMA, AVX-512, or AVX-512 with AVX512-BF16 for gemm's convert=dot), checked once at start-up; on another CPU that kernel runs its scalar form.\n\n")
	if plain {
		b.WriteString("Built without it on amd64, a kernel whose config has Go assembly tiles (micro=asm; \"also plain\" below) ")
		b.WriteString("runs its plain form on a CPU with the tiles' instructions: the same assembly, which needs no experiment, ")
		b.WriteString("with plain Go around it instead of archsimd (gemm's edge tiles, attention's online softmax). ")
		b.WriteString("It runs at the tuned speed where the tiles do all the work (gemm at a tuned shape its tiles divide) ")
		b.WriteString("and slower where the plain Go has more to do (gemm's edge tiles at other shapes; attention's softmax, ")
		b.WriteString("about twice the tuned time), still well ahead of the scalar form; Variant names it as the vector form. ")
		b.WriteString("The CPU's instructions are read as Go's runtime reads them (CPUID and XGETBV, then GODEBUG's cpu settings, ")
		b.WriteString("so that GODEBUG=cpu.avx512f=off hides AVX-512 from both builds alike). ")
		b.WriteString("Every other kernel of such a build, and every kernel on another architecture, runs its scalar form: ")
	} else {
		b.WriteString("Built without it, or on another architecture, every kernel runs its scalar form: ")
	}
	b.WriteString("the same config with vec=1 ")
	b.WriteString("(or, where that is not a valid config, the template's default for a CPU without vectors), in plain Go, correct ")
	b.WriteString("but several times slower; Variant then names the scalar forms (suffix Scalar).\n\n")
	b.WriteString("A vector kernel returns with the upper halves of the vector registers cleared (VZEROUPPER), since ")
	b.WriteString("scalar Go after AVX code that leaves them dirty runs several times slower; the goroutines a kernel ")
	b.WriteString("with threads > 1 starts clear them too before they end, on the threads they ran on.\n\n")
	return b.String()
}
