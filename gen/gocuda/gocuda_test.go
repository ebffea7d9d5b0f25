package gocuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/schedule"
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

// tunedRecords returns records of two tuned workloads on an sm_86 GPU: a
// softmax of 33x1023 and a GEMM of 2048³ whose config needs 55,296 bytes
// of dynamic shared memory, over the 48 KiB a kernel gets without asking.
func tunedRecords(t *testing.T) (*tunedb.Memory, map[string]schedule.Config) {
	t.Helper()
	target, err := device.Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	cfgs := map[string]schedule.Config{}
	var recs []tunedb.Record
	for _, w := range []struct {
		tmpl   kernels.Template
		shape  []int
		config string
	}{
		{softmax.CUDATemplate, []int{33, 1023}, "tpr=64,rows_per_block=2,vec=4,keep=global,algo=online,exp=fast"},
		{gemm.CUDATemplate, []int{2048, 2048, 2048}, "bm=128,bn=128,bk=16,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1"},
	} {
		sp := w.tmpl.Space(w.shape, target)
		cfg, err := sp.Parse(w.config)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		cfgs[w.tmpl.Op.Name] = cfg
		recs = append(recs, tunedb.Record{Schema: tunedb.SchemaVersion, Config: cfg, Status: tunedb.StatusOK, MedianNS: 1000,
			Time: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), Tool: "test",
			Workload: tunedb.Workload{Op: w.tmpl.Op.Name, Shape: w.shape, DType: dtype.F32, Device: "cuda/sm_86/Fake GPU 9000/13000", Template: w.tmpl.Version}})
	}
	mem := tunedb.NewMemory()
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	return mem, cfgs
}

// fakeTest is a test of the generated package against the fake libcuda
// (FAKECUDA, its path): what each launch hands the driver.
const fakeTest = `package fastcuda

import (
	"errors"
	"os"
	"testing"

	"github.com/ebitengine/purego"
)

func TestFakeDriver(t *testing.T) {
	path := os.Getenv("FAKECUDA")
	if path == "" {
		t.Skip("FAKECUDA is not set")
	}
	if err := Load(path); err != nil {
		t.Fatal(err)
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	var retain func(*uintptr, int32) int32
	var setCurrent func(uintptr) int32
	var lastLaunch func(*[7]uint32)
	var lastParams func(*[16]uint64, int32)
	var lastAttr func(*[2]int32)
	purego.RegisterLibFunc(&retain, lib, "cuDevicePrimaryCtxRetain")
	purego.RegisterLibFunc(&setCurrent, lib, "cuCtxSetCurrent")
	purego.RegisterLibFunc(&lastLaunch, lib, "fake_last_launch")
	purego.RegisterLibFunc(&lastParams, lib, "fake_last_params")
	purego.RegisterLibFunc(&lastAttr, lib, "fake_last_attr")

	if err := Softmax(0, 1, 2, 3, 4); !errors.Is(err, ErrNoContext) {
		t.Fatalf("a launch without a context: %v, want ErrNoContext", err)
	}
	var ctx uintptr
	if retain(&ctx, 0) != 0 || setCurrent(ctx) != 0 {
		t.Fatal("no fake context")
	}
	check := func(what string, err error, dims [7]uint32, params []uint64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var got [7]uint32
		var p [16]uint64
		lastLaunch(&got)
		lastParams(&p, 16)
		if got != dims {
			t.Errorf("%s: grid, block, shared %v, want %v", what, got, dims)
		}
		for i, want := range params {
			if p[i] != want {
				t.Errorf("%s: argument %d is %#x, want %#x", what, i, p[i], want)
			}
		}
		if p[len(params)] != 0 {
			t.Errorf("%s: an argument %d, %#x, past the %d wanted", what, len(params), p[len(params)], len(params))
		}
	}
	check("softmax, tuned", Softmax(7, 0x1000, 0x2000, 33, 1023), SOFTMAX_EXACT, []uint64{0x1000, 0x2000})
	check("softmax, nearest", Softmax(7, 0x1000, 0x2000, 5, 77), SOFTMAX_NEAR, []uint64{0x1000, 0x2000, 5, 77})
	check("gemm, tuned", Gemm(9, 0x10, 0x20, 0x30, 2048, 2048, 2048), GEMM_EXACT, []uint64{0x10, 0x20, 0x30})
	var attr [2]int32
	lastAttr(&attr)
	if attr != [2]int32{8, GEMM_SHARED} {
		t.Errorf("cuFuncSetAttribute got %v, want [8 %d]: the dynamic shared memory above 48 KiB", attr, GEMM_SHARED)
	}
	if got := Variant("sm_86", "softmax", 5, 77); got != "softmax_sm_86_g1 (nearest 33x1023)" {
		t.Errorf("Variant = %q", got)
	}
	if got := Arch("sm_89"); got != "sm_86 (PTX JIT-compiled by the driver for sm_89: regenerate with --device sm_89 for kernels of its own)" {
		t.Errorf("Arch(sm_89) = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { Softmax(7, 0x1000, 0x2000, 5, 77) }); n != 0 {
		t.Errorf("a launch allocates %v times", n)
	}
}
`

// TestLauncherOnFakeDriver generates a package from tuned records and runs
// a test of it against the fake libcuda of measure/cuda/driver: the grid,
// block and dynamic shared memory of a specialised and of a generic
// kernel, the arguments (pointers, then a generic kernel's extents), the
// shared memory attribute of a kernel above 48 KiB, the nearest rule, the
// JIT fallback of a newer architecture, and a launch that allocates
// nothing; and that the package's GPU test, run on the fake, finds the
// output its kernels (which compute nothing there) leave poisoned.
func TestLauncherOnFakeDriver(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no C compiler for the fake libcuda")
	}
	fake := filepath.Join(t.TempDir(), "libcuda.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", fake, "../../measure/cuda/driver/testdata/fakecuda.c").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mem, cfgs := tunedRecords(t)
	files, err := Generate(context.Background(), mem, Options{Pkg: "fastcuda", Archs: []string{"sm_80", "sm_86"}, Compiler: compiler(t)})
	if err != nil {
		t.Fatal(err)
	}
	launch := func(k kernels.CUDAKernel) string {
		return fmt.Sprintf("[7]uint32{%d, %d, %d, %d, %d, %d, %d}", k.Grid[0], k.Grid[1], k.Grid[2], k.Block[0], k.Block[1], k.Block[2], k.SharedBytes)
	}
	sm := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: []int{33, 1023}, Config: cfgs["softmax"]})
	gm := gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: []int{2048, 2048, 2048}, Config: cfgs["gemm"]})
	g := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Config: cfgs["softmax"]})
	grid, shared, err := g.Generic.At([]int{5, 77})
	if err != nil {
		t.Fatal(err)
	}
	near := kernels.CUDAKernel{Grid: grid, Block: g.Generic.Block, SharedBytes: shared}
	if gm.SharedBytes <= 48<<10 {
		t.Fatalf("the GEMM config needs %d bytes of shared memory, not over 48 KiB", gm.SharedBytes)
	}
	files["fake_test.go"] = []byte(strings.NewReplacer("SOFTMAX_EXACT", launch(sm), "SOFTMAX_NEAR", launch(near),
		"GEMM_EXACT", launch(gm), "GEMM_SHARED", fmt.Sprint(gm.SharedBytes)).Replace(fakeTest))
	dir := writeModule(t, files)
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestFakeDriver", "-v", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "FAKECUDA="+fake)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFakeDriver") {
		t.Fatalf("%v\n%s", err, out)
	}
	// The fake's kernels compute nothing: the GPU test must find the
	// poisoned output of its first case, through every driver call it
	// makes.
	cmd = exec.Command("go", "test", "-count=1", "-run", "TestGPU", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "LIBCUDA="+fake)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "outputs wrong, the first out[0] = NaN") {
		t.Fatalf("TestGPU on the fake driver: %v, want it to find NaN\n%s", err, out)
	}
}
