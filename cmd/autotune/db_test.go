package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// A CUDA device cannot be tuned yet, so best does not tell to tune it.
func TestBestOfACUDADevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	seed(t, path)
	code, stdout, stderr := run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "sm_86")
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no CUDA backend yet") ||
		strings.Contains(stderr, "tune it first") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and one line saying there is no CUDA backend yet", code, stdout, stderr)
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
