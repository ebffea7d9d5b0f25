package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/schedule"
)

// needCompilers skips a test when g++ or clang is missing.
func needCompilers(t *testing.T) {
	t.Helper()
	for _, find := range []func() (string, error){emu.FindCXX, emu.FindClang} {
		if _, err := find(); errors.Is(err, emu.ErrNoCompiler) {
			t.Skipf("%v", err)
		}
	}
}

// copyOpEnv, set, makes the test binary autotune with check_copy
// registered. The op is registered in a child process only, since the
// registry is global and other tests list its ops.
const copyOpEnv = "AUTOTUNE_TEST_CHECK_COPY"

// registerCopyOp registers check_copy, an op whose CUDA template copies
// its input; knob bug=skip_last leaves the last element unwritten,
// bug=race reads a neighbour's shared memory without a barrier, and
// bug=shared_init initialises a __shared__ variable, which only a GPU
// compiler rejects.
func registerCopyOp() {
	op := kernels.Op{
		Name: "check_copy", Dims: []string{"N"}, Summary: "out = in (a test op of check)", Example: "100",
		Args: func(s []int) ([]int, int) { return []int{s[0]}, s[0] },
		Reference: func(s []int, ins [][]float32, out []float64) {
			for i, v := range ins[0] {
				out[i] = float64(v)
			}
		},
		Tolerance: func([]int, dtype.DType) (float64, float64) { return 0, 0 },
		FLOPs:     func([]int) float64 { return 0 },
		Bytes:     func(s []int) float64 { return float64(8 * s[0]) },
	}
	kernels.RegisterOp(op)
	kernels.Register(kernels.Template{
		Op: op, Backend: kernels.CUDA, Version: "check-copy-1",
		Space: func([]int, device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{schedule.Enum("bug", "none", "skip_last", "race", "shared_init")})
		},
		CUDA: kernels.CUDAFunc(func(k kernels.Kernel) kernels.CUDAKernel {
			name, n, cfg := k.Name, k.Shape[0], k.Config
			body := map[string]string{
				"none":      "if (i < N) s[t] = in[i]; __syncthreads(); if (i < N) out[i] = s[t];",
				"skip_last": "if (i < N) s[t] = in[i]; __syncthreads(); if (i < N - 1) out[i] = s[t];",
				"race":      "if (i < N) { s[t] = in[i]; out[i] = in[i] + 0.f * s[(t + 1) % 64]; }",
				// Right on the CPU, rejected by a GPU compiler.
				"shared_init": "__shared__ float z = 0.f; if (i < N) out[i] = in[i] + z;",
			}[cfg.Str("bug")]
			src := fmt.Sprintf(`extern "C" __global__ void %s(float *out, const float *in) {
__shared__ float s[64];
const int N = %d, t = threadIdx.x, i = blockIdx.x * 64 + t;
%s
}
`, name, n, body)
			return kernels.CUDAKernel{Source: src, Entry: name, Grid: [3]int{(n + 63) / 64, 1, 1}, Block: [3]int{64, 1, 1}}
		}),
	})
}

func TestCheckUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--op", "softmax", "--shape", "5x7"}, 2, "--device is required"},
		{[]string{"check", "--op", "softmax", "--shape", "5x7", "--device", "sm_86", "--configs", "-1"}, 2, "--configs"},
		{[]string{"check", "--op", "softmax", "--shape", "5", "--device", "sm_86"}, 2, "shape"},
		{[]string{"check", "--op", "softmax", "--shape", "5x7", "--device", "sm_86", "--no-ptx", "--no-emu"}, 2, "nothing to check"},
	} {
		code, _, stderr := run(t, "", tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
	code, stdout, _ := run(t, "", "check", "--help")
	if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "--configs") {
		t.Errorf("check --help: exit %d, %q", code, stdout)
	}
}

// TestCheckSoftmax checks softmax on an odd shape for each architecture CI
// checks, and parses the JSON.
func TestCheckSoftmax(t *testing.T) {
	needCompilers(t)
	for _, arch := range []string{"sm_80", "sm_90"} {
		code, stdout, stderr := run(t, "", "check", "--op", "softmax", "--shape", "3x37", "--device", arch, "--configs", "2", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s%s", arch, code, stdout, stderr)
		}
		var out checkJSON
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if out.Passed != 3 || out.Failed != 0 || len(out.Configs) != 3 || !out.Configs[0].PTX.OK || !out.Configs[0].Emu.OK {
			t.Errorf("%s: %+v; want 3 configs passed, each with PTX and emulation ok", arch, out)
		}
	}
}

// TestCheckReportsFailures runs a template with planted bugs: check exits
// 1 and names the first wrong element and the race.
func TestCheckReportsFailures(t *testing.T) {
	needCompilers(t)
	cmd := exec.Command(os.Args[0], "check", "--op", "check_copy", "--shape", "100", "--device", "sm_86", "--configs", "3")
	cmd.Env = append(os.Environ(), copyOpEnv+"=1")
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := out.String(), errs.String()
	t.Log(stdout)
	if code != 1 || !strings.Contains(stderr, "3 of 4 configs") {
		t.Errorf("exit %d, stderr %q; want 1 and 3 of 4 configs failed", code, stderr)
	}
	for _, want := range []string{"emulated   ok", "out[99] = NaN", "depends on the order", "initialization is not supported for __shared__"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
}

// TestCheckEstimate: a small check is not worth a warning; a large one is,
// and its emulated runs, which only a CUDA device has, count per config.
func TestCheckEstimate(t *testing.T) {
	estimate := func(shape, dev string, o checkOptions, configs int) checkEstimate {
		t.Helper()
		wf := workloadFlags{op: "attention", shape: shape, device: dev}
		w, err := wf.resolve()
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := tunable(w, "check")
		if err != nil {
			t.Fatal(err)
		}
		return estimateCheck(tmpl, w, o, configs)
	}
	if e := estimate("1x1x64x64", "sm_80", checkOptions{}, 6); e.total() >= longCheck {
		t.Errorf("attention 1x1x64x64: %v, want under %v", e, longCheck)
	}
	big := estimate("1x1x100000x64", "sm_80", checkOptions{}, 2)
	if big.total() < time.Hour || big.emulation < 2*big.reference {
		t.Errorf("attention 1x1x100000x64 on sm_80, 2 configs: %v; want hours, mostly emulation", big)
	}
	if e := estimate("1x1x100000x64", "sm_80", checkOptions{}, 4); e.emulation != 2*big.emulation {
		t.Errorf("4 configs: emulation %v, want twice the %v of 2", e.emulation, big.emulation)
	}
	for _, e := range []checkEstimate{
		estimate("1x1x100000x64", "cpu", checkOptions{}, 2),
		estimate("1x1x100000x64", "sm_80", checkOptions{noEmu: true}, 2),
	} {
		if e.emulation != 0 || e.reference != big.reference || strings.Contains(e.String(), "emulated") {
			t.Errorf("without emulation: %v", e)
		}
	}
}
