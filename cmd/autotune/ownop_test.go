package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/schedule"
)

// ownOpEnv, set, makes the test binary autotune with test_scale_add
// registered: an op of this test's own, out = a + 3·b, with a CPU and a
// CUDA template, declared through the public API of package kernels only.
// It is registered in a child process only, since the registry is global
// and other tests list its ops.
const ownOpEnv = "AUTOTUNE_TEST_OWN_OP"

func registerOwnOp() {
	op := kernels.Op{
		Name: "test_scale_add", Dims: []string{"N"}, Example: "1009",
		Summary: "out = a + 3·b, an op of the command's tests",
		DTypes:  []dtype.DType{dtype.F32},
		Args:    func(s []int) ([]int, int) { return []int{s[0], s[0]}, s[0] },
		Reference: func(_ []int, ins [][]float32, out []float64) {
			for i := range out {
				out[i] = float64(ins[0][i]) + 3*float64(ins[1][i])
			}
		},
		// One rounding of a + 3·b, at most 2^-23·(|a| + 3|b|) with inputs
		// up to 1024 (the default input sets): 5e-4.
		Tolerance: func([]int, dtype.DType) (float64, float64) { return 1e-6, 1e-3 },
		FLOPs:     func(s []int) float64 { return 2 * float64(s[0]) },
		Bytes:     func(s []int) float64 { return 12 * float64(s[0]) },
		EmitReference: func(f *jen.File, name string) {
			f.Func().Id(name).Params(jen.Id("_").Index().Int(), jen.Id("ins").Index().Index().Float32(), jen.Id("out").Index().Float64()).Block(
				jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
					jen.Id("out").Index(jen.Id("i")).Op("=").Float64().Call(jen.Id("ins").Index(jen.Lit(0)).Index(jen.Id("i"))).
						Op("+").Lit(3).Op("*").Float64().Call(jen.Id("ins").Index(jen.Lit(1)).Index(jen.Id("i"))),
				),
			)
		},
	}
	kernels.RegisterOp(op)
	space := func([]int, device.Target) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{schedule.Choice("unroll", 1, 2, 4)})
	}
	kernels.Register(kernels.Template{
		Op: op, Backend: kernels.CPU, Version: "test-scale-add-cpu-1", Space: space,
		Go: kernels.GoFunc(func(f *jen.File, k kernels.Kernel) []byte {
			k.Want(kernels.AMD64.ISA, dtype.F32)
			u := k.Config.Int("unroll")
			params := []jen.Code{jen.List(jen.Id("out"), jen.Id("a"), jen.Id("b")).Index().Float32()}
			n := jen.Len(jen.Id("out"))
			if k.Shape == nil { // shape-generic: the extent is an argument
				params = append(params, jen.Id("extent").Int())
				n = jen.Id("extent")
			} else {
				n = jen.Lit(k.Shape[0])
			}
			one := func(i jen.Code) jen.Code {
				return jen.Id("out").Index(i).Op("=").Id("a").Index(i).Op("+").Lit(float32(3)).Op("*").Id("b").Index(i)
			}
			var step []jen.Code
			for j := range u {
				step = append(step, one(jen.Id("i").Op("+").Lit(j)))
			}
			f.Comment(k.Name + " computes out = a + 3·b.")
			f.Func().Id(k.Name).Params(params...).Block(
				jen.Id("n").Op(":=").Add(n),
				jen.Id("_").Op(",").Id("_").Op(",").Id("_").Op("=").Id("out").Index(jen.Id("n").Op("-").Lit(1)).Op(",").
					Id("a").Index(jen.Id("n").Op("-").Lit(1)).Op(",").Id("b").Index(jen.Id("n").Op("-").Lit(1)),
				jen.Id("i").Op(":=").Lit(0),
				jen.For(jen.Op(";").Id("i").Op("+").Lit(u).Op("<=").Id("n").Op(";").Id("i").Op("+=").Lit(u)).Block(step...),
				jen.For(jen.Op(";").Id("i").Op("<").Id("n").Op(";").Id("i").Op("++")).Block(one(jen.Id("i"))),
			)
			return nil
		}),
	})
	kernels.Register(kernels.Template{
		Op: op, Backend: kernels.CUDA, Version: "test-scale-add-cuda-1",
		Space: func([]int, device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{schedule.Choice("block", 32, 128)})
		},
		CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
			n, block := k.Shape[0], k.Config.Int("block")
			src := fmt.Sprintf(`extern "C" __global__ void %s(float *out, const float *a, const float *b) {
const int i = blockIdx.x * %d + threadIdx.x;
if (i < %d) out[i] = a[i] + 3.0f * b[i];
}
`, k.Name, block, n)
			return kernels.CUDAKernel{Source: src, Entry: k.Name, Grid: [3]int{(n + block - 1) / block, 1, 1}, Block: [3]int{block, 1, 1}}
		}),
	})
}

// TestOwnOpEndToEnd registers an op of its own with a CPU and a CUDA
// template and takes it through the commands a user runs: list, tune on
// the CPU, check on the CPU and on a CUDA architecture (emulated), best,
// and gen, whose package builds and passes its own tests. Nothing outside
// the registration names the op.
//
// The op declares one dtype, f32, the only one autotune has today; a
// dtype it does not declare is refused.
func TestOwnOpEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs kernels")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "tune.db")
	autotune := func(wantCode int, args ...string) string {
		t.Helper()
		code, stdout, stderr := runChild(t, ownOpEnv, args...)
		if code != wantCode {
			t.Fatalf("autotune %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
		}
		return stdout + stderr
	}

	if out := autotune(0, "list"); !strings.Contains(out, "test_scale_add") || !strings.Contains(out, "unroll") {
		t.Errorf("list does not show the op and its knob:\n%s", out)
	}
	autotune(0, "tune", "--op", "test_scale_add", "--shape", "1009", "--device", "cpu", "--trials", "3", "--db", db)
	if out := autotune(0, "best", "--op", "test_scale_add", "--shape", "1009", "--device", "cpu", "--db", db); !strings.Contains(out, "unroll=") {
		t.Errorf("best names no config:\n%s", out)
	}
	autotune(0, "check", "--op", "test_scale_add", "--shape", "13", "--device", "cpu", "--configs", "2")
	if out := autotune(2, "tune", "--op", "test_scale_add", "--shape", "1009", "--device", "cpu", "--dtype", "x16", "--db", db); !strings.Contains(out, "dtype") {
		t.Errorf("an unknown dtype: %s", out)
	}

	if _, err := emu.FindCXX(); err != nil {
		t.Log("no C++ compiler: the CUDA template is not checked")
	} else {
		args := []string{"check", "--op", "test_scale_add", "--shape", "1000", "--device", "sm_80", "--configs", "1"}
		if _, err := emu.FindClang(); err != nil {
			args = append(args, "--no-ptx")
		}
		out := autotune(0, args...)
		if !strings.Contains(out, "block=") {
			t.Errorf("check on sm_80 names no config:\n%s", out)
		}
	}

	mod := filepath.Join(dir, "mod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	autotune(0, "gen", "--db", db, "--out", filepath.Join(mod, "k"), "--pkg", "k", "--ops", "test_scale_add")
	for _, exp := range []string{"", "simd"} {
		cmd := exec.Command(goTool, "test", "./k")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOEXPERIMENT="+exp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go test of the generated package (GOEXPERIMENT=%s): %v\n%s", exp, err, out)
		}
	}
}
