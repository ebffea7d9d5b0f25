package costmodel

import "math/rand/v2"

// None is the model that knows nothing: it scores every config with a fresh
// uniform random number. A search guided by None is a random search, which
// makes it the control that a learned model has to beat, on held-out τ
// (about 0) and in the tuner (trials to reach the best).
//
// None is not safe for concurrent use: it draws from its generator.
type None struct {
	r *rand.Rand
}

// NewNone returns a None drawing from r.
func NewNone(r *rand.Rand) *None { return &None{r: r} }

// Fit learns nothing.
func (*None) Fit([]Sample) error { return nil }

// Predict returns a uniform random score in [0, 1) per vector.
func (m *None) Predict(features [][]float64) []float64 {
	out := make([]float64, len(features))
	for i := range out {
		out[i] = m.r.Float64()
	}
	return out
}
