package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestMain points the default database at a temporary directory, so that no
// test, whatever flags it forgets, touches the user's real one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == emu.WorkerArg { // check's worker
		os.Exit(emu.ServeWorker(os.Stdin, os.Stdout))
	}
	if os.Getenv(asMainEnv) != "" { // a separate autotune process: see remote_test.go
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(copyOpEnv) != "" { // autotune with a planted op: see TestCheckReportsFailures
		registerCopyOp()
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(ownOpEnv) != "" { // autotune with an op of the test's own: see TestOwnOpEndToEnd
		registerOwnOp()
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(dtypeOpEnv) != "" { // autotune with an op of another dtype: see TestDTypeFlag
		registerDTypeOp()
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "autotune-cmd-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("AUTOTUNE_DB", filepath.Join(dir, "default.db"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run calls Main in-process and returns its exit code and outputs.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errs)
	return code, out.String(), errs.String()
}

func TestUsageErrorsExit2WithOneLine(t *testing.T) {
	t.Setenv("AUTOTUNE_DB", filepath.Join(t.TempDir(), "tune.db"))
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"--op", "softmax", "--shape", "4096x"}, "C is empty; want RxC for softmax"},
		{[]string{"--op", "softmax", "--shape", "0x5"}, "R is 0"},
		{[]string{"--op", "softmax", "--shape", "-1x3"}, `R="-1" is not a positive integer`},
		{[]string{"--op", "softmax", "--shape", "axb"}, `R="a" is not a positive integer`},
		{[]string{"--op", "softmax", "--shape", "2147483648x3"}, "over the limit 2147483647"},
		{[]string{"--op", "softmax", "--shape", "2147483647x2147483647"}, "product of its extents is over 2^53"},
		{[]string{"--op", "softmax", "--shape", "100000x100000"}, "too large to tune here"},
		{[]string{"--op", "softmax", "--shape", "64..1x64"}, "R runs from 64 down to 1"},
		{[]string{"--op", "softmax", "--shape", "0..8x64"}, "R is 0"},
		{[]string{"--op", "softmax", "--shape", "1..x64"}, `R="1.." needs both ends`},
		{[]string{"--op", "softmax", "--shape", "1..8..16x64"}, "not a positive integer"},
		{[]string{"--op", "softmax", "--shape", "a..8x64"}, `R="a" is not a positive integer`},
		{[]string{"--op", "softmax", "--shape", "1..100000x100000"}, "too large to tune here"},
		{[]string{"bench", "--op", "softmax", "--shape", "1..8x64"}, "only autotune tune takes ranges"},
		{[]string{"best", "--op", "softmax", "--shape", "1..8x64"}, "only autotune tune takes ranges"},
		{[]string{"bench", "--op", "softmax", "--shape", "100000x100000"}, "too large to benchmark here"},
		{[]string{"check", "--op", "softmax", "--shape", "100000x100000", "--device", "sm_80"}, "too large to check here"},
		{[]string{"--op", "softmax", "--shape", "4x4x4"}, "3 dimensions, want RxC for softmax"},
		{[]string{"--op", "gemm", "--shape", "64x64"}, "want MxNxK for gemm"},
		{[]string{"--op", "attention", "--shape", "1x8x64"}, "want BxHxSxD for attention"},
		{[]string{"--op", "softmax", "--shape", "4x4", "--causal"}, "--causal applies to --op attention only, not softmax"},
		{[]string{"bench", "--op", "gemm", "--shape", "4x4x4", "--causal"}, "--causal applies to --op attention only, not gemm"},
		{[]string{"--op", "conv", "--shape", "4x4"}, `unknown op "conv" (known: ` + strings.Join(kernels.Names(), ", ") + ")"},
		{[]string{"--op", "softmax", "--shape", "4x4", "--device", "sm_99"}, `unknown device "sm_99" (known: auto, cpu, sm_70`},
		{[]string{"--shape", "4x4"}, "--op is required"},
		{[]string{"--op", "softmax"}, "--shape is required (RxC for softmax"},
		{[]string{"--op", "softmax", "--shape", "4x4", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--op", "softmax", "--shape", "4x4", "--seed", "x"}, "invalid value"},
		{[]string{"tune", "--op", "softmax", "--shape", "4x4", "extra"}, `unexpected argument "extra"`},
		{[]string{"best", "--op", "softmax", "--shape", "4x"}, "C is empty"},
		{[]string{"bench", "--op", "gemm", "--shape", "1x1"}, "want MxNxK"},
		{[]string{"list", "stray"}, `unexpected argument "stray"`},
		{[]string{"db"}, "missing subcommand"},
		{[]string{"db", "rm"}, `unknown subcommand "rm"`},
		{[]string{"db", "prune"}, "--keep K is required"},
		{[]string{"db", "prune", "--keep", "0"}, "--keep K is required"},
		{[]string{"db", "import"}, "no file to import"},
		{[]string{"db", "merge"}, "no database to merge"},
		{[]string{"db", "show", "--op", "softmax", "--shape", "4x4", "--top", "-1"}, "--top must be 0"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want one line containing %q", stderr, tt.want)
			}
		})
	}
}

func TestUntunableExits1(t *testing.T) {
	if _, err := driver.Open(""); err == nil {
		t.Skip("a CUDA driver is here: these commands measure instead")
	}
	t.Setenv("AUTOTUNE_DB", filepath.Join(t.TempDir(), "tune.db"))
	for _, tt := range []struct {
		args []string
		want string
	}{
		// Every op has a CUDA template, but there is no driver here (see
		// below).
		{[]string{"--op", "softmax", "--shape", "4096x1024", "--device", "sm_86"}, "use --device cpu"},
		{[]string{"tune", "--op", "attention", "--shape", "1x1x8x8", "--device", "sm_90"}, "use --device cpu"},
		{[]string{"bench", "--op", "gemm", "--shape", "64x64x64", "--device", "sm_80"}, "needs a CUDA driver with a GPU"},
		{[]string{"bench", "--op", "softmax", "--shape", "64x64", "--device", "sm_80"}, "needs a CUDA driver with a GPU"},
	} {
		code, _, stderr := run(t, "", tt.args...)
		if code != 1 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	cases := [][]string{{"--help"}, {"help"}, {"db", "--help"}}
	for _, c := range commands() {
		cases = append(cases, []string{c.name, "--help"})
	}
	for _, sub := range dbSubcommands() {
		cases = append(cases, []string{"db", sub.name, "-h"})
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", args...)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "Examples:") {
				t.Errorf("help lacks usage or examples:\n%s", stdout)
			}
		})
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := run(t, "", "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range append(device.Names(), "softmax", "gemm", "attention", "RxC", "MxNxK", "BxHxSxD") {
		if !strings.Contains(stdout, name) {
			t.Errorf("list does not show %s:\n%s", name, stdout)
		}
	}
	code, stdout, _ = run(t, "", "list", "--json")
	var got struct {
		Ops     []listOp     `json:"ops"`
		Devices []listDevice `json:"devices"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil {
		t.Fatalf("list --json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(got.Ops) != len(kernels.Names()) || len(got.Devices) != len(device.Names()) {
		t.Errorf("list --json has %d ops, %d devices", len(got.Ops), len(got.Devices))
	}
	for _, op := range got.Ops {
		_, tunable := kernels.TemplateFor(op.Name, kernels.CPU)
		if op.Template != tunable || tunable != (len(op.Knobs) > 0) {
			t.Errorf("list --json: %s has template %v and knobs %v", op.Name, op.Template, op.Knobs)
		}
		if !slices.Contains(op.DTypes, "f32") {
			t.Errorf("list --json: %s has dtypes %v, want f32 among them", op.Name, op.DTypes)
		}
	}
	for _, d := range got.Devices {
		if d.Name == "sm_86" && (d.GPU == nil || d.GPU.MaxWarpsPerSM != 48) {
			t.Errorf("sm_86 limits missing or wrong: %+v", d.GPU)
		}
		if d.Name == "cpu" && (d.CPU == nil || d.CPU.Cores < 1) {
			t.Errorf("cpu description missing: %+v", d.CPU)
		}
	}
}

// seed writes a few softmax records of the current template for this
// machine's CPU into a database.
func seed(t *testing.T, path string) tunedb.Workload {
	t.Helper()
	tmpl, _ := kernels.TemplateFor("softmax", kernels.CPU)
	return seedVersion(t, path, tmpl.Version)
}

// seedVersion is seed with records of the given template version.
func seedVersion(t *testing.T, path, version string) tunedb.Workload {
	t.Helper()
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := tunedb.Workload{Op: "softmax", Shape: []int{64, 33}, DType: "f32",
		Device: device.Host().Fingerprint(), Template: version}
	at := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	var recs []tunedb.Record
	for i, c := range []struct {
		cfg    string
		status tunedb.Status
		median float64
	}{
		// Valid configs of the template on any CPU, so that imports accept them.
		{"vec=1,unroll=2,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", tunedb.StatusOK, 2000},
		{"vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", tunedb.StatusOK, 1500},
		{"vec=1,unroll=8,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", tunedb.StatusWrongAnswer, 0},
		{"vec=1,unroll=1,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", tunedb.StatusOK, 9000},
	} {
		cfg, err := schedule.ParseConfig(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := tunedb.Record{Workload: w, Config: cfg, Status: c.status, Time: at.Add(time.Duration(i) * time.Second), Tool: "test"}
		if c.status == tunedb.StatusOK {
			r.SamplesNS = []float64{c.median * 0.9, c.median, c.median * 1.1}
			r.MedianNS, r.P20NS, r.P80NS = c.median, c.median*0.9, c.median*1.1
		} else {
			r.Error = "max relative error 3e-2 over tolerance 1e-5"
		}
		recs = append(recs, r)
	}
	if err := db.Commit(recs); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestCausalFlag checks that --causal names attention_causal: best finds
// no record of it in an empty database and says which workload it looked for.
func TestCausalFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, op := range []string{"attention", "attention_causal"} {
		code, _, stderr := run(t, "", "best", "--db", path, "--op", op, "--causal", "--shape", "1x2x3x4", "--device", "cpu")
		if code != 1 || !strings.Contains(stderr, "attention_causal 1x2x3x4") {
			t.Errorf("best --op %s --causal: exit %d, %q; want 1 and the workload attention_causal 1x2x3x4", op, code, stderr)
		}
	}
}

func TestBestAndDatabaseCommands(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	seed(t, path)

	code, stdout, stderr := run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "cpu")
	if code != 0 || !strings.Contains(stdout, "vec=1,unroll=4,") || !strings.Contains(stdout, "1.5 µs") {
		t.Fatalf("best: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "64x33", "--json")
	var best bestJSON
	if err := json.Unmarshal([]byte(stdout), &best); code != 0 || err != nil {
		t.Fatalf("best --json: exit %d, %v: %s", code, err, stdout)
	}
	if best.Best.MedianNS != 1500 || best.Shape[1] != 33 || best.Device != "cpu" {
		t.Errorf("best --json = %+v", best)
	}
	if code, _, stderr := run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "64x34"); code != 1 || !strings.Contains(stderr, "no successful record") {
		t.Errorf("best of an untuned shape: exit %d, %q", code, stderr)
	}

	code, stdout, _ = run(t, "", "db", "ls", "--db", path)
	if code != 0 || !strings.Contains(stdout, "64x33") || !strings.Contains(stdout, "vec=1,unroll=4,") {
		t.Errorf("db ls: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = run(t, "", "db", "show", "--db", path, "--op", "softmax", "--shape", "64x33")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 5 || !strings.Contains(lines[1], "vec=1,unroll=4,") || !strings.Contains(lines[4], "wrong_answer") {
		t.Errorf("db show: exit %d, want header, 3 ok fastest first, then the failure:\n%s", code, stdout)
	}

	// export → import into a new database → export gives the same bytes.
	code, exported, _ := run(t, "", "db", "export", "--db", path)
	if code != 0 || strings.Count(exported, "\n") != 4 {
		t.Fatalf("db export: exit %d\n%s", code, exported)
	}
	other := filepath.Join(dir, "b.db")
	if code, stdout, stderr := run(t, exported, "db", "import", "--db", other, "-"); code != 0 || !strings.Contains(stdout, "imported 4 records, 0 already present") {
		t.Fatalf("db import: exit %d, %q %q", code, stdout, stderr)
	}
	file := filepath.Join(dir, "b.jsonl")
	if code, _, stderr := run(t, "", "db", "export", "--db", other, "--out", file); code != 0 {
		t.Fatalf("db export --out: exit %d, %s", code, stderr)
	}
	if again, _ := os.ReadFile(file); string(again) != exported {
		t.Errorf("export after import differs:\n%s\nvs\n%s", again, exported)
	}
	if code, stdout, _ := run(t, "", "db", "import", "--db", other, file); code != 0 || !strings.Contains(stdout, "imported 0 records, 4 already present") {
		t.Errorf("second import: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := run(t, "", "db", "merge", "--db", filepath.Join(dir, "c.db"), path); code != 0 || !strings.Contains(stdout, "merged 4 records") {
		t.Errorf("db merge: exit %d, %q", code, stdout)
	}
	if code, stdout, _ := run(t, "", "db", "prune", "--db", other, "--keep", "1"); code != 0 || !strings.Contains(stdout, "removed 3 records") {
		t.Errorf("db prune: exit %d, %q", code, stdout)
	}
	if code, _, stderr := run(t, "", "db", "import", "--db", other, filepath.Join(dir, "missing.jsonl")); code != 1 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("import of a missing file: exit %d, %q", code, stderr)
	}
}

func TestDatabaseInUseIsAFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	code, _, stderr := run(t, "", "db", "prune", "--db", path, "--keep", "1")
	if code != 1 || !strings.Contains(stderr, "in use by another autotune process") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := run(t, "", args...)
		if code != 0 || !strings.HasPrefix(stdout, "autotune ") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
}
