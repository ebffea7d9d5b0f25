package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/tunedb"
)

// Commands that only read never create a database: a mistyped path is an
// error, and leaves no file or directory behind.
func TestReadsOfAMissingDatabase(t *testing.T) {
	workload := []string{"--op", "softmax", "--shape", "64x33", "--device", "cpu"}
	for _, tc := range []struct {
		name string
		args func(db, dir string) []string
	}{
		{"best", func(db, _ string) []string { return append([]string{"best", "--db", db}, workload...) }},
		{"db ls", func(db, _ string) []string { return []string{"db", "ls", "--db", db} }},
		{"db show", func(db, _ string) []string { return append([]string{"db", "show", "--db", db}, workload...) }},
		{"db export", func(db, _ string) []string { return []string{"db", "export", "--db", db} }},
		{"db export --out", func(db, dir string) []string {
			return []string{"db", "export", "--db", db, "--out", filepath.Join(dir, "out.jsonl")}
		}},
		{"db prune", func(db, _ string) []string { return []string{"db", "prune", "--db", db, "--keep", "1"} }},
		{"simulate", func(db, _ string) []string {
			return []string{"simulate", "--db", db, "--op", "softmax", "--shape", "64x33"}
		}},
		{"db ls of AUTOTUNE_DB", func(string, string) []string { return []string{"db", "ls"} }},
		{"report", func(db, _ string) []string { return []string{"report", "--db", db} }},
		{"report --out", func(db, dir string) []string {
			return []string{"report", "--db", db, "--out", filepath.Join(dir, "report.html")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sub", "missing.db")
			t.Setenv("AUTOTUNE_DB", path)
			code, stdout, stderr := run(t, "", tc.args(path, dir)...)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no database at "+path) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line saying there is no database at %s", code, stdout, stderr, path)
			}
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
				t.Errorf("the command left %v behind (%v), want nothing", entries, err)
			}
		})
	}
}

// best of a device with no records says to tune it and what --fallback
// would answer; with --fallback it answers the template's default, as a
// run-time lookup would, and says so.
func TestBestOfAnUntunedDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	seed(t, path) // cpu records only
	workload := []string{"best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "sm_86"}
	code, stdout, stderr := run(t, "", workload...)
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "tune it first; --fallback gives the template's default config") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line saying to tune it, or use --fallback", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, "", append(workload, "--fallback", "--json")...)
	var got bestJSON
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || got.Rule != "default" || got.Best.Config.Len() == 0 || got.TunedShape != nil {
		t.Errorf("--fallback: exit %d, %v, %+v, stderr %q; want the default config", code, err, got, stderr)
	}
}

// --fallback answers an untuned shape with the nearest tuned one's winner.
func TestBestFallbackNearest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	seed(t, path) // softmax 64x33 on this machine
	code, stdout, stderr := run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "60x40", "--device", "cpu")
	if code != 1 || !strings.Contains(stderr, "the nearest tuned shape, 64x33") {
		t.Errorf("without --fallback: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "60x40", "--device", "cpu", "--fallback")
	if code != 0 || !strings.Contains(stdout, "rule      nearest 64x33") || !strings.Contains(stdout, "vec=1,unroll=4,") || !strings.Contains(stdout, "at 64x33") {
		t.Errorf("--fallback: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A file with no line ends, such as /dev/zero, is refused after its first
// 16 MiB instead of being read for ever, and simulate leaves no temporary
// directory behind.
func TestEndlessLine(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db := filepath.Join(t.TempDir(), "tune.db")
	for _, args := range [][]string{
		{"db", "import", "--db", db, "/dev/zero"},
		{"simulate", "--records", "/dev/zero", "--op", "softmax", "--shape", "64x33"},
		{"simulate", "--records", landscape, "--prior", "/dev/zero", "--op", "softmax", "--shape", "1024x1024"},
	} {
		code, stdout, stderr := run(t, "", args...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "/dev/zero: tunedb: ") ||
			!strings.Contains(stderr, "line 1 is longer than 16 MiB") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and one line saying line 1 is too long", args, code, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("left in the temporary directory: %v", entries)
	}
}

// db import and merge check a record of the current template against the
// template's knob space on the machine that measured it.
func TestImportChecksTheSpace(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	seed(t, src)
	_, exported, _ := run(t, "", "db", "export", "--db", src)
	var good string
	for _, l := range strings.SplitAfter(exported, "\n") {
		if strings.Contains(l, `"vec":1,"unroll":2,`) {
			good = l
		}
	}
	if good == "" {
		t.Fatalf("no record of vec=1,unroll=2 in\n%s", exported)
	}
	for _, tc := range []struct {
		name, line, want string
	}{
		{"value not in the space", strings.Replace(good, `"unroll":2`, `"unroll":3`, 1), "unroll=3 is not one of"},
		{"unknown knob", strings.Replace(good, `"unroll":2`, `"unrol":2`, 1), "unknown knob unrol"},
		{"missing knob", strings.Replace(good, `"unroll":2,`, ``, 1), "has no value for knob unroll"},
		{"knob order", strings.Replace(good, `"vec":1,"unroll":2`, `"unroll":2,"vec":1`, 1), "not in the knob order"},
		{"constraint", strings.Replace(good, `"rows_per_chunk":1`, `"rows_per_chunk":4`, 1), "violates constraint rows_per_chunk_needs_threads"},
		{"shape of another op", strings.Replace(good, `"shape":[64,33]`, `"shape":[64,33,2]`, 1), "3 dimensions, want RxC"},
		{"unknown machine", strings.Replace(good, `"device":"cpu/`, `"device":"tpu/`, 1), "cannot rebuild the target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.line == good {
				t.Fatal("the test did not change the record")
			}
			db := filepath.Join(t.TempDir(), "tune.db")
			code, _, stderr := run(t, good+tc.line, "db", "import", "--db", db, "-")
			if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "line 2: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and line 2 refused with %q", code, stderr, tc.want)
			}
		})
	}
	// A record of another template version is not checked: its space is
	// not this autotune's.
	old := strings.Replace(strings.Replace(good, `"unroll":2`, `"unroll":3`, 1), `"template":"`, `"template":"old-`, 1)
	db := filepath.Join(t.TempDir(), "tune.db")
	if code, stdout, stderr := run(t, old, "db", "import", "--db", db, "-"); code != 0 || !strings.Contains(stdout, "imported 1 records") {
		t.Errorf("import of another template version: exit %d, %q %q", code, stdout, stderr)
	}
	// A fingerprint has no cache sizes: a GEMM record whose B panels
	// fit the L3 of the machine that measured it, not the fallback L2 of
	// a machine of unknown caches, is imported (it was refused).
	gemm := `{"schema":4,"workload":{"op":"gemm","shape":[1024,1024,1024],"dtype":"bf16","device":"cpu/AMD EPYC/sse4.2+avx2+fma+avx512+avx512bf16/2c",` +
		`"template":"` + gemm.Template.Version + `","toolchain":"go1.26.8"},` +
		`"config":{"vec":16,"mr":8,"nr_vecs":2,"kc":256,"mc":96,"nc":512,"pack_b":true,"unroll":1,"threads":2,"micro":"asm","split":"m","chunks":1,"pack_a":true,"convert":"dot"},` +
		`"status":"ok","samples_ns":[4550000],"median_ns":4550000,"p20_ns":4550000,"p80_ns":4550000,"time":"2026-11-28T10:01:46Z","tool":"devel"}` + "\n"
	db = filepath.Join(t.TempDir(), "tune.db")
	if code, stdout, stderr := run(t, gemm, "db", "import", "--db", db, "-"); code != 0 || !strings.Contains(stdout, "imported 1 records") {
		t.Errorf("import of a GEMM record with a B panel larger than the fallback L2: exit %d, %q %q", code, stdout, stderr)
	}
	db = filepath.Join(t.TempDir(), "tune.db")
	// Merge checks the same way.
	var r tunedb.Record
	if err := json.Unmarshal([]byte(strings.Replace(good, `"unroll":2`, `"unroll":3`, 1)), &r); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.db")
	b, err := tunedb.Open(bad, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit([]tunedb.Record{r}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if code, _, stderr := run(t, "", "db", "merge", "--db", db, bad); code != 1 || !strings.Contains(stderr, "unroll=3 is not one of") {
		t.Errorf("merge of a record outside the space: exit %d, %q", code, stderr)
	}
}

// A record with a flipped byte: db check names it and exits 1, export
// fails, and export --salvage exports the rest.
func TestCheckAndSalvage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	seed(t, path)
	_, before, _ := run(t, "", "db", "export", "--db", path)
	if code, _, stderr := run(t, "", "db", "check", "--db", path); code != 0 || !strings.Contains(stderr, "no damage found") {
		t.Fatalf("check of a sound database: exit %d, %q", code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf(`{"schema":%d`, tunedb.SchemaVersion)
	i := strings.Index(string(b), head+",")
	if i < 0 {
		t.Fatal("no record found in the file")
	}
	b[i+len(head)] = ';'
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "", "db", "check", "--db", path)
	if code != 1 || strings.Count(stdout, "\n") != 1 || !strings.Contains(stdout, `workload "softmax 64x33 f32`) ||
		!strings.Contains(stdout, "invalid character ';'") || !strings.Contains(stderr, "1 damaged records or workloads") {
		t.Errorf("check of a damaged database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if code, _, stderr := run(t, "", "db", "export", "--db", path); code != 1 || !strings.Contains(stderr, "db check") {
		t.Errorf("export of a damaged database: exit %d, %q; want 1 and a pointer to db check", code, stderr)
	}
	code, stdout, stderr = run(t, "", "db", "export", "--db", path, "--salvage")
	if code != 0 || strings.Count(stdout, "\n") != strings.Count(before, "\n")-1 || !strings.Contains(stderr, "left out 1 damaged") {
		t.Errorf("export --salvage: exit %d, %d lines of %d, stderr %q", code, strings.Count(stdout, "\n"), strings.Count(before, "\n"), stderr)
	}
}

// TestReadOnlyDatabase: a database its user may read but not write is
// read by best and db ls, and refused by tune in one line, exit 1.
// Permissions do not bind root, so the test needs another user.
func TestReadOnlyDatabase(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write anything")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tune.db")
	seed(t, path) // softmax 64x33 on this machine
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	for _, args := range [][]string{
		{"best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "cpu"},
		{"db", "ls", "--db", path},
	} {
		if code, stdout, stderr := run(t, "", args...); code != 0 || !strings.Contains(stdout, "64x33") {
			t.Errorf("%v on a read-only database: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	code, _, stderr := run(t, "", "--op", "softmax", "--shape", "64x33", "--db", path, "--trials", "1")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "permission denied") {
		t.Errorf("tune into a read-only database: exit %d, stderr %q; want 1 and one line", code, stderr)
	}
}
