package tasks

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestWarmUpVisitsEveryTaskFirst(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			s := k.New()
			tasks := make([]Status, 5)
			for i := range tasks {
				tasks[i] = Status{Weight: float64(10 - i), Op: "gemm", FLOPs: 1e6}
			}
			tasks[2].Done = true // exhausted before it started: skipped
			var order []int
			for range 4 {
				i := s.Next(tasks)
				order = append(order, i)
				tasks[i].Bests = append(tasks[i].Bests, 1000)
			}
			want := []int{0, 1, 3, 4}
			for j := range want {
				if order[j] != want[j] {
					t.Fatalf("warm-up order %v, want %v", order, want)
				}
			}
		})
	}
}

func TestGradientPicksLargestExpectedReduction(t *testing.T) {
	for _, tt := range []struct {
		name  string
		tasks []Status
		want  int
	}{
		{"weight", []Status{
			{Weight: 1, Op: "a", Bests: []float64{100, 90, 80, 70, 60}},
			{Weight: 3, Op: "b", Bests: []float64{100, 90, 80, 70, 60}},
		}, 1},
		{"slope", []Status{
			{Weight: 1, Op: "a", Bests: []float64{30, 30, 30, 30, 30, 30, 30, 30, 30, 30}},
			{Weight: 1, Op: "b", Bests: []float64{100, 100, 90, 50, 20}},
		}, 1},
		{"latency", []Status{ // flat, same batches: the larger latency has more to lose
			{Weight: 1, Op: "a", Bests: []float64{50, 50}},
			{Weight: 1, Op: "b", Bests: []float64{500, 500}},
		}, 1},
		{"similar tasks", []Status{ // task 0 is 10x slower per FLOP than its sibling
			{Weight: 1, Op: "gemm", FLOPs: 1e6, Bests: []float64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}},
			{Weight: 1, Op: "gemm", FLOPs: 1e6, Bests: []float64{100, 100}},
			{Weight: 1, Op: "softmax", FLOPs: 1e3, Bests: []float64{2000, 2000, 2000}},
		}, 0},
		{"no best yet", []Status{
			{Weight: 1, Op: "a", Bests: []float64{100, 10}},
			{Weight: 1, Op: "b", Bests: []float64{0}},
		}, 1},
		{"no best after the window", []Status{
			{Weight: 1, Op: "a", Bests: []float64{100, 10}},
			{Weight: 1, Op: "b", Bests: []float64{0, 0, 0}},
		}, 0},
		{"done", []Status{
			{Weight: 9, Op: "a", Bests: []float64{100, 10}, Done: true},
			{Weight: 1, Op: "b", Bests: []float64{5, 5, 5, 5}},
		}, 1},
		{"tie goes to fewer batches", []Status{
			{Weight: 1, Op: "a", Bests: []float64{100, 100, 100, 100}},
			{Weight: 2, Op: "b", Bests: []float64{100, 100, 100, 100, 100, 100, 100, 100}},
		}, 0},
	} {
		for _, s := range []struct {
			name string
			s    Scheduler
			gain func([]Status, int) float64
		}{{"gradient", Gradient{}, Gain}, {"ansor", Ansor{}, AnsorGain}} {
			t.Run(s.name+"/"+tt.name, func(t *testing.T) {
				if got := s.s.Next(tt.tasks); got != tt.want {
					t.Errorf("Next = %d, want %d; gains %v, %v", got, tt.want, s.gain(tt.tasks, 0), s.gain(tt.tasks, 1))
				}
			})
		}
	}
}

// TestGradientLeavesAConvergedTask: a heavy task whose best stopped moving
// yields to a light one that had only its warm-up batch; Ansor's rule,
// whose forward term falls only as 1/batches, keeps to the heavy one.
func TestGradientLeavesAConvergedTask(t *testing.T) {
	tasks := []Status{
		{Weight: 10, Op: "a", Bests: []float64{100, 50, 50, 50, 50}},
		{Weight: 1, Op: "b", Bests: []float64{80}},
	}
	if got := (Gradient{}).Next(tasks); got != 1 {
		t.Errorf("gradient: Next = %d, want 1; gains %v, %v", got, Gain(tasks, 0), Gain(tasks, 1))
	}
	if got := (Ansor{}).Next(tasks); got != 0 {
		t.Errorf("ansor: Next = %d, want 0; gains %v, %v", got, AnsorGain(tasks, 0), AnsorGain(tasks, 1))
	}
}

func TestGain(t *testing.T) {
	tasks := []Status{{Weight: 2, Op: "a", Bests: []float64{100, 90, 80, 70, 60}}}
	// The expected improvement after each batch: 100 (the first, whole),
	// then 0.3·e + 0.7·10: 37, 18.1, 12.43, 10.729 (no similar task).
	if g, want := Gain(tasks, 0), 2*10.729; math.Abs(g-want) > 1e-9 {
		t.Errorf("Gain = %v, want %v", g, want)
	}
	// Ansor's: backward (90-60)/3 over the last 3 batches, forward 60/5:
	// 2·(0.2·10 + 0.8·12).
	if g, want := AnsorGain(tasks, 0), 2*(0.2*10+0.8*12.0); math.Abs(g-want) > 1e-9 {
		t.Errorf("AnsorGain = %v, want %v", g, want)
	}
}

func TestAllDone(t *testing.T) {
	tasks := []Status{{Weight: 1, Bests: []float64{1}, Done: true}, {Weight: 1, Done: true}}
	for _, k := range Kinds() {
		if i := k.New().Next(tasks); i != -1 {
			t.Errorf("%s: Next = %d with every task done, want -1", k.Name, i)
		}
	}
}

// TestBudget drives each scheduler over fake tasks whose best falls at
// random rates: every batch goes to a task not done, the run spends
// exactly the budget, and round-robin spreads it evenly.
func TestBudget(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			tasks := make([]Status, 4)
			rates := make([]float64, len(tasks))
			for i := range tasks {
				tasks[i] = Status{Weight: 1 + rng.Float64(), Op: "gemm", FLOPs: 1e6}
				rates[i] = 0.5 + 0.5*rng.Float64()
			}
			const budget = 40
			s := k.New()
			for range budget {
				i := s.Next(tasks)
				if i < 0 || tasks[i].Done {
					t.Fatalf("Next = %d", i)
				}
				b := 1000.0
				if n := len(tasks[i].Bests); n > 0 {
					b = tasks[i].Bests[n-1] * rates[i]
				}
				tasks[i].Bests = append(tasks[i].Bests, b)
			}
			spent := 0
			for _, x := range tasks {
				spent += x.Batches()
				if x.Batches() == 0 {
					t.Errorf("a task got no batch")
				}
				if k.Name == "round-robin" && x.Batches() != budget/len(tasks) {
					t.Errorf("round-robin gave %d batches to a task, want %d", x.Batches(), budget/len(tasks))
				}
			}
			if spent != budget {
				t.Errorf("spent %d batches, want %d", spent, budget)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	if _, err := Lookup("gradient"); err != nil {
		t.Error(err)
	}
	if _, err := Lookup("fifo"); err == nil || err.Error() != `tasks: unknown scheduler "fifo" (known: gradient, round-robin, ansor)` {
		t.Errorf("Lookup(fifo) = %v", err)
	}
}
