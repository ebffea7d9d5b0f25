package costmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBagged(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	rows := landscape{noise: 0.05}.rows(r, 60)
	feats := features(rows)
	b := NewBagged(BaggedOptions{Members: 4, Kappa: 0.5})
	if b.Predict(feats) != nil {
		t.Fatal("an untrained ensemble predicted something")
	}
	if err := b.Fit(rows); err != nil {
		t.Fatal(err)
	}
	mean, spread := b.PredictSpread(feats)
	pred := b.Predict(feats)
	var members [][]float64
	for _, m := range b.members {
		members = append(members, m.Predict(feats))
	}
	unsure := 0
	for i := range feats {
		s, s2 := 0.0, 0.0
		for _, p := range members {
			s, s2 = s+p[i], s2+p[i]*p[i]
		}
		m := s / 4
		sd := math.Sqrt(max(0, s2/4-m*m))
		if math.Abs(mean[i]-m) > 1e-12 || math.Abs(spread[i]-sd) > 1e-9 || math.Abs(pred[i]-(m+0.5*sd)) > 1e-9 {
			t.Fatalf("row %d: mean %v spread %v predict %v, want the members' mean %v, deviation %v, and mean + 0.5·deviation", i, mean[i], spread[i], pred[i], m, sd)
		}
		if sd > 1e-6 {
			unsure++
		}
	}
	// Members trained on different resamples disagree somewhere.
	if unsure == 0 {
		t.Error("the members agree on every row: the resamples did not differ")
	}
	if tau := KendallTau(pred, speeds(rows)); tau < 0.5 {
		t.Errorf("the ensemble's mean ranks its training rows with τ %.2f, want > 0.5", tau)
	}
	// A failed fit keeps every member.
	bad := append([]Sample{{Features: []float64{1}, Cost: 1}}, rows...)
	if err := b.Fit(bad); err == nil {
		t.Fatal("Fit of rows of two widths succeeded")
	}
	if again := b.Predict(feats); again[0] != pred[0] {
		t.Error("a failed Fit changed the model")
	}
}

func speeds(rows []Sample) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = 1 / r.Cost
	}
	return out
}
