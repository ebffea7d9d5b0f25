package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// dtypeOpEnv, set, makes the test binary autotune with dtype_x8
// registered, an op whose only dtype is x8, one autotune does not know:
// every workload command must refuse it for f32. It is registered in a
// child process only, since the registry is global and other tests list
// its ops.
const dtypeOpEnv = "AUTOTUNE_TEST_DTYPE_OP"

// It also registers dtype_narrow, an op of f32 and x8 whose CPU template
// has x8 kernels only.
func registerDTypeOp() {
	op := kernels.Op{
		Name: "dtype_x8", Dims: []string{"N"}, Summary: "a test op of --dtype", Example: "8",
		DTypes:    []dtype.DType{"x8"},
		Args:      func(s []int) ([]int, int) { return []int{s[0]}, s[0] },
		Reference: func([]int, [][]float32, []float64) {},
		Tolerance: func([]int, dtype.DType) (float64, float64) { return 0, 0 },
		FLOPs:     func([]int) float64 { return 0 },
		Bytes:     func(s []int) float64 { return float64(8 * s[0]) },
	}
	kernels.RegisterOp(op)
	op.Name, op.DTypes = "dtype_narrow", []dtype.DType{dtype.F32, "x8"}
	kernels.RegisterOp(op)
	op.DTypes = []dtype.DType{"x8"}
	kernels.Register(kernels.Template{
		Op: op, Backend: kernels.CPU, Version: "dtype-narrow-1",
		Space: func([]int, device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{schedule.Choice("unroll", 1)})
		},
		Go: kernels.GoFunc(func(*jen.File, kernels.Kernel) []byte { return nil }),
	})
}

// runChild runs the test binary as autotune with env set.
func runChild(t *testing.T, env string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env+"=1")
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errs.String()
}

// --dtype names a known dtype of the op, or the command stops with one
// line and exit status 2, before it opens a database or measures.
func TestDTypeFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	workload := func(op, shape, dt string) []string {
		return []string{"--op", op, "--shape", shape, "--dtype", dt, "--device", "cpu"}
	}
	commands := []struct {
		name string
		args []string
	}{
		{"tune", []string{"tune", "--db", db, "--trials", "1"}},
		{"best", []string{"best", "--db", db}},
		{"bench", []string{"bench", "--db", db}},
		{"check", []string{"check"}},
		{"report", []string{"report", "--db", db}},
		{"db show", []string{"db", "show", "--db", db}},
		{"simulate", []string{"simulate", "--db", db}},
	}
	for _, c := range commands {
		t.Run(c.name+"/unknown", func(t *testing.T) {
			args := append(append([]string(nil), c.args...), workload("softmax", "8x8", "f64")...)
			if c.name == "simulate" {
				args = slicesWithout(args, "--device", "cpu")
			}
			code, stdout, stderr := run(t, "", args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `--dtype: unknown dtype "f64" (known: f32, bf16, f16)`) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming the known dtypes", code, stdout, stderr)
			}
		})
		t.Run(c.name+"/unsupported", func(t *testing.T) {
			args := append(append([]string(nil), c.args...), workload("dtype_x8", "8", "f32")...)
			if c.name == "simulate" {
				args = slicesWithout(args, "--device", "cpu")
			}
			code, stdout, stderr := runChild(t, dtypeOpEnv, args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "op dtype_x8 has no f32 kernels (it has: x8)") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming the op's dtypes", code, stdout, stderr)
			}
		})
	}
	// The op has f32 kernels, its CPU template none.
	for _, args := range [][]string{
		{"tune", "--db", db, "--trials", "1"},
		{"best", "--db", db},
		{"check"},
	} {
		t.Run(args[0]+"/template", func(t *testing.T) {
			code, stdout, stderr := runChild(t, dtypeOpEnv, append(args, workload("dtype_narrow", "8", "f32")...)...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "cpu template: op dtype_narrow has no f32 kernels (it has: x8)") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line naming the template's dtypes", code, stdout, stderr)
			}
		})
	}
	t.Run("gen", func(t *testing.T) {
		code, _, stderr := runChild(t, dtypeOpEnv, "gen", "--db", db, "--out", t.TempDir(), "--pkg", "k", "--ops", "dtype_x8")
		if code != 2 || !strings.Contains(stderr, "op dtype_x8 has no f32 kernels (it has: x8)") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		code, _, stderr = run(t, "", "gen", "--db", db, "--out", t.TempDir(), "--pkg", "k", "--dtype", "f64")
		if code != 2 || !strings.Contains(stderr, `unknown dtype "f64"`) {
			t.Errorf("gen --dtype f64: exit %d, stderr %q", code, stderr)
		}
	})
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused command created the database")
	}
}

// slicesWithout returns args without the flag name and its value.
func slicesWithout(args []string, name, value string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == name && i+1 < len(args) && args[i+1] == value {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// Records of two toolchains are two workloads: db ls shows both, and best
// answers with this machine's toolchain's, or says on stderr that its
// answer is another's.
func TestToolchainRecords(t *testing.T) {
	tc := tune.LocalToolchain(context.Background(), kernels.CPU)
	if tc == "" {
		t.Skip("no go command to name this machine's toolchain")
	}
	path := filepath.Join(t.TempDir(), "tune.db")
	old := seed(t, path) // records as written before records named a toolchain
	best := []string{"best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "cpu", "--json"}

	code, stdout, stderr := run(t, "", best...)
	var got bestJSON
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || got.Toolchain != "" ||
		!strings.Contains(stderr, "measured with toolchain unknown, not "+tc) {
		t.Errorf("only unknown-toolchain records: exit %d, %+v, %v, stderr %q; want their best and a warning", code, got, err, stderr)
	}

	// This toolchain's record is slower, and still the answer.
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := db.Records(old)
	if err == nil {
		r := recs[0]
		r.Workload.Toolchain = tc
		r.MedianNS, r.P20NS, r.P80NS, r.SamplesNS = 5e6, 5e6, 5e6, []float64{5e6}
		r.Status, r.Error = tunedb.StatusOK, ""
		err = db.Commit([]tunedb.Record{r})
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "", best...)
	got = bestJSON{}
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || got.Toolchain != tc || got.Best.MedianNS != 5e6 || stderr != "" {
		t.Errorf("with a record of this toolchain: exit %d, %+v, %v, stderr %q; want it, without a warning", code, got, err, stderr)
	}

	code, stdout, _ = run(t, "", "db", "ls", "--db", path)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "TOOLCHAIN") ||
		!strings.Contains(stdout, " unknown ") || !strings.Contains(stdout, " "+tc+" ") {
		t.Errorf("db ls: exit %d\n%s\nwant a TOOLCHAIN column and a row for each toolchain", code, stdout)
	}
}

// A task's dtype is checked as --dtype is.
func TestTasksDType(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	if err := os.WriteFile(file, []byte(`[{"op": "softmax", "shape": "8x8", "dtype": "f64"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "", "tune", "--tasks", file, "--db", filepath.Join(dir, "t.db"), "--device", "cpu", "--trials", "1")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `task 1: dtype: unknown dtype "f64"`) {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming the task and its dtype", code, stderr)
	}
}
