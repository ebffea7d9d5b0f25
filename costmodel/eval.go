package costmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Model is what Evaluate compares: GBT and None satisfy it.
type Model interface {
	Fit(rows []Sample) error
	Predict(features [][]float64) []float64
}

var (
	_ Model = (*GBT)(nil)
	_ Model = (*None)(nil)
)

// KendallTau returns Kendall's τ-b of two paired lists: the share of
// concordant minus discordant pairs, corrected for ties, from -1 (reverse
// order) through 0 (unrelated) to 1 (same order). It is NaN when there are
// fewer than two values or either list is constant. It panics when the
// lengths differ. The cost is quadratic, which is fine for the few
// thousand rows a model sees.
func KendallTau(pred, actual []float64) float64 {
	if len(pred) != len(actual) {
		panic(fmt.Sprintf("costmodel: KendallTau of %d and %d values", len(pred), len(actual)))
	}
	n := len(pred)
	var concordant, discordant, tiedPred, tiedActual int
	for i := range n {
		for j := i + 1; j < n; j++ {
			dp := sign(pred[i] - pred[j])
			da := sign(actual[i] - actual[j])
			switch {
			case dp == 0 && da == 0:
				tiedPred++
				tiedActual++
			case dp == 0:
				tiedPred++
			case da == 0:
				tiedActual++
			case dp == da:
				concordant++
			default:
				discordant++
			}
		}
	}
	pairs := n * (n - 1) / 2
	den := math.Sqrt(float64(pairs-tiedPred) * float64(pairs-tiedActual))
	if den == 0 {
		return math.NaN()
	}
	return float64(concordant-discordant) / den
}

// sign is -1, 0 or 1; NaN (from equal infinities) counts as a tie.
func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// GroupTau is the held-out ranking quality of a model on one workload.
type GroupTau struct {
	Group       string
	Train, Test int     // rows of the group trained on and held out
	Tau         float64 // τ-b of predictions against measured speed; NaN if undefined
}

// Evaluate measures how well m ranks configs it has not seen: it holds out
// a share test of each group's rows, drawn with r, fits m on the rest (all
// groups together, as the tuner does), and returns per group the Kendall τ
// between predicted scores and measured speed (1/cost, failures slowest) on
// the held-out rows. Groups are in order of first appearance. A group with
// fewer than 2 held-out rows has τ NaN; see MeanTau.
func Evaluate(m Model, rows []Sample, test float64, r *rand.Rand) ([]GroupTau, error) {
	if !(test > 0 && test < 1) {
		return nil, fmt.Errorf("costmodel: Evaluate: test share %v: want 0 < test < 1", test)
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
	out := make([]GroupTau, len(grp))
	for g, idx := range held {
		out[g] = GroupTau{Group: rows[grp[g][0]].Group, Train: len(grp[g]) - len(idx), Test: len(idx), Tau: math.NaN()}
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

// MeanTau averages τ over the groups where it is defined, weighting each by
// its held-out rows; NaN when none is.
func MeanTau(gs []GroupTau) float64 {
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
