package costmodel

import (
	"fmt"
	"math"
)

// Model is a cost model: it learns from rows and scores feature vectors,
// higher for faster. GBT and None satisfy it; Kinds makes them by name.
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
