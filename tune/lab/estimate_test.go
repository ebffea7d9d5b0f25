package lab

import (
	"math"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestEstimateOrdersLandscapes checks the templates' analytic estimates
// (kernels.Template.Estimate) against the recorded landscapes: they must
// order each recording's configs better than chance (Kendall τ against
// the measured speed, failures slowest).
func TestEstimateOrdersLandscapes(t *testing.T) {
	for _, l := range suiteLandscapes(t) {
		if l.Name == "gemm 128³ synthetic" {
			continue // random factors per knob value: nothing to estimate
		}
		tmpl, err := l.Recording.revision(l.Template)
		if err != nil {
			t.Fatal(err)
		}
		if tmpl.Estimate == nil {
			t.Errorf("%s: revision %s has no Estimate", l.Name, tmpl.Version)
			continue
		}
		shape := l.Recording.Workload.Shape
		var est, speed []float64
		for _, r := range l.Recording.Records {
			est = append(est, -tmpl.Estimate(shape, l.Recording.Target, r.Config))
			s := 0.0
			if r.Status == tunedb.StatusOK {
				s = 1 / r.MedianNS
			}
			speed = append(speed, s)
		}
		tau := costmodel.KendallTau(est, speed)
		t.Logf("%s: τ %.2f over %d configs", l.Name, tau, len(est))
		if math.IsNaN(tau) || tau < 0.2 {
			t.Errorf("%s: the estimate orders the landscape with τ %.2f, want ≥ 0.2", l.Name, tau)
		}
	}
}
