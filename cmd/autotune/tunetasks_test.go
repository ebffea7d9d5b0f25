package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTuneTasksFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tasks", filepath.Join(dir, "missing.json")}, "--tasks: open"},
		{[]string{"--tasks", write("empty.json", "[]")}, "empty.json: the list is empty"},
		{[]string{"--tasks", write("bad.json", "[{")}, "bad.json: not JSON"},
		{[]string{"--tasks", write("op.json", `[{"op": "conv", "shape": "1x2"}]`)}, `op.json: task 1: unknown op "conv"`},
		{[]string{"--tasks", write("shape.json", `[{"op": "gemm", "shape": "4x4"}]`)}, "shape.json: task 1: invalid shape"},
		{[]string{"--tasks", write("weight.json", `[{"op": "gemm", "shape": "4x4x4", "weight": -1}]`)}, "weight.json: task 1 (gemm 4x4x4) has weight -1"},
		{[]string{"--tasks", write("ok.json", `[{"op": "softmax", "shape": "4x4"}]`), "--scheduler", "fifo"}, `--scheduler: unknown scheduler "fifo"`},
		{[]string{"--tasks", filepath.Join(dir, "ok.json"), "--op", "softmax"}, "give no --op or --shape"},
		{[]string{"--tasks", filepath.Join(dir, "ok.json"), "--trials", "0"}, "--trials must be at least 1"},
	} {
		code, stdout, stderr := run(t, "", append([]string{"tune", "--db", filepath.Join(dir, "tune.db")}, tt.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestExampleTasksFilesResolve reads every file of examples/tasks the way
// tune --tasks does.
func TestExampleTasksFilesResolve(t *testing.T) {
	files, _ := filepath.Glob("../../examples/tasks/*.json")
	if len(files) < 3 {
		t.Fatalf("%d example tasks files, want 3 or more", len(files))
	}
	for _, f := range files {
		tws, err := readTasks(f, "cpu")
		if err != nil || len(tws) < 4 {
			t.Errorf("%s: %d tasks, %v", f, len(tws), err)
		}
	}
}

// TestTuneTasksEndToEnd tunes two tiny softmax workloads with real kernels
// in one run, then resumes.
func TestTuneTasksEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	os.WriteFile(file, []byte(`[{"op": "softmax", "shape": "3x17", "weight": 2, "name": "small"}, {"op": "softmax", "shape": "4x9"}]`), 0o644)
	tuneOnce := func(sched string) tasksSummaryJSON {
		t.Helper()
		code, stdout, stderr := run(t, "", "tune", "--tasks", file, "--scheduler", sched, "--db", filepath.Join(dir, "tune.db"),
			"--trials", "6", "--batch", "2", "--remeasure", "0", "--strategy", "random", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "[2/6] small (softmax 3x17): best") || !strings.Contains(stderr, "weighted total") {
			t.Errorf("progress does not name the task and the weighted total:\n%s", stderr)
		}
		var s tasksSummaryJSON
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		return s
	}
	s := tuneOnce("gradient")
	if s.Trials != 6 || len(s.Tasks) != 2 || s.TotalNS <= 0 || s.Missing != 0 {
		t.Fatalf("summary %+v", s)
	}
	trials, share, total := 0, 0.0, 0.0
	for _, x := range s.Tasks {
		trials += x.Trials
		share += x.Share
		total += x.Weight * x.Best.MedianNS
	}
	if trials != 6 || share < 0.999 || share > 1.001 || total != s.TotalNS || s.Tasks[0].Weight != 2 || s.Tasks[0].Name != "small" {
		t.Errorf("tasks %+v: trials add to %d, shares to %v, total %v vs %v", s.Tasks, trials, share, total, s.TotalNS)
	}
	again := tuneOnce("round-robin")
	if again.Tasks[0].Resumed+again.Tasks[1].Resumed != 6 || again.Trials != 6 {
		t.Errorf("rerun: %+v; want 6 resumed and 6 new", again)
	}
}
