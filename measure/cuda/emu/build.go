package emu

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/autotune-dev/autotune/kernels"
)

// Header is emu.h, the C++ header that lets CUDA C compile and run on the
// CPU (see the package doc).
//
//go:embed emu.h
var Header string

// Prelude is ptx.h, what clang needs to compile the templates' CUDA to PTX
// without the CUDA toolkit's headers.
//
//go:embed ptx.h
var Prelude string

// ErrNoCompiler is wrapped when the C++ compiler or clang is missing.
var ErrNoCompiler = errors.New("emu: no compiler")

// CXXCandidates are the C++ compilers FindCXX tries, in order.
var CXXCandidates = []string{"g++", "clang++", "clang++-19"}

// FindCXX returns the path of a C++ compiler: $CXX when set, else the first
// of CXXCandidates on the PATH.
func FindCXX() (string, error) {
	return find("CXX", CXXCandidates, "a C++ compiler (apt-get install g++)")
}

func find(env string, names []string, what string) (string, error) {
	if v := os.Getenv(env); v != "" {
		names = []string{v}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s, tried %s", ErrNoCompiler, what, strings.Join(names, ", "))
}

// externShared matches a dynamic shared memory declaration,
// `extern __shared__ T name[];`, with T in group 1 and name in group 2.
var externShared = regexp.MustCompile(`extern\s+__shared__\s+([^;]*?)\s*\b(\w+)\s*\[\s*\]\s*;`)

var alignSpec = regexp.MustCompile(`__align__\s*\(\s*\d+\s*\)|__attribute__\s*\(\(.*?\)\)`)

// Source returns the C++ translation unit that emulates k: emu.h's
// include, k's source with each `extern __shared__ T name[];` (which must
// be in a function) turned into a pointer to the dynamic shared memory,
// and the launch entry. Line numbers in messages are k.Source's.
func Source(k kernels.CUDAKernel) string {
	src := externShared.ReplaceAllStringFunc(k.Source, func(decl string) string {
		m := externShared.FindStringSubmatch(decl)
		typ := strings.TrimSpace(alignSpec.ReplaceAllString(m[1], ""))
		return fmt.Sprintf("%s *const %s = reinterpret_cast<%s *>(emu_dynamic_shared_base());", typ, m[2], typ)
	})
	var b strings.Builder
	b.WriteString("#include \"emu.h\"\n")
	fmt.Fprintf(&b, "#line 1 %q\n", k.Entry+".cu")
	b.WriteString(src)
	if !strings.HasSuffix(src, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "EMU_ENTRY(%s)\n", k.Entry)
	return b.String()
}

// BuildError is a kernel the C++ compiler rejected; Log is its output.
type BuildError struct{ Log string }

func (e *BuildError) Error() string {
	return "emu: the kernel does not compile as C++: " + firstLines(e.Log, 8)
}

// Build compiles k for emulation with the C++ compiler cxx into a shared
// library in dir and returns its path. arch ("sm_80") sets __CUDA_ARCH__.
// A kernel that does not compile is a *BuildError; any other error is the
// machinery's.
func Build(ctx context.Context, cxx string, k kernels.CUDAKernel, arch, dir string) (string, error) {
	if err := os.WriteFile(filepath.Join(dir, "emu.h"), []byte(Header), 0o644); err != nil {
		return "", fmt.Errorf("emu: %w", err)
	}
	src := filepath.Join(dir, k.Entry+".emu.cpp")
	if err := os.WriteFile(src, []byte(Source(k)), 0o644); err != nil {
		return "", fmt.Errorf("emu: %w", err)
	}
	lib := filepath.Join(dir, "lib"+k.Entry+".so")
	args := []string{"-std=c++17", "-O1", "-fPIC", "-shared", "-fno-strict-aliasing",
		"-Wno-unknown-pragmas", "-Wno-attributes", "-D__CUDA_ARCH__=" + archNumber(arch) + "0",
		"-DAUTOTUNE_EMU", // templates use the emulator's asynchronous copies instead of PTX
		"-I", dir, "-o", lib, src}
	cmd := exec.CommandContext(ctx, cxx, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("emu: %w", ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", &BuildError{Log: out.String()}
		}
		return "", fmt.Errorf("emu: running %s: %w", cxx, err)
	}
	return lib, nil
}

// archNumber returns "80" for "sm_80".
func archNumber(arch string) string { return strings.TrimPrefix(arch, "sm_") }

// firstLines returns the first n lines of s, and a count of the rest.
func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}
