package tune

import (
	"context"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/tunedb"
)

// taskSet is three softmax workloads of the test space (12 configs each) in
// one database, the last weighted heavily.
func taskSet(t *testing.T, db *tunedb.DB, m Measurer, scheduler string, trials int) TaskSet {
	ts := TaskSet{Scheduler: scheduler, Trials: trials, Weights: []float64{1, 1, 100}}
	for _, n := range []int{4, 8, 16} {
		task := testTask(t, db, m)
		task.Shape = []int{n, n}
		task.Strategy = "random"
		ts.Tasks = append(ts.Tasks, task)
	}
	return ts
}

func TestRunTasksBudgetWarmUpAndResume(t *testing.T) {
	for _, sched := range []string{"gradient", "round-robin"} {
		t.Run(sched, func(t *testing.T) {
			db := openDB(t)
			m := &fakeMeasurer{}
			ts := taskSet(t, db, m, sched, 20)
			var seen []TaskProgress
			ts.Observer = func(p TaskProgress) { seen = append(seen, p) }
			s, err := RunTasks(context.Background(), ts)
			if err != nil {
				t.Fatal(err)
			}
			if s.Trials != 20 || len(m.measured) != 20 {
				t.Fatalf("trials %d, measured %d; want 20", s.Trials, len(m.measured))
			}
			// Warm-up: one batch per task, in order.
			for i := range 3 {
				if seen[i].Task != i {
					t.Errorf("batch %d went to task %d, want %d (warm-up)", i, seen[i].Task, i)
				}
			}
			sum, records := 0, 0
			for i, x := range s.Tasks {
				sum += x.Trials
				recs, _ := db.Records(Workload(ts.Tasks[i].Template, ts.Tasks[i].Shape, ts.Tasks[i].Target))
				records += len(recs)
				if x.Best == nil {
					t.Errorf("task %d has no best", i)
				}
			}
			if sum != 20 || records != 20 {
				t.Errorf("tasks' trials add up to %d, records to %d; want 20", sum, records)
			}
			last := seen[len(seen)-1]
			if last.Trials != 20 || last.Missing != 0 || last.Total != s.Total || s.Total <= 0 {
				t.Errorf("last progress %+v, summary total %v", last, s.Total)
			}
			want := 1*s.Tasks[0].Best.MedianNS + 1*s.Tasks[1].Best.MedianNS + 100*s.Tasks[2].Best.MedianNS
			if s.Total != want {
				t.Errorf("total %v, want Σ weight·best = %v", s.Total, want)
			}
			switch sched {
			case "gradient":
				if s.Batches[2] <= s.Batches[0] || s.Batches[2] <= s.Batches[1] {
					t.Errorf("gradient gave batches %v; want most to the task of weight 100", s.Batches)
				}
			case "round-robin":
				if s.Batches[0] != 4 || s.Batches[1] != 3 || s.Batches[2] != 3 {
					t.Errorf("round-robin gave batches %v, want [4 3 3]", s.Batches)
				}
			}

			// A rerun resumes every task: it measures the 36-20 configs
			// left and stops when every space is exhausted.
			m2 := &fakeMeasurer{}
			s2, err := RunTasks(context.Background(), taskSet(t, db, m2, sched, 100))
			if err != nil {
				t.Fatal(err)
			}
			resumed := 0
			for _, x := range s2.Tasks {
				resumed += x.Resumed
				if !x.Exhausted {
					t.Errorf("a task is not exhausted: %+v", x)
				}
			}
			if s2.Trials != 16 || len(m2.measured) != 16 || resumed != 20 {
				t.Errorf("rerun: trials %d, measured %d, resumed %d; want 16, 16, 20", s2.Trials, len(m2.measured), resumed)
			}
		})
	}
}

func TestRunTasksInterrupted(t *testing.T) {
	db := openDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &fakeMeasurer{cancel: cancel} // cancels inside the second batch
	s, err := RunTasks(ctx, taskSet(t, db, m, "gradient", 20))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.Trials != 3 {
		t.Errorf("interrupted %v after %d trials; want true after 3 (a batch and one result)", s.Interrupted, s.Trials)
	}
	n := 0
	for _, task := range taskSet(t, db, m, "", 1).Tasks {
		recs, _ := db.Records(Workload(task.Template, task.Shape, task.Target))
		n += len(recs)
	}
	if n != 3 {
		t.Errorf("%d records kept, want 3", n)
	}
}

func TestRunTasksErrors(t *testing.T) {
	db := openDB(t)
	for _, tt := range []struct {
		name string
		edit func(*TaskSet)
		want string
	}{
		{"budget", func(ts *TaskSet) { ts.Trials = 0 }, "tune: the trial budget must be at least 1"},
		{"scheduler", func(ts *TaskSet) { ts.Scheduler = "fifo" }, `tune: tasks: unknown scheduler "fifo" (known: gradient, round-robin, ansor)`},
		{"weights", func(ts *TaskSet) { ts.Weights = []float64{1} }, "tune: one weight per task"},
		{"none", func(ts *TaskSet) { ts.Tasks = nil }, "tune: no tasks"},
	} {
		ts := taskSet(t, db, &fakeMeasurer{}, "", 5)
		tt.edit(&ts)
		if _, err := RunTasks(context.Background(), ts); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestRunTasksShareModel checks that the tasks of one op share one cost
// model within a run: a batch of one task trains the model that guides the
// other, whose own workload has no record yet.
func TestRunTasksShareModel(t *testing.T) {
	db := openDB(t)
	ts := TaskSet{Trials: 20}
	for _, n := range []int{4, 8} {
		task := testTask(t, db, &fakeMeasurer{})
		task.Shape = []int{n, n}
		task.Strategy, task.Model = "evolutionary", "gbt"
		ts.Tasks = append(ts.Tasks, task)
	}
	other := testTask(t, db, &fakeMeasurer{})
	other.Template.Op.Name, other.Strategy, other.Model = "gemm", "evolutionary", "gbt"
	ts.Tasks = append(ts.Tasks, other)

	runs, err := openTasks(ts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	space := ts.Tasks[1].Space
	var feats [][]float64
	for i := range space.Size() {
		feats = append(feats, runs[1].learn.features(space.At(i)))
	}
	if p := runs[1].learn.model.Predict(feats); p != nil {
		t.Fatalf("task 1's model predicts %v before anything was measured", p)
	}
	if _, err := runs[0].step(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	if p := runs[1].learn.model.Predict(feats); len(p) != len(feats) {
		t.Errorf("after a batch of task 0, task 1's model predicts %v; want it trained on task 0's records", p)
	}
	if p := runs[2].learn.model.Predict(feats); p != nil {
		t.Errorf("the task of another op got a model trained on softmax records: %v", p)
	}
	if _, err := runs[1].step(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	for _, r := range runs[0].learn.shared.rows {
		groups[r.Group]++
	}
	if len(groups) != 2 || groups[runs[0].w.Key()] != 2 || groups[runs[1].w.Key()] != 2 {
		t.Errorf("task 0's model is trained on rows of %v; want a batch (2) of each softmax task", groups)
	}
}
