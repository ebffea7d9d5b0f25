package gocuda

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/tunedb"
)

// clangPTX compiles with clang as emu's PTX check does.
type clangPTX struct{ path string }

func (c clangPTX) PTX(ctx context.Context, k kernels.CUDAKernel, arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "gocuda-ptx-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	return emu.PTX(ctx, c.path, k, arch, dir)
}

func (c clangPTX) Name() string { return "clang" }

func compiler(t *testing.T) Compiler {
	t.Helper()
	clang, err := emu.FindClang()
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	return clangPTX{clang}
}

// TestGeneratedPackage generates a package from nothing but defaults for
// three architectures, puts it in a module of its own that uses this
// module, and vets it, builds it with CGO_ENABLED=0 and runs its tests,
// which must pass without a GPU.
func TestGeneratedPackage(t *testing.T) {
	files, err := Generate(context.Background(), tunedb.NewMemory(), Options{Pkg: "fastcuda", Archs: []string{"sm_80", "sm_86", "sm_90"}, Compiler: compiler(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeModule(t, files)
	if keep := os.Getenv("GOCUDA_KEEP"); keep != "" {
		os.CopyFS(keep, os.DirFS(dir))
	}
	for _, args := range [][]string{{"vet", "./..."}, {"build", "./..."}, {"test", "-count=1", "-v", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if args[0] == "test" && !strings.Contains(string(out), "no GPU here") {
			t.Errorf("the GPU test did not say why it skipped:\n%s", out)
		}
	}
}

// writeModule writes files as package fastcuda of a module that requires
// purego at this module's version, and returns its directory.
func writeModule(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "fastcuda")
	if _, _, err := gen.Write(pkg, files); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var purego, goLine string
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "github.com/ebitengine/purego" {
			purego = f[1]
		}
		if len(f) == 2 && f[0] == "go" {
			goLine = line
		}
	}
	mod := "module example.com/m\n\n" + goLine + "\n\nrequire github.com/ebitengine/purego " + purego + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
