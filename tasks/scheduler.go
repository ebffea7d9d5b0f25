package tasks

import (
	"math"

	"github.com/autotune-dev/autotune/choice"
)

// Status is what a scheduler knows of one task.
type Status struct {
	Weight float64 // calls per model invocation; > 0
	Op     string  // tasks of one op are similar (the gradient rule's forward term)
	FLOPs  float64 // floating-point work of one call; 0 when unknown
	// Bests is the task's best latency in nanoseconds after each of its
	// batches in this run, 0 while it has none.
	Bests []float64
	Done  bool // its space is exhausted: no batch can be given to it
}

// Batches is how many batches the task has had.
func (s Status) Batches() int { return len(s.Bests) }

// Best is the task's best latency, 0 when it has none.
func (s Status) Best() float64 {
	if len(s.Bests) == 0 {
		return 0
	}
	return s.Bests[len(s.Bests)-1]
}

// A Scheduler names the task of the next batch: an index into tasks, or -1
// when every task is done.
type Scheduler interface {
	Next(tasks []Status) int
}

// Kind is a scheduler of the registry.
type Kind struct {
	Name string
	Doc  string
	New  func() Scheduler
}

// kinds are the schedulers by name, the default first.
var kinds = choice.New("tasks: scheduler", func(k Kind) string { return k.Name },
	Kind{"gradient", "the task with the largest expected reduction of the weighted total, from its recent improvements", func() Scheduler { return Gradient{} }},
	Kind{"round-robin", "each task in turn", func() Scheduler { return RoundRobin{} }},
	Kind{"ansor", "the task with the largest expected reduction of the weighted total by Ansor's rule", func() Scheduler { return Ansor{} }},
)

// Kinds lists the schedulers, the default first.
func Kinds() []Kind { return kinds.All() }

// Names lists the schedulers' names, the default first.
func Names() []string { return kinds.Names() }

// Lookup returns the scheduler named name; the error lists the names there
// are.
func Lookup(name string) (Kind, error) { return kinds.Lookup(name) }

// Total is the weighted total latency Σ weight·best in nanoseconds over
// the tasks that have a best, and how many have none.
func Total(tasks []Status) (ns float64, missing int) {
	for _, t := range tasks {
		if b := t.Best(); b > 0 {
			ns += t.Weight * b
		} else {
			missing++
		}
	}
	return ns, missing
}

// warmUp returns the first task not done that has had no batch yet, -1
// when there is none.
func warmUp(tasks []Status) int {
	for i, t := range tasks {
		if !t.Done && t.Batches() == 0 {
			return i
		}
	}
	return -1
}

// fewest returns the task not done with the fewest batches, the first among
// equals, -1 when every task is done; only tasks that keep says so count.
func fewest(tasks []Status, keep func(Status) bool) int {
	at := -1
	for i, t := range tasks {
		if t.Done || !keep(t) {
			continue
		}
		if at < 0 || t.Batches() < tasks[at].Batches() {
			at = i
		}
	}
	return at
}

// RoundRobin gives each task a batch in turn.
type RoundRobin struct{}

// Next implements Scheduler.
func (RoundRobin) Next(tasks []Status) int {
	return fewest(tasks, func(Status) bool { return true })
}

// Constants of the gradient rules. Alpha, Beta and Window are Ansor's: the
// weight of the backward term, the factor on the latency similar tasks
// suggest, the window of the slope in batches. Memory is the gradient
// rule's: the weight of a task's earlier improvements against its latest
// in its expected improvement.
const (
	Alpha  = 0.2
	Beta   = 2.0
	Window = 3
	Memory = 0.3
)

// Gradient gives the next batch to the task with the largest expected
// reduction of the weighted total, estimated from the task's own recent
// improvements (see the package doc).
type Gradient struct{}

// Next implements Scheduler.
func (Gradient) Next(tasks []Status) int { return largest(tasks, Gain) }

// Ansor gives the next batch by the rule of Ansor's task scheduler (see the
// package doc), kept to compare with.
type Ansor struct{}

// Next implements Scheduler.
func (Ansor) Next(tasks []Status) int { return largest(tasks, AnsorGain) }

// largest returns the task to give the next batch to: the warm-up round
// first, then tasks without a best, then the task of the largest gain.
func largest(tasks []Status, gain func([]Status, int) float64) int {
	if i := warmUp(tasks); i >= 0 {
		return i
	}
	// Tasks without a best yet get a few more batches before anything.
	if i := fewest(tasks, func(t Status) bool { return t.Best() == 0 && t.Batches() < Window }); i >= 0 {
		return i
	}
	at, most := -1, 0.0
	for i, t := range tasks {
		if t.Done || t.Best() == 0 {
			continue
		}
		g := gain(tasks, i)
		if at < 0 || g > most || g == most && t.Batches() < tasks[at].Batches() {
			at, most = i, g
		}
	}
	if at < 0 {
		// Only tasks that never produced a best are left.
		return fewest(tasks, func(Status) bool { return true })
	}
	return at
}

// Gain is the expected reduction of the weighted total, in nanoseconds, of
// one more batch of task i by the gradient rule: its weight times the
// larger of its expected improvement and its gap to similar tasks. It is 0
// for a task without a best.
//
// The expected improvement is an exponentially weighted average of the
// improvements of the task's best per batch, the latest weighing 1−Memory,
// and the first batch counting as an improvement by its whole best (the
// optimism that gives each task a second look in the order of its
// weighted latency). A batch that finds nothing better cuts it to Memory
// times what it was, so a task whose best stopped moving soon yields to
// others, however heavy.
func Gain(tasks []Status, i int) float64 {
	t := tasks[i]
	g := t.Best()
	if g == 0 {
		return 0
	}
	var e float64
	for k, b := range t.Bests {
		switch {
		case b == 0:
		case k == 0 || t.Bests[k-1] == 0:
			e = b
		default:
			e = Memory*e + (1-Memory)*math.Max(0, t.Bests[k-1]-b)
		}
	}
	return t.Weight * math.Max(e, g-similarLatency(tasks, i))
}

// AnsorGain is Gain by the rule of Ansor's task scheduler.
func AnsorGain(tasks []Status, i int) float64 {
	t := tasks[i]
	g, n := t.Best(), t.Batches()
	if g == 0 {
		return 0
	}
	backward := 0.0
	if n > Window {
		backward = (t.Bests[n-1-Window] - g) / Window
	}
	next := math.Min(g-g/float64(n), similarLatency(tasks, i))
	forward := g - next
	return t.Weight * (Alpha*backward + (1-Alpha)*forward)
}

// similarLatency is the latency task i would have at Beta times the
// latency per FLOP of the fastest task of its op (the highest FLOPs per
// nanosecond among them, itself included), +Inf when it has no FLOPs or no
// other task of its op has a best.
func similarLatency(tasks []Status, i int) float64 {
	t := tasks[i]
	if t.FLOPs <= 0 {
		return math.Inf(1)
	}
	v, similar := 0.0, 0
	for _, o := range tasks {
		if o.Op == t.Op && o.FLOPs > 0 && o.Best() > 0 {
			v = math.Max(v, o.FLOPs/o.Best())
			similar++
		}
	}
	if similar < 2 {
		return math.Inf(1)
	}
	return Beta * t.FLOPs / v
}
