package costmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The held-out evaluation of the tests: how well a model ranks configs of
// measured workloads that it was not trained on.

// groupTau is the held-out ranking quality of a model on one workload.
type groupTau struct {
	Group       string
	Train, Test int     // rows of the group trained on and held out
	Tau         float64 // τ-b of predictions against measured speed; NaN if undefined
}

// evaluate measures how well m ranks configs it has not seen: it holds out
// a share test of each group's rows, drawn with r, fits m on the rest (all
// groups together, as the tuner does), and returns per group the Kendall τ
// between predicted scores and measured speed (1/cost, failures slowest) on
// the held-out rows. Groups are in order of first appearance. A group with
// fewer than 2 held-out rows has τ NaN; see meanTau.
func evaluate(m Model, rows []Sample, test float64, r *rand.Rand) ([]groupTau, error) {
	if !(test > 0 && test < 1) {
		return nil, fmt.Errorf("costmodel: evaluate: test share %v: want 0 < test < 1", test)
	}
	grp := groups(rows)
	var train []Sample
	held := make([][]int, len(grp))
	for g, idx := range grp {
		idx = append([]int(nil), idx...)
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		k := int(math.Round(test * float64(len(idx))))
		held[g] = idx[:k]
		for _, i := range idx[k:] {
			train = append(train, rows[i])
		}
	}
	if err := m.Fit(train); err != nil {
		return nil, err
	}
	out := make([]groupTau, len(grp))
	for g, idx := range held {
		out[g] = groupTau{Group: rows[grp[g][0]].Group, Train: len(grp[g]) - len(idx), Test: len(idx), Tau: math.NaN()}
		if len(idx) < 2 {
			continue
		}
		feats := make([][]float64, len(idx))
		speed := make([]float64, len(idx))
		for k, i := range idx {
			feats[k] = rows[i].Features
			speed[k] = 1 / rows[i].Cost
		}
		if pred := m.Predict(feats); pred != nil {
			out[g].Tau = KendallTau(pred, speed)
		}
	}
	return out, nil
}

// meanTau averages τ over the groups where it is defined, weighting each by
// its held-out rows; NaN when none is.
func meanTau(gs []groupTau) float64 {
	var sum float64
	var n int
	for _, g := range gs {
		if !math.IsNaN(g.Tau) {
			sum += g.Tau * float64(g.Test)
			n += g.Test
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
