package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rangeLandscape is the recorded range landscape: softmax at row counts
// from 1 to 4096, of 1024 columns.
const rangeLandscape = "../../tune/lab/testdata/ranges/softmax-rows-x1024-epyc"

// TestSimulateRange replays range tuning on the recorded range landscape
// and reads the report back.
func TestSimulateRange(t *testing.T) {
	args := []string{"simulate", "--range", rangeLandscape, "--strategy", "random", "--seeds", "2", "--alone", "16", "--json"}
	code, stdout, stderr := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "seed "); n != 2 {
		t.Errorf("%d progress lines for 2 seeds:\n%s", n, stderr)
	}
	var r simRangeJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Op != "softmax" || r.Lo[0] != 1 || r.Hi[0] != 4096 || r.Strategy != "random" || r.Alone != 16 || len(r.Runs) != 2 || r.Median == nil {
		t.Fatalf("report %+v", r)
	}
	for _, run := range r.Runs {
		if run.Trials > r.Budget || len(run.Buckets) < 2 || run.Fraction <= 0 {
			t.Errorf("run %+v of a budget of %d", run, r.Budget)
		}
	}
}

func TestSimulateRangeErrors(t *testing.T) {
	empty := t.TempDir()
	gap := t.TempDir() // the range's landscape but for one shape of its ladder
	files, err := filepath.Glob(filepath.Join(rangeLandscape, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no landscape in %s (%v)", rangeLandscape, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "-3x1024.jsonl") {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(gap, filepath.Base(f)), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no landscape", []string{"--range", empty}, 2, "no landscape (*.jsonl) in it"},
		{"ladder shape missing", []string{"--range", gap}, 1, "3x1024 is not recorded"},
		{"two searches", []string{"--range", rangeLandscape, "--strategy", "evolutionary,random"}, 2, "give one --strategy"},
		{"op too", []string{"--range", rangeLandscape, "--op", "softmax"}, 2, "no --db, --records"},
		{"no alone", []string{"--range", rangeLandscape, "--alone", "0"}, 2, "--alone must be at least 1"},
		{"negative budget", []string{"--range", rangeLandscape, "--budget", "-1"}, 2, "--budget must not be negative"},
		{"alone without range", []string{"--records", "x.jsonl", "--op", "softmax", "--shape", "1024x1024", "--alone", "8"}, 2, "--alone goes with --range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"simulate"}, tc.args...)...)
			lines := strings.Count(stderr, "\n")
			if code == 1 {
				lines-- // the line saying what it simulates comes first
			}
			if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) || lines != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
