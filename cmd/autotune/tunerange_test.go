package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/tunedb"
)

// TestTuneRangeEndToEnd tunes a small range of softmax shapes with real
// kernels, generates a package from the database and runs its tests,
// which check that dispatch follows the range's buckets.
func TestTuneRangeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tune.db")
	code, stdout, stderr := run(t, "", "tune", "--op", "softmax", "--shape", "1..8x16", "--device", "cpu", "--db", path,
		"--trials", "40", "--batch", "8", "--remeasure", "0", "--seed", "3", "--json")
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	var s rangeJSON
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, stdout)
	}
	if s.Range != "1..8x16" || s.Trials > 40 || s.Trials < 1 || len(s.Buckets) < 3 {
		t.Fatalf("summary: %+v", s)
	}
	for _, b := range s.Buckets {
		if b.Best == nil || b.Best.MedianNS <= 0 {
			t.Errorf("bucket %v has no winner", b.Shape)
		}
	}
	if len(s.HeldOut) == 0 || s.RegretMedian == nil || *s.RegretMedian < 0 {
		t.Errorf("no regret measured on held-out shapes: %+v", s.HeldOut)
	}
	db, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Ranges()
	db.Close()
	if err != nil || len(rs) != 1 || rs[0].String() != "1..8x16" || len(rs[0].Buckets) != len(s.Buckets) {
		t.Fatalf("the database's ranges: %+v, %v", rs, err)
	}

	mod := filepath.Join(dir, "m")
	out := filepath.Join(mod, "k")
	if code, _, stderr := run(t, "", "gen", "--db", path, "--device", "cpu", "--out", out, "--pkg", "k", "--ops", "softmax"); code != 0 {
		t.Fatalf("gen: exit %d\n%s", code, stderr)
	}
	src, err := os.ReadFile(filepath.Join(out, "dispatch.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "ranges = []shapeRange{") {
		t.Fatalf("dispatch.go has no range:\n%s", src)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "Test", "./k")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test of the generated package: %v\n%s", err, b)
	}
}
