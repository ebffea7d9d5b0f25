package tune

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// fakeGainModel scores a config by its true speed (-log of its recorded
// cost) when it was measured, and an unmeasured one by unmeasured, from its
// true score and the score of the measured best: at most a little below
// the best (an accurate model that sees no gain), far above it, or at
// random.
type fakeGainModel struct {
	l          *learner
	truth      map[string]float64 // by fmt.Sprint of the features
	unmeasured func(truth, best float64) float64
}

func (m *fakeGainModel) Fit([]costmodel.Sample) error { return nil }

func (m *fakeGainModel) Predict(features [][]float64) []float64 {
	known := map[string]bool{}
	best := math.Inf(-1)
	for _, c := range m.l.mine {
		known[fmt.Sprint(m.l.features(c.cfg))] = true
		best = max(best, -math.Log(c.cost))
	}
	out := make([]float64, len(features))
	for i, f := range features {
		k := fmt.Sprint(f)
		out[i] = m.truth[k]
		if !known[k] {
			out[i] = m.unmeasured(m.truth[k], best)
		}
	}
	return out
}

// TestStopGain runs the loop on a synthetic GEMM landscape with the cost
// model replaced by fakes: the run ends at the first check from the
// minimum on when the model predicts no gain, and never when it predicts
// one or knows nothing (scores unrelated to the measured speeds).
func TestStopGain(t *testing.T) {
	shape := []int{128, 128, 128}
	target, space, results := syntheticLandscape(t, gemm.Template, shape, 1)
	feats := gemm.Template.ModelFeatures(space, shape, target)
	truth := map[string]float64{}
	for _, r := range results {
		truth[fmt.Sprint(feats(r.Config))] = -math.Log(r.MedianNS)
	}
	noise := rand.New(rand.NewPCG(1, 2))
	noGain := func(truth, best float64) float64 { return min(truth, best-1) }
	for _, tc := range []struct {
		name       string
		unmeasured func(truth, best float64) float64
		after      int
		wantStop   bool
		wantTrials int
	}{
		{"no gain", noGain, 48, true, 48},
		{"no gain, later minimum", noGain, 80, true, 80},
		{"large gain", func(_, best float64) float64 { return best + 1 }, 48, false, 96},
		{"scores at random", func(_, best float64) float64 { return best - 1 + noise.NormFloat64() }, 48, false, 96},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := Task{
				Template: gemm.Template, Shape: shape, Target: target, Space: space,
				Measurer: sim.New(results), Store: tunedb.NewMemory(), Strategy: "evolutionary", Model: "gbt",
				StopGain: 0.01, StopGainAfter: tc.after, Seed: 1, Trials: 96, BatchSize: 16, Tool: "test",
			}
			r, err := open(task, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			r.learn.model = &fakeGainModel{l: r.learn, truth: truth, unmeasured: tc.unmeasured}
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

// syntheticLandscape is every valid config of tmpl at shape on a 2-core
// AVX-512 Xeon with made-up timings: the product of a factor per knob value
// (drawn from seed) and a little noise, so that a model can learn it and
// the best is unique. It draws as package lab's syntheticRecording does, so
// the two tests' landscapes are the same; lab imports tune, so tune's tests
// cannot share its helper.
func syntheticLandscape(tb testing.TB, tmpl kernels.Template, shape []int, seed uint64) (device.Target, *schedule.Space, []measure.Result) {
	tb.Helper()
	target, err := device.FromFingerprint("cpu/Intel(R) Xeon(R) Processor @ 2.80GHz/sse4.2+avx2+fma+avx512/2c")
	if err != nil {
		tb.Fatal(err)
	}
	space := tmpl.Space(shape, target)
	r := rand.New(rand.NewPCG(seed, 0))
	factor := map[string]float64{} // "knob=value" → log cost
	for _, k := range space.Knobs() {
		for _, v := range k.Values {
			factor[k.Name+"="+v.String()] = r.Float64()
		}
	}
	var results []measure.Result
	for i := range space.Size() {
		c := space.At(i)
		if !space.Valid(c) {
			continue
		}
		e := 0.05 * r.NormFloat64()
		for j := range c.Len() {
			e += factor[c.Name(j)+"="+c.At(j).String()]
		}
		ns := 1e5 * math.Exp(e)
		results = append(results, measure.Result{Config: c, Status: measure.StatusOK,
			SamplesNS: []float64{ns}, MedianNS: ns, P20NS: ns, P80NS: ns})
	}
	return target, space, results
}

func TestFitLine(t *testing.T) {
	a, slope, corr := fitLine([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9})
	if math.Abs(a-1) > 1e-12 || math.Abs(slope-2) > 1e-12 || math.Abs(corr-1) > 1e-12 {
		t.Errorf("fitLine of y = 1 + 2x: %v + %v·x, correlation %v; want 1 + 2x, 1", a, slope, corr)
	}
	if _, _, corr := fitLine([]float64{1, 2, 3}, []float64{5, 5, 5}); !math.IsNaN(corr) {
		t.Errorf("correlation with a constant %v, want NaN", corr)
	}
}
