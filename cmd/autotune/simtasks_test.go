package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twoLandscapes are the two Xeon softmax landscapes, as --records takes them.
const twoLandscapes = "../../tune/lab/testdata/softmax-1024x1024.jsonl,../../tune/lab/testdata/softmax-512x2048.jsonl"

func writeTasks(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tasks.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSimulateTasks replays two recorded softmax workloads through every
// scheduler with the same seeds.
func TestSimulateTasks(t *testing.T) {
	file := writeTasks(t, `[{"op": "softmax", "shape": "1024x1024", "name": "light"}, {"op": "softmax", "shape": "512x2048", "weight": 8}]`)
	args := []string{"simulate", "--tasks", file, "--records", twoLandscapes, "--seeds", "2", "--budget", "64", "--batch", "8", "--json"}
	code, stdout, stderr := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stderr, " seed "); n != 6 {
		t.Errorf("%d progress lines for 3 schedulers × 2 seeds:\n%s", n, stderr)
	}
	var r simTasksJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.Search != "analytic/gbt" || r.Budget != 64 || r.Batch != 8 || r.Baseline != "round-robin" || len(r.Workloads) != 2 || len(r.Schedulers) != 3 {
		t.Fatalf("report %+v", r)
	}
	want := r.Workloads[0].BestNS + 8*r.Workloads[1].BestNS
	if r.BestTotal != want || r.Workloads[0].Name != "light" {
		t.Errorf("best total %v, want Σ weight·best = %v; workloads %+v", r.BestTotal, want, r.Workloads)
	}
	for _, s := range r.Schedulers {
		if len(s.Runs) != 2 || s.Final == nil || *s.Final.Median < r.BestTotal || s.ToBaseline == nil {
			t.Errorf("%s: %+v", s.Name, s)
			continue
		}
		for _, n := range []string{"16", "32", "48", "64"} {
			if x := s.TotalAt[n]; x == nil || *x.Median < r.BestTotal {
				t.Errorf("%s: total at %s is %v, want one of at least the best total", s.Name, n, x)
			}
		}
		for _, run := range s.Runs {
			if run.Trials[len(run.Trials)-1] != 64 || run.Batches[0]+run.Batches[1] != 8 {
				t.Errorf("%s seed %d: trials %v, batches %v; want 64 trials in 8 batches", s.Name, run.Seed, run.Trials, run.Batches)
			}
		}
	}
	rr, grad := r.Schedulers[1], r.Schedulers[0]
	if rr.Name != "round-robin" || rr.Runs[0].Batches[0] != 4 || *rr.ToBaseline.Median > 64 {
		t.Errorf("round-robin: batches %v, trials to its own final %v; want [4 4] and at most the budget", rr.Runs[0].Batches, *rr.ToBaseline.Median)
	}
	if grad.Batches[1] <= grad.Batches[0] {
		t.Errorf("gradient gave batches %v; want more to the task of weight 8", grad.Batches)
	}

	// The table, and the same figures every time.
	code, table, stderr := run(t, "", args[:len(args)-1]...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"tasks      2 workloads of", "trials to round-robin's final", "@16", "light (softmax 1024x1024)", "GRADIENT"} {
		if !strings.Contains(table, w) {
			t.Errorf("no %q in\n%s", w, table)
		}
	}
	if _, again, _ := run(t, "", args...); again != stdout {
		t.Errorf("a second run printed something else")
	}
}

func TestSimulateTasksErrors(t *testing.T) {
	file := writeTasks(t, `[{"op": "softmax", "shape": "1024x1024"}, {"op": "softmax", "shape": "64x64", "name": "small"}]`)
	ok := writeTasks(t, `[{"op": "softmax", "shape": "1024x1024"}]`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"not recorded", []string{"--tasks", file, "--records", twoLandscapes}, 1, "task 2 (small (softmax 64x64)): no records of softmax 64x64 f32"},
		{"no recording", []string{"--tasks", ok}, 2, "give --db PATH or --records FILE.jsonl,... holding every workload of"},
		{"two searches", []string{"--tasks", ok, "--records", twoLandscapes, "--strategy", "evolutionary,random"}, 2, "give one --strategy"},
		{"unknown scheduler", []string{"--tasks", ok, "--records", twoLandscapes, "--scheduler", "gradient,fifo"}, 2, `unknown scheduler "fifo"`},
		{"at past the budget", []string{"--tasks", ok, "--records", twoLandscapes, "--budget", "32", "--at", "16,64"}, 2, "--at: 64 is past the budget of 32 trials"},
		{"at out of order", []string{"--tasks", ok, "--records", twoLandscapes, "--at", "32,16"}, 2, "increasing order"},
		{"op too", []string{"--tasks", ok, "--records", twoLandscapes, "--op", "softmax"}, 2, "no --op, --shape"},
		{"scheduler without tasks", []string{"--records", twoLandscapes, "--op", "softmax", "--shape", "1024x1024", "--scheduler", "gradient"}, 2, "--scheduler and --at go with --tasks"},
		{"bad file", []string{"--tasks", writeTasks(t, `[{"op": "softmax"}]`), "--records", twoLandscapes}, 2, "task 1 (softmax) has no shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append([]string{"simulate"}, tc.args...)...)
			if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}
