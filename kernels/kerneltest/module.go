package kerneltest

import (
	"bufio"
	"bytes"
	"debug/elf"
	_ "embed"
	"encoding/binary"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/emul"
	"github.com/autotune-dev/autotune/kernels"
)

// A Module is a throw-away module of generated kernels: a copy of the
// driver (the program in the directory driver, embedded), one file of
// kernels per shape, and table.go, which lists them for the driver.
type Module struct {
	t        testing.TB
	byShape  map[string]*jen.File
	asm      map[string][]byte // Go assembly per shape, as byShape
	rows     []jen.Code
	requires []string
	halves   map[dtype.DType]bool // the 16-bit dtypes of kernels added, whose conversions table.go holds
	goarch   string               // the architecture it is built for (SetArch)
}

// driver is the source of the driver every Module holds.
//
//go:embed driver/main.go
var driver []byte

// A Kernel is a kernel of a Module's table: the function Name of the
// module, called as Name(out, in0, …) with len(Ins) inputs.
type Kernel struct {
	Name   string
	Config string  // what the driver's bench prints for it
	Ins    []int   // element counts of the inputs (kernels.Template.Args)
	Out    int     // element count of the output
	FLOPs  float64 // work of one call, for the bench's GFLOP/s; 0 when unknown
	// DType is the kernel's element type, "" for float32. The driver
	// speaks float32; a kernel of bf16 or f16 gets its inputs encoded
	// (they must hold values of the dtype, dtype.Round), its output
	// poisoned with NaN bits and decoded, and panics if it wrote an input.
	DType dtype.DType
}

// NewModule returns an empty module.
func NewModule(t testing.TB) *Module {
	return &Module{t: t, byShape: make(map[string]*jen.File), asm: make(map[string][]byte), halves: make(map[dtype.DType]bool), goarch: runtime.GOARCH}
}

// SetArch makes the module one of kernels of arch (kernels.ARM64 or
// AMD64), built for its GOARCH; the default is this process's. It skips the test
// when programs of arch cannot run here (see package emul): Start and
// Bench run the driver through emul.For.
func (m *Module) SetArch(arch kernels.Arch) {
	m.t.Helper()
	if _, ok := emul.For(arch.ISA); !ok {
		m.t.Skipf("%s programs cannot run here: no emulator (qemu-user-static) and %s unset", arch.ISA, emul.Env)
	}
	m.goarch = arch.ISA
}

// File returns the file the kernels of shape go in: one file per shape
// keeps files a readable size.
func (m *Module) File(shape []int) *jen.File {
	key := kernels.FormatShape(shape)
	f, ok := m.byShape[key]
	if !ok {
		f = golang.NewFile("main")
		m.byShape[key] = f
	}
	return f
}

// Asm adds Go assembly (what kernels.GoEmitter.EmitGo returns) of a kernel of shape to
// the module, beside File(shape); nil adds nothing.
func (m *Module) Asm(shape []int, src []byte) {
	if src == nil {
		return
	}
	key := kernels.FormatShape(shape)
	if prev := m.asm[key]; prev != nil {
		// One file per shape: drop the second header, keep the functions.
		_, src, _ = bytes.Cut(src, []byte("#include \"textflag.h\"\n"))
		src = append(append(prev, '\n'), src...)
	}
	m.asm[key] = src
}

// Add appends k to the table.
func (m *Module) Add(k Kernel) {
	args := []jen.Code{jen.Id("out")}
	ins := make([]jen.Code, len(k.Ins))
	for i, n := range k.Ins {
		args = append(args, jen.Id("in").Index(jen.Lit(i)))
		ins[i] = jen.Lit(n)
	}
	call := jen.Id(k.Name).Call(args...)
	if k.DType.Size() == 2 {
		m.halves[k.DType] = true
		call = jen.Id(halfCall(k.DType)).Call(jen.Id("out"), jen.Id("in"),
			jen.Func().Params(jen.Id("out").Index().Uint16(), jen.Id("in").Index().Index().Uint16()).Block(call))
	}
	m.rows = append(m.rows, jen.Values(jen.Dict{
		jen.Id("Name"):   jen.Lit(k.Name),
		jen.Id("Config"): jen.Lit(k.Config),
		jen.Id("Ins"):    jen.Index().Int().Values(ins...),
		jen.Id("Out"):    jen.Lit(k.Out),
		jen.Id("FLOPs"):  jen.Lit(k.FLOPs),
		jen.Id("Fn"):     jen.Func().Params(jen.Id("out").Index().Float32(), jen.Id("in").Index().Index().Float32()).Block(call),
	}))
}

func halfConv(dt dtype.DType) golang.Half {
	return golang.Half{Prefix: "conv" + strings.ToUpper(string(dt)), DType: dt}
}

func halfCall(dt dtype.DType) string { return "call" + strings.ToUpper(string(dt)) }

// emitHalfCall adds to f the conversions of dt and the function through
// which the table calls a kernel of dt (halfCall): it encodes the inputs,
// poisons the output with 0xffff (NaN in bf16 and f16), runs the kernel,
// checks the inputs bit for bit and decodes the output.
func emitHalfCall(f *jen.File, dt dtype.DType) {
	h := halfConv(dt)
	h.Emit(f)
	id := jen.Id
	encoded := func(dst string) jen.Code {
		return jen.For(jen.List(id("i"), id("x")).Op(":=").Range().Id("in")).Block(
			id(dst).Index(id("i")).Op("=").Make(jen.Index().Uint16(), jen.Len(id("x"))),
			id(h.Encode()).Call(id(dst).Index(id("i")), id("x")),
		)
	}
	f.Comment(halfCall(dt) + " runs a kernel of " + string(dt) + " on float32 inputs and output (see kerneltest.Kernel.DType).")
	f.Func().Id(halfCall(dt)).Params(id("out").Index().Float32(), id("in").Index().Index().Float32(),
		id("k").Func().Params(id("out").Index().Uint16(), id("in").Index().Index().Uint16())).Block(
		jen.List(id("h"), id("again")).Op(":=").List(jen.Make(jen.Index().Index().Uint16(), jen.Len(id("in"))), jen.Make(jen.Index().Index().Uint16(), jen.Len(id("in")))),
		encoded("h"),
		id("o").Op(":=").Make(jen.Index().Uint16(), jen.Len(id("out"))),
		jen.For(id("i").Op(":=").Range().Id("o")).Block(id("o").Index(id("i")).Op("=").Lit(0xffff)),
		id("k").Call(id("o"), id("h")),
		encoded("again"),
		jen.For(id("i").Op(":=").Range().Id("h")).Block(
			jen.If(jen.Op("!").Qual("slices", "Equal").Call(id("h").Index(id("i")), id("again").Index(id("i")))).Block(
				jen.Panic(jen.Qual("fmt", "Sprintf").Call(jen.Lit("the kernel wrote to input %d"), id("i"))),
			),
		),
		id(h.Decode()).Call(id("out"), id("o")),
	)
}

// Require adds modules (as in kernels.Baseline.Requires) the kernels
// import. They are required as autotune bench's module requires them: at
// autotune's version, with its checksums.
func (m *Module) Require(modules ...string) { m.requires = append(m.requires, modules...) }

// Build writes the module into a temporary directory, builds it with
// GOEXPERIMENT=simd and returns the directory and the binary.
func (m *Module) Build() (dir, bin string) {
	t := m.t
	t.Helper()
	dir = t.TempDir()
	files := map[string][]byte{}
	mod := "module kerneltest\n\ngo 1.26\n"
	if len(m.requires) > 0 {
		req, sum, err := autotune.Require(m.requires...)
		if err != nil {
			t.Fatal(err)
		}
		mod += "\n" + req
		files["go.sum"] = []byte(sum)
	}
	files["go.mod"] = []byte(mod)
	files["main.go"] = driver
	for key, f := range m.byShape {
		files["kernels_"+key+".go"] = render(t, f)
	}
	for key, src := range m.asm {
		files["kernels_"+key+"_"+m.goarch+".s"] = src
	}
	table := golang.NewFile("main")
	for _, dt := range dtype.Known() {
		if m.halves[dt] {
			emitHalfCall(table, dt)
		}
	}
	table.Func().Id("init").Params().Block(
		jen.Id("table").Op("=").Index().Id("Entry").Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, m.rows...))
	files["table.go"] = render(t, table)
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin = filepath.Join(dir, "driver")
	goCmd(t, dir, []string{"GOARCH=" + m.goarch}, "build", "-o", bin, ".")
	return dir, bin
}

// Vet runs go vet on the module Build wrote into dir, for its
// architecture.
func (m *Module) Vet(dir string) {
	m.t.Helper()
	goCmd(m.t, dir, []string{"GOARCH=" + m.goarch}, "vet", ".")
}

func render(t testing.TB, f *jen.File) []byte {
	t.Helper()
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// Go runs the go command in dir with GOEXPERIMENT=simd, outside any
// workspace and ignoring GOFLAGS, and fails the test if it fails. It skips
// the test if there is no go command.
func Go(t testing.TB, dir string, args ...string) {
	t.Helper()
	goCmd(t, dir, nil, args...)
}

// goCmd is Go with env added to the environment (GOARCH).
func goCmd(t testing.TB, dir string, env []string, args ...string) {
	t.Helper()
	tool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOEXPERIMENT=simd", "GOFLAGS=", "GOWORK=off"), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// WriteFloats writes xs to path as little-endian float32, the form the
// drivers read.
func WriteFloats(t testing.TB, path string, xs []float32) {
	t.Helper()
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
}

// A Run is a driver running a list of jobs, "driver run JOBS", whose
// outputs are read back one job at a time, in the order of the list.
type Run struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr strings.Builder
	buf    []byte
}

// Start writes jobs to the file jobs in dir and starts the driver bin on
// it.
func Start(t testing.TB, dir, bin, jobs string) *Run {
	t.Helper()
	jobsFile := filepath.Join(dir, "jobs")
	if err := os.WriteFile(jobsFile, []byte(jobs), 0o666); err != nil {
		t.Fatal(err)
	}
	r := &Run{cmd: command(t, bin, "run", jobsFile)}
	r.cmd.Stderr = &r.stderr
	pipe, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.out = bufio.NewReaderSize(pipe, 1<<20)
	return r
}

// Next reads the output of the next job, kernel name's, into got, which
// has the output's length.
func (r *Run) Next(t testing.TB, name string, got []float32) {
	t.Helper()
	if cap(r.buf) < 4*len(got) {
		r.buf = make([]byte, 4*len(got))
	}
	buf := r.buf[:4*len(got)]
	if _, err := io.ReadFull(r.out, buf); err != nil {
		t.Fatalf("reading %s's output: %v\n%s", name, err, r.stderr.String())
	}
	for i := range got {
		got[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
}

// Wait reads what is left of the output and waits for the driver to exit.
func (r *Run) Wait(t testing.TB) {
	t.Helper()
	if _, err := io.Copy(io.Discard, r.out); err != nil {
		t.Error(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("driver: %v\n%s", err, r.stderr.String())
	}
}

// Bench runs "driver bench ROUNDS" on bin and logs its table with the host
// it ran on.
func Bench(t testing.TB, bin string, rounds int) {
	t.Helper()
	out, err := command(t, bin, "bench", strconv.Itoa(rounds)).CombinedOutput()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	host := device.Host()
	t.Logf("%s, %d cores (GOMAXPROCS %d):\n%s", host.CPU.Model, host.CPU.Cores, runtime.GOMAXPROCS(0), out)
}

// command returns the command that runs the driver bin with args: through
// the emulator of its architecture where this machine does not run it
// (emul.For).
func command(t testing.TB, bin string, args ...string) *exec.Cmd {
	t.Helper()
	goarch := runtime.GOARCH
	if f, err := elf.Open(bin); err == nil {
		switch f.Machine {
		case elf.EM_AARCH64:
			goarch = "arm64"
		case elf.EM_X86_64:
			goarch = "amd64"
		}
		f.Close()
	}
	w, ok := emul.For(goarch)
	if !ok {
		t.Skipf("%s programs cannot run here", goarch)
	}
	run := append(w, bin)
	return exec.Command(run[0], append(run[1:], args...)...)
}
