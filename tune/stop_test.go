package tune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/tunedb"
)

// fakeGainModel scores a measured config by its measured speed (a perfect
// fit of what it was trained on), and every other config by unmeasured:
// far below the measured best (no gain), far above it (a large gain) or
// at random.
type fakeGainModel struct {
	l          *learner
	unmeasured func() float64
}

func (m *fakeGainModel) Fit([]costmodel.Sample) error { return nil }

func (m *fakeGainModel) Predict(features [][]float64) []float64 {
	known := map[string]float64{}
	for _, c := range m.l.mine {
		known[fmt.Sprint(m.l.features(c.cfg))] = -math.Log(c.cost)
	}
	out := make([]float64, len(features))
	for i, f := range features {
		s, ok := known[fmt.Sprint(f)]
		if !ok {
			s = m.unmeasured()
		}
		out[i] = s
	}
	return out
}

// TestStopGain runs the loop on a synthetic GEMM landscape with the cost
// model replaced by fakes: the run ends at the first check from the
// minimum on when the model predicts no gain, and never when it predicts
// one or knows nothing (scores unrelated to the measured speeds).
func TestStopGain(t *testing.T) {
	rec := syntheticRecording(t, gemm.Template, []int{128, 128, 128}, 1)
	space := gemm.Template.Space(rec.Workload.Shape, rec.Target)
	results, _ := replayable(space, rec.Records)
	noise := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name       string
		unmeasured func() float64
		after      int
		wantStop   bool
		wantTrials int
	}{
		{"no gain", func() float64 { return -1e3 }, 48, true, 48},
		{"no gain, later minimum", func() float64 { return -1e3 }, 80, true, 80},
		{"large gain", func() float64 { return 1e3 }, 48, false, 96},
		{"scores at random", func() float64 { return -math.Log(1e5) + noise.NormFloat64() }, 48, false, 96},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := Task{
				Template: gemm.Template, Shape: rec.Workload.Shape, Target: rec.Target, Space: space,
				Measurer: sim.New(results), Store: tunedb.NewMemory(), Strategy: "evolutionary", Model: "gbt",
				StopGain: 0.01, StopGainAfter: tc.after, Seed: 1, Trials: 96, BatchSize: 16, Tool: "test",
			}
			r, err := open(task, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			r.learn.model = &fakeGainModel{l: r.learn, unmeasured: tc.unmeasured}
			for r.s.Trials < task.Trials {
				stop, err := r.step(context.Background(), task.Trials-r.s.Trials)
				if err != nil {
					t.Fatal(err)
				}
				if stop {
					break
				}
			}
			if r.s.GainStop != tc.wantStop || r.s.Trials != tc.wantTrials {
				t.Errorf("stopped on the gain %v after %d trials (last estimate %.3g), want %v after %d",
					r.s.GainStop, r.s.Trials, r.s.PredictedGain, tc.wantStop, tc.wantTrials)
			}
		})
	}
}

func TestFitLine(t *testing.T) {
	slope, corr := fitLine([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9})
	if math.Abs(slope-2) > 1e-12 || math.Abs(corr-1) > 1e-12 {
		t.Errorf("fitLine of y = 1 + 2x: slope %v, correlation %v; want 2, 1", slope, corr)
	}
	if _, corr := fitLine([]float64{1, 2, 3}, []float64{5, 5, 5}); !math.IsNaN(corr) {
		t.Errorf("correlation with a constant %v, want NaN", corr)
	}
}
