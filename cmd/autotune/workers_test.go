package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestWorkersFromDatabase counts each measurer's results and suspect
// timings, and flags the one that keeps disagreeing.
func TestWorkersFromDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := tunedb.Workload{Op: "softmax", Shape: []int{4, 24}, DType: "f32", Device: "cpu/test/avx2/2c", Template: "t1"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []tunedb.Record
	add := func(who *measure.Measurer, status tunedb.Status, suspect string) {
		cfg, err := schedule.ParseConfig("v=" + string(rune('a'+len(recs))))
		if err != nil {
			t.Fatal(err)
		}
		r := tunedb.Record{Workload: w, Config: cfg, Status: status, Time: t0.Add(time.Duration(len(recs)) * time.Second), Tool: "test", Measurer: who, Suspect: suspect}
		if status == tunedb.StatusOK {
			r.MedianNS, r.P20NS, r.P80NS, r.SamplesNS = 100, 100, 100, []float64{100}
		} else {
			r.Error = "failed"
		}
		recs = append(recs, r)
	}
	honest := &measure.Measurer{Name: "h1", Host: "a", Tool: "v1"}
	rogue := &measure.Measurer{Name: "rogue", Host: "b", Tool: "v1"}
	tuner := &measure.Measurer{Host: "laptop", Tool: "v1"}
	add(honest, tunedb.StatusOK, "")
	add(honest, tunedb.StatusOK, "")
	add(honest, tunedb.StatusBuildError, "")
	add(rogue, tunedb.StatusOK, "too fast")
	add(rogue, tunedb.StatusOK, "too fast")
	add(rogue, tunedb.StatusOK, "")
	add(tuner, tunedb.StatusOK, "")
	add(nil, tunedb.StatusOK, "")
	if err := db.Commit(recs); err != nil {
		t.Fatal(err)
	}
	db.Close()

	code, stdout, stderr := run(t, "", "workers", "--db", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := [][]string{
		{"MEASURER", "HOST", "TOOL", "RESULTS", "OK", "SUSPECT"},
		{"(tuner)", "?", "?", "1", "1", "0"},
		{"(tuner)", "laptop", "v1", "1", "1", "0"},
		{"h1", "a", "v1", "3", "2", "0"},
		{"rogue", "b", "v1", "3", "3", "2", "distrusted"},
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != len(want) {
		t.Fatalf("workers --db printed\n%s\nwant %d lines", stdout, len(want))
	}
	for i, l := range lines {
		if got := strings.Fields(l); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d: %q, want %q", i, got, want[i])
		}
	}
}
