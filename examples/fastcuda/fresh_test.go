package fastcuda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/gen/gocuda"
	"github.com/autotune-dev/autotune/kernels"
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/tunedb"
)

// The package is generated from the tuning log in testdata (see its
// README), its PTX compiled by clang as CI has it.
//
//go:generate go run ../../cmd/autotune gen --log testdata/tune.jsonl --device sm_80,sm_86,sm_90 --out . --pkg fastcuda

// command is what the go:generate line runs, as the generated headers
// record it.
const command = `autotune gen --log testdata/tune.jsonl --device sm_80,sm_86,sm_90 --out . --pkg fastcuda`

var update = flag.Bool("update", false, "rewrite the generated files of this package")

// clangPTX compiles as autotune gen does without NVRTC.
type clangPTX struct{ path, name string }

func (c clangPTX) PTX(ctx context.Context, k kernels.CUDAKernel, arch string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "fastcuda-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	return emu.PTX(ctx, c.path, k, arch, dir)
}

func (c clangPTX) Name() string { return c.name }

// TestFresh regenerates the package from testdata/tune.jsonl and fails
// listing the files that differ from the checked-in ones (or are missing,
// or are left over); with -update it rewrites them. The PTX is compared
// too, so the test needs the clang that generated it (the manifest names
// it) and is skipped, saying so, under another compiler.
func TestFresh(t *testing.T) {
	clang, err := emu.FindClang()
	if err != nil {
		t.Skip(err)
	}
	var m gocuda.Manifest
	if b, err := os.ReadFile("manifest.json"); err == nil {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
	}
	c := clangPTX{clang, m.Compiler}
	if !*update && !strings.Contains(clangVersion(t, clang), m.Compiler) {
		t.Skipf("the PTX was compiled by %q; %s is another compiler", m.Compiler, clang)
	}
	if *update {
		c.name = clangVersion(t, clang)
	}
	f, err := os.Open("testdata/tune.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := tunedb.ReadRecords(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	mem := tunedb.NewMemory()
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	files, err := gocuda.Generate(context.Background(), mem, gocuda.Options{
		Pkg: "fastcuda", Archs: []string{"sm_80", "sm_86", "sm_90"}, Command: command, Compiler: c})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		written, removed, err := gen.Write(".", files)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %v, removed %v", written, removed)
		return
	}
	var stale []string
	for name, want := range files {
		if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, want) {
			stale = append(stale, name)
		}
	}
	for _, dir := range []string{"cu", "ptx"} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && files[filepath.ToSlash(path)] == nil {
				stale = append(stale, path+" (no longer generated)")
			}
			return nil
		})
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		t.Errorf("the generated files are stale; run 'go test ./examples/fastcuda -run Fresh -update' (or 'go generate ./examples/fastcuda'):\n\t%s", strings.Join(stale, "\n\t"))
	}
}

// clangVersion is the first line of clang --version, as autotune gen
// names the compiler.
func clangVersion(t *testing.T, clang string) string {
	t.Helper()
	b, err := exec.Command(clang, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return line
}
