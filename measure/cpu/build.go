package cpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
)

// maxErrorBytes bounds an Error message: it goes into every record of the
// tuning database, and the first compiler message is the one that matters.
const maxErrorBytes = 4 << 10

// goMod is the go.mod of a batch's module. The module has no requirements:
// candidates may import the standard library (simd/archsimd included) only.
const goMod = "module " + harnessModule + "\n\ngo 1.26\n"

// builder builds the throw-away module of one batch in dir.
type builder struct {
	goCmd string // resolved path of the go command
	dir   string
	batch measure.Batch
	cgo   bool // build with cgo: only a bench with a cgo baseline (OpenBLAS)
}

// build writes a package per candidate of ids and a harness, and builds them
// into one binary. Candidates that cannot be emitted or do not compile get a
// build_error result in res; build returns the binary and the candidates it
// holds, in batch order (none, and no binary, when nothing compiled). An
// error means the build itself failed: a candidate is never the cause.
func (b *builder) build(ctx context.Context, ids []int, res []measure.Result) (bin string, built []int, err error) {
	if err := os.WriteFile(filepath.Join(b.dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		return "", nil, fmt.Errorf("cpu: writing the batch module: %w", err)
	}
	if err := writeHarness(b.dir); err != nil {
		return "", nil, err
	}
	inputs, _ := b.batch.Template.Args(slices.Clone(b.batch.Shape))
	for _, id := range ids {
		src, asm, msg := b.emit(id)
		if msg != "" {
			res[id].Status, res[id].Error = measure.StatusBuildError, clip(msg)
			continue
		}
		pkg := filepath.Join(b.dir, pkgName(id))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			return "", nil, fmt.Errorf("cpu: writing candidate: %w", err)
		}
		if err := os.WriteFile(filepath.Join(pkg, pkgName(id)+".go"), src, 0o644); err != nil {
			return "", nil, fmt.Errorf("cpu: writing candidate: %w", err)
		}
		if asm != nil {
			if err := os.WriteFile(filepath.Join(pkg, asmFile(pkgName(id), b.batch.Target)), asm, 0o644); err != nil {
				return "", nil, fmt.Errorf("cpu: writing candidate: %w", err)
			}
		}
		built = append(built, id)
	}

	bin = filepath.Join(b.dir, "harness")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	// Each round removes at least one candidate or returns, so this ends.
	for len(built) > 0 {
		rows := make([]tableRow, len(built))
		for i, id := range built {
			rows[i] = tableRow{id: id, pkg: pkgName(id), inputs: len(inputs), half: b.batch.DType.Size() == 2,
				threads: floorThreads(b.batch.Configs[id])}
		}
		table, err := renderTable(rows)
		if err != nil {
			return "", nil, err
		}
		if err := os.WriteFile(filepath.Join(b.dir, "table.go"), table, 0o644); err != nil {
			return "", nil, fmt.Errorf("cpu: writing the harness: %w", err)
		}
		out, err := b.goBuild(ctx, bin)
		if err == nil {
			return bin, built, nil
		}
		if ctx.Err() != nil {
			return "", nil, fmt.Errorf("cpu: build interrupted: %w", ctx.Err())
		}
		failed := parseBuildErrors(out)
		var blamed []int
		for _, id := range built {
			if msg, ok := failed[id]; ok {
				res[id].Status, res[id].Error = measure.StatusBuildError, clip(msg)
				blamed = append(blamed, id)
			}
		}
		if len(blamed) == 0 {
			return "", nil, fmt.Errorf("cpu: go build failed, and not because of a candidate: %w\n%s", err, clip(string(out)))
		}
		built = slices.DeleteFunc(built, func(id int) bool { return slices.Contains(blamed, id) })
	}
	return "", nil, nil
}

// emit renders candidate id's source and its assembly, if the template
// has any for it. A template that panics or emits code that is not even Go
// fails that candidate alone, with msg saying why.
func (b *builder) emit(id int) (src, asm []byte, msg string) {
	ins, _ := b.batch.Template.Args(slices.Clone(b.batch.Shape))
	src, msg = emitPackage(pkgName(id), func(f *jen.File) {
		asm = b.batch.Template.Go.EmitGo(f, kernels.Kernel{Name: kernelName, Shape: slices.Clone(b.batch.Shape),
			DType: b.batch.DType, Config: b.batch.Configs[id], Arch: kernels.ArchOf(b.batch.Target)})
		assertSignature(f, len(ins), b.batch.DType)
	})
	if msg != "" {
		return nil, nil, msg
	}
	return src, asm, ""
}

// asmFile is the name of package pkg's assembly file for target: of its
// architecture (kernels.ArchOf), so that only that build reads it.
func asmFile(pkg string, target device.Target) string {
	return pkg + "_" + kernels.ArchOf(target).ISA + ".s"
}

// assertSignature states the kernel calling convention, func(out, in0, ...
// []E) with E the element type of dt (kernels.GoElem), in the candidate's
// own package: a kernel that breaks it then fails to build there, as a
// build error of its own, instead of in the harness's table, where no
// candidate would be blamed and the batch would fail.
func assertSignature(f *jen.File, inputs int, dt dtype.DType) {
	params := make([]jen.Code, 1+inputs)
	for i := range params {
		params[i] = jen.Index().Add(kernels.GoElem(dt))
	}
	f.Comment("The kernel calling convention: out, then the inputs.")
	f.Var().Id("_").Func().Params(params...).Op("=").Id(kernelName)
}

// emitPackage renders the file of package pkg that emit fills in. When emit
// panics or writes something that is not Go, msg says so and src is nil.
func emitPackage(pkg string, emit func(f *jen.File)) (src []byte, msg string) {
	defer func() {
		if r := recover(); r != nil {
			src, msg = nil, fmt.Sprintf("emitting the kernel panicked: %v", r)
		}
	}()
	f := jen.NewFile(pkg)
	f.HeaderComment(generatedHeader)
	emit(f)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, "the emitted kernel is not valid Go: " + err.Error()
	}
	return buf.Bytes(), ""
}

// goBuild runs go build in the batch directory and returns its output.
//
// The go command keeps its work files in a go-build* directory under
// GOTMPDIR, which it removes only when it exits normally; a build killed
// when the tuner is stopped would leave one in TMPDIR each time. So the
// go command gets a GOTMPDIR of its own, removed here whatever became of
// the build.
func (b *builder) goBuild(ctx context.Context, bin string) ([]byte, error) {
	tmp, err := os.MkdirTemp(b.dir, "gotmp")
	if err != nil {
		return nil, fmt.Errorf("cpu: making the go command's temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, b.goCmd, "build", "-o", bin, ".")
	cmd.Dir = b.dir
	cgo := "CGO_ENABLED=0" // no C compiler needed: candidates are pure Go
	if b.cgo {
		cgo = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(),
		"GOEXPERIMENT=simd", // simd/archsimd exists only with it
		// The harness measures on this machine, in this process's
		// architecture, even where the go command is of another (autotune
		// for arm64 under emulation; see package emul).
		"GOARCH="+runtime.GOARCH,
		"GOWORK=off",        // the batch module stands alone
		"GOFLAGS=",          // a caller's -mod=vendor or -race is not for the harness
		"GOTOOLCHAIN=local", // never download a toolchain in the middle of a tuning run
		"GOTMPDIR="+tmp,
		cgo,
	)
	newGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = time.Second
	return cmd.CombinedOutput()
}

var (
	// pkgHeader is the line go build prints before the compiler's messages
	// about one package.
	pkgHeader = regexp.MustCompile(`^# ` + harnessModule + `(?:/k(\d+))?$`)
	// pkgFile starts a message about a file of a candidate's package, e.g.
	// "k007/k007.go:12:3: undefined: x" (the form differs between go build's
	// loader and the compiler, hence the optional "./").
	pkgFile = regexp.MustCompile(`^(?:\./)?k(\d+)/`)
)

// parseBuildErrors maps each candidate that go build's output blames to its
// messages. Lines under a "# autotuneharness/k007" header belong to k007
// until the next header; a line that names a candidate's file belongs to
// that candidate wherever it appears, and so do the indented lines after it.
func parseBuildErrors(out []byte) map[int]string {
	msgs := make(map[int][]string)
	cur, last := -1, -1 // the package of the header in force; the candidate of the previous line
	for _, line := range strings.Split(string(out), "\n") {
		if m := pkgHeader.FindStringSubmatch(line); m != nil {
			cur = -1
			if m[1] != "" {
				cur, _ = strconv.Atoi(m[1])
			}
			last = cur
			continue
		}
		id := cur
		if m := pkgFile.FindStringSubmatch(line); m != nil {
			id, _ = strconv.Atoi(m[1])
		} else if strings.HasPrefix(line, "\t") {
			id = last // a continuation, as in "...; to add it:\n\tgo get ..."
		}
		last = id
		if id >= 0 && strings.TrimSpace(line) != "" {
			msgs[id] = append(msgs[id], line)
		}
	}
	failed := make(map[int]string, len(msgs))
	for id, lines := range msgs {
		failed[id] = strings.Join(lines, "\n")
	}
	return failed
}

// clip shortens s to about maxErrorBytes, at a line end where it can.
func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxErrorBytes {
		return s
	}
	cut := s[:maxErrorBytes]
	if i := strings.LastIndexByte(cut, '\n'); i > maxErrorBytes/2 {
		cut = cut[:i]
	}
	return cut + "\n[...]"
}

// ErrNoGo is wrapped by the error Measure returns when it finds no go
// command: the CPU backend compiles every candidate.
var ErrNoGo = errors.New("cpu: the CPU backend builds candidates with the go command (Go 1.26 or later), and none was found")
