package emu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/autotune-dev/autotune/kernels"
)

// ClangCandidates are the clang commands FindClang tries, in order: Debian
// bookworm's clang-19 first (it knows sm_90), then any clang on the PATH.
var ClangCandidates = []string{"clang-19", "clang-20", "clang-18", "clang"}

// FindClang returns the path of clang for the PTX check: $CLANG when set,
// else the first of ClangCandidates on the PATH.
func FindClang() (string, error) {
	return find("CLANG", ClangCandidates, "clang for the PTX check (apt-get install clang-19)")
}

// ptxVersions is the PTX ISA version each architecture needs at least,
// passed to clang as a target feature: without the CUDA toolkit, clang
// does not know which PTX it may emit.
var ptxVersions = map[string]string{
	"sm_70": "60", "sm_75": "63", "sm_80": "70", "sm_86": "71", "sm_89": "78", "sm_90": "78",
}

// PTXError is a kernel clang rejected; Log is its output.
type PTXError struct{ Log string }

func (e *PTXError) Error() string { return "ptx: " + firstLines(e.Log, 8) }

// PTX compiles k to PTX for arch ("sm_86") with clang, using the prelude,
// in dir, and returns the PTX. A kernel clang rejects is a *PTXError.
func PTX(ctx context.Context, clang string, k kernels.CUDAKernel, arch, dir string) ([]byte, error) {
	ptxv, ok := ptxVersions[arch]
	if !ok {
		return nil, fmt.Errorf("emu: no PTX version known for %s", arch)
	}
	prelude := filepath.Join(dir, "ptx.h")
	if err := os.WriteFile(prelude, []byte(Prelude), 0o644); err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	src := filepath.Join(dir, k.Entry+".cu")
	if err := os.WriteFile(src, []byte(k.Source), 0o644); err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	out := filepath.Join(dir, k.Entry+"."+arch+".ptx")
	args := []string{"-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=" + arch, "-nocudainc", "-nocudalib",
		"-Xclang", "-target-feature", "-Xclang", "+ptx" + ptxv, "-O2", "-S",
		"-include", prelude, "-Wno-unknown-cuda-version",
		"-Werror=zero-length-array", // accepted by clang and g++, rejected by NVRTC
		"-o", out, src}
	cmd := exec.CommandContext(ctx, clang, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("emu: %w", ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &PTXError{Log: strings.ReplaceAll(log.String(), dir+string(filepath.Separator), "")}
		}
		return nil, fmt.Errorf("emu: running %s: %w", clang, err)
	}
	ptx, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	return ptx, nil
}
