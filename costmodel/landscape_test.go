package costmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// landscape is a synthetic tuning problem: six knobs with interactions and
// a clear optimum that moves with the workload's size, measured with
// multiplicative noise, on workloads whose costs differ by orders of
// magnitude. Some configs fail.
type landscape struct {
	noise float64 // standard deviation of log cost
}

// shapes are the workloads: log2 of their size.
var shapes = []float64{8, 11, 14}

// features: t1, t2 (log2 tiles 1..64), vec (log2 of 1, 8, 16), unroll
// (log2 1..8), algo one-hot (2), prefetch, then the workload's log2 size.
func (l landscape) row(r *rand.Rand, shape int) Sample {
	t1 := float64(r.IntN(7))
	t2 := float64(r.IntN(7))
	vec := []float64{0, 3, 4}[r.IntN(3)]
	unroll := float64(r.IntN(4))
	algo := r.IntN(2)
	prefetch := float64(r.IntN(2))
	size := shapes[shape]
	f := []float64{t1, t2, vec, unroll, b2f(algo == 0), b2f(algo == 1), prefetch, size}
	return Sample{Features: f, Group: fmt.Sprintf("w%g", size), Cost: l.cost(f, r)}
}

func (l landscape) cost(f []float64, r *rand.Rand) float64 {
	t1, t2, vec, unroll, algoB, prefetch, size := f[0], f[1], f[2], f[3], f[5], f[6], f[7]
	if t1+t2 > 10 { // "too many registers"
		return math.Inf(1)
	}
	best := size/3 - 0.5                     // the best t1 grows with the workload
	e := 0.3 * (t1 - best) * (t1 - best)     // tile
	e += 0.2 * (t2 + t1 - 6) * (t2 + t1 - 6) // t2 balances t1
	if vec == 0 {
		e += 0.8
	}
	if vec == 4 && algoB == 0 { // wide vectors only pay with algo b
		e += 0.5
	}
	e += 0.1 * (unroll - 2) * (unroll - 2)
	if prefetch == 1 {
		e += 0.2 * (3 - t1) / 3 // prefetch helps big tiles, hurts small ones
	}
	scale := math.Exp2(size) // ns: the workloads differ in scale
	return scale * math.Exp(e+l.noise*r.NormFloat64())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (l landscape) rows(r *rand.Rand, perShape int) []Sample {
	var out []Sample
	for i := range perShape * len(shapes) {
		out = append(out, l.row(r, i%len(shapes)))
	}
	return out
}

// heldOutTau averages evaluate's τ over a few seeds: 100 rows per shape,
// 40 of each trained on (120 rows in all), 60 held out.
func heldOutTau(t *testing.T, newModel func(seed uint64) Model) float64 {
	t.Helper()
	const seeds = 4
	var sum float64
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 1))
		rows := landscape{noise: 0.05}.rows(r, 100)
		gs, err := evaluate(newModel(seed), rows, 0.6, r)
		if err != nil {
			t.Fatal(err)
		}
		sum += meanTau(gs)
	}
	return sum / seeds
}

func TestHeldOutTau(t *testing.T) {
	none := heldOutTau(t, func(seed uint64) Model { return NewNone(rand.New(rand.NewPCG(seed, 2))) })
	t.Logf("none: held-out τ %.3f", none)
	if math.Abs(none) > 0.2 {
		t.Errorf("random scores have held-out τ %.3f, want about 0", none)
	}
	taus := map[Objective]float64{}
	for _, obj := range []Objective{Rank, Regression} {
		tau := heldOutTau(t, func(seed uint64) Model {
			return NewGBT(Options{Objective: obj, Rand: rand.New(rand.NewPCG(seed, 3))})
		})
		taus[obj] = tau
		t.Logf("%s: held-out τ %.3f", obj, tau)
		if tau < 0.5 || tau-none < 0.4 {
			t.Errorf("%s: held-out τ %.3f (none %.3f), want > 0.5 and ahead of none by 0.4", obj, tau, none)
		}
	}
	winner := Rank
	if taus[Regression] > taus[Rank] {
		winner = Regression
	}
	t.Logf("higher held-out τ on the synthetic landscape: %s", winner)
}
