package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/tasks"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
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
		{[]string{"--tasks", write("type.json", `{"tasks": [{"op": "softmax", "shape": 4}]}`)}, "type.json: line 1: shape must be a string, not a number"},
		{[]string{"--tasks", write("object.json", `{"op": "softmax", "shape": "4x4"}`)}, `object.json: unknown field "op"`},
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

// TestTasksFileForms: a list and an object holding it name the same tasks.
func TestTasksFileForms(t *testing.T) {
	dir := t.TempDir()
	const list = `[{"op": "softmax", "shape": "4x4", "weight": 2}, {"op": "attention", "shape": "1x1x8x8", "causal": true}]`
	var got [][]taskWorkload
	for name, text := range map[string]string{"list.json": list, "object.json": `{"tasks": ` + list + `}`} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		tws, err := readTasks(p, "cpu")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = append(got, tws)
	}
	for _, tws := range got {
		if len(tws) != 2 || tws[0].spec.Weight != 2 || tws[0].w.op.Name != "softmax" || tws[1].w.op.Name != "attention_causal" {
			t.Errorf("tasks %+v", tws)
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
			"--trials", "6", "--batch", "2", "--remeasure", "0", "--strategy", "random", "--json", "--baseline="+strconv.FormatBool(sched == "gradient"))
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
	// Each best was timed against plain Go, side by side.
	for _, x := range s.Tasks {
		if x.Speedup == nil || x.PlainGoNS == nil || x.TunedNS == nil || *x.Speedup != *x.PlainGoNS / *x.TunedNS || x.SpeedupNote != "" {
			t.Errorf("%s %v: speedup %v = %v / %v, note %q; want a ratio of two medians", x.Op, x.Shape, x.Speedup, x.PlainGoNS, x.TunedNS, x.SpeedupNote)
		}
	}
	again := tuneOnce("round-robin")
	if again.Tasks[0].Resumed+again.Tasks[1].Resumed != 6 || again.Trials != 6 {
		t.Errorf("rerun: %+v; want 6 resumed and 6 new", again)
	}
	if x := again.Tasks[0]; x.Speedup != nil || x.SpeedupNote != "" {
		t.Errorf("--baseline=false: speedup %v, note %q; want neither", x.Speedup, x.SpeedupNote)
	}
}

// TestPlainGoLeftOut: the end of tune --tasks leaves out, with a note, the
// workloads whose plain-Go baseline it cannot time here or fairly; none of
// these cases runs a bench.
func TestPlainGoLeftOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tasks.json")
	os.WriteFile(file, []byte(`[{"op": "gemm", "shape": "1024x1024x2048"}, {"op": "softmax", "shape": "8x8"}, {"op": "softmax", "shape": "4x4"}]`), 0o644)
	tws, err := readTasks(file, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	best := &tunedb.Record{MedianNS: 1000}
	s := tune.TaskSetSummary{Tasks: []tune.Summary{{Progress: tune.Progress{Best: best}}, {Progress: tune.Progress{Best: best}}, {}}}
	std := &stdio{errs: io.Discard}
	for _, tc := range []struct {
		name string
		edit func(*tuneOptions, *tune.TaskSetSummary)
		want []string
	}{
		{"remote", func(o *tuneOptions, _ *tune.TaskSetSummary) { o.nats.url = "nats://127.0.0.1:4222" },
			[]string{"measured by remote workers", "measured by remote workers", ""}},
		{"large", func(_ *tuneOptions, s *tune.TaskSetSummary) { s.Tasks = []tune.Summary{s.Tasks[0], {}, {}} },
			[]string{"4.29e+09 FLOPs a call, more than the 1e+09 timed at the end of a run; autotune bench times it", "", ""}},
		{"interrupted", func(_ *tuneOptions, s *tune.TaskSetSummary) { s.Interrupted = true },
			[]string{"the run was interrupted", "the run was interrupted", ""}},
		{"off", func(o *tuneOptions, _ *tune.TaskSetSummary) { o.baseline = false }, []string{"", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, s := tuneOptions{baseline: true}, s
			tc.edit(&o, &s)
			vs := timePlainGo(context.Background(), std, o, tws, s)
			for i, v := range vs {
				if v.timed() || !strings.Contains(v.note, tc.want[i]) || (tc.want[i] == "") != (v.note == "") {
					t.Errorf("task %d: %+v; want a note with %q", i, v, tc.want[i])
				}
			}
		})
	}
}

// TestTasksContention: tune --tasks says how disturbed its measurements
// were, as tune does, for the tasks together and (--json) each.
func TestTasksContention(t *testing.T) {
	tws := []taskWorkload{
		{spec: tasks.Spec{Name: "small"}, w: workload{op: kernels.Op{Name: "softmax"}, shape: []int{3, 17}}},
		{w: workload{op: kernels.Op{Name: "softmax"}, shape: []int{4, 9}}},
	}
	s := tune.TaskSetSummary{
		Tasks:   []tune.Summary{{Evidenced: 10, Contended: 2, Remeasures: 1}, {Evidenced: 6, Contended: 5, Remeasures: 3, Unsettled: true}},
		Weights: []float64{1, 1}, Batches: []int{1, 1},
	}
	var out strings.Builder
	printTasksSummary(&out, tws, s, make([]plainGo, 2))
	for _, want := range []string{
		"contention: 7 of 16 measurements mostly disturbed; leaders measured again 4×\n",
		"the winners of softmax 4x9 were still mostly disturbed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	j := tasksJSON(tws, tuneOptions{}, s, make([]plainGo, 2))
	if want := (contentionJSON{Evidenced: 16, Contended: 7, Remeasures: 4, Unsettled: true}); !reflect.DeepEqual(j.Contention, want) {
		t.Errorf("--json contention %+v, want %+v", j.Contention, want)
	}
	if want := (contentionJSON{Evidenced: 6, Contended: 5, Remeasures: 3, Unsettled: true}); !reflect.DeepEqual(j.Tasks[1].Contention, want) {
		t.Errorf("--json contention of the second task %+v, want %+v", j.Tasks[1].Contention, want)
	}
}

// TestReadTasksRange: a task whose shape is a range stands for the
// range's first buckets, a task each, sharing its weight; a bad range is
// a usage error naming the task.
func TestReadTasksRange(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	os.WriteFile(file, []byte(`[{"op": "softmax", "shape": "1..64x128", "weight": 3}, {"op": "softmax", "shape": "4x9"}]`), 0o644)
	tws, err := readTasks(file, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tw := range tws {
		r := ""
		if tw.rng != nil {
			r = tw.rng.String()
		}
		got = append(got, fmt.Sprintf("%s w%g %s", kernels.FormatShape(tw.w.shape), tw.spec.Weight, r))
	}
	want := []string{"1x128 w1 1..64x128", "8x128 w1 1..64x128", "64x128 w1 1..64x128", "4x9 w1 "}
	if !slices.Equal(got, want) {
		t.Errorf("tasks %q, want %q", got, want)
	}
	os.WriteFile(file, []byte(`[{"op": "softmax", "shape": "4x9"}, {"op": "softmax", "shape": "64..1x128"}]`), 0o644)
	if _, err := readTasks(file, "cpu"); err == nil || !strings.Contains(err.Error(), "task 2: invalid shape range") {
		t.Errorf("a reversed range: %v", err)
	}
}

// hashMeasurer times a config at a shape by a hash of both: every shape
// has winners of its own, so dispatching one shape to another's winner
// costs something. It counts its measurements.
type hashMeasurer struct{ n int }

func (m *hashMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	var out []measure.Result
	for _, c := range b.Configs {
		m.n++
		h := fnv.New32a()
		fmt.Fprint(h, c, b.Shape)
		ns := 1000 + float64(h.Sum32()%1000)
		out = append(out, measure.Result{Config: c, Status: measure.StatusOK, SamplesNS: []float64{ns}, MedianNS: ns, P20NS: ns, P80NS: ns})
	}
	return out, ctx.Err()
}

// TestTuneTasksRange: a range line of a tasks file behaves as the range
// on the command line: after the scheduler tuned its first buckets, the
// regret is measured on held-out shapes, buckets are added, and the whole
// run stays within --trials.
func TestTuneTasksRange(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	os.WriteFile(file, []byte(`[{"op": "softmax", "shape": "1..64x32"}, {"op": "softmax", "shape": "4x9"}]`), 0o644)
	tws, err := readTasks(file, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	db, err := tunedb.Open(filepath.Join(dir, "tune.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := tuneOptions{trials: 200, strategy: "random", batch: 8, seed: 1, scheduler: "round-robin"}
	m := &hashMeasurer{}
	ts := tune.TaskSet{Scheduler: o.scheduler}
	for _, tw := range tws {
		ts.Tasks = append(ts.Tasks, newTuneTask(o, tw.w, tw.tmpl, "", m, db))
		ts.Weights = append(ts.Weights, tw.spec.Weight)
	}
	var errs bytes.Buffer
	s, rs, err := tuneTaskSet(context.Background(), &stdio{out: io.Discard, errs: &errs}, o, db, tws, ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Range != "1..64x32" {
		t.Fatalf("ranges %+v", rs)
	}
	r := rs[0]
	if len(r.HeldOut) == 0 || len(r.Buckets) <= 3 || r.Trials == 0 {
		t.Errorf("range %+v: no regret measured or no bucket added to the first 3", r)
	}
	if s.Trials+r.Trials > o.trials || m.n != s.Trials+r.Trials {
		t.Errorf("the tasks spent %d and the range %d of %d trials; %d measured", s.Trials, r.Trials, o.trials, m.n)
	}
	saved, err := db.Ranges()
	if err != nil || len(saved) != 1 || len(saved[0].HeldOut) != len(r.HeldOut) || len(saved[0].Buckets) != len(r.Buckets) {
		t.Errorf("saved ranges %+v, %v", saved, err)
	}
	var out bytes.Buffer
	printRange(&out, r)
	if !regexp.MustCompile(`\nregret +median [0-9.]+%`).MatchString(out.String()) {
		t.Errorf("the summary says no regret:\n%s", out.String())
	}
}
