package costmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestKendallTau(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name         string
		pred, actual []float64
		want         float64
	}{
		{"same order", []float64{1, 2, 3}, []float64{10, 20, 30}, 1},
		{"reversed", []float64{1, 2, 3}, []float64{3, 2, 1}, -1},
		// 5 concordant, 1 discordant pair of 6: (5-1)/6.
		{"one swap", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 4.0 / 6},
		// Pairs: (0,1) tied in pred; (0,2), (1,2) concordant. 2/sqrt(2·3).
		{"tie in pred", []float64{1, 1, 2}, []float64{1, 2, 3}, 2 / math.Sqrt(6)},
		// (1,2) tied in pred, (2,3) tied in actual, the other 4 concordant:
		// 4/sqrt(5·5).
		{"a tie in each", []float64{1, 2, 2, 3}, []float64{1, 2, 3, 3}, 0.8},
		// (0,1) tied in both, (0,2) and (1,2) discordant: -2/sqrt(2·2).
		{"joint tie", []float64{1, 1, 0}, []float64{5, 5, 9}, -1},
		// +Inf costs give speed 0: failures tie with each other.
		{"failures tie", []float64{3, 2, 1, 0}, []float64{1, 0.5, 0, 0}, 5 / math.Sqrt(30)},
		{"constant pred", []float64{2, 2, 2}, []float64{1, 2, 3}, nan},
		{"one value", []float64{1}, []float64{1}, nan},
		{"empty", nil, nil, nan},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := KendallTau(c.pred, c.actual)
			if math.IsNaN(c.want) != math.IsNaN(got) || math.Abs(got-c.want) > 1e-12 {
				t.Errorf("KendallTau(%v, %v) = %v, want %v", c.pred, c.actual, got, c.want)
			}
		})
	}
}

func TestKendallTauLengthPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on lists of different lengths")
		}
	}()
	KendallTau([]float64{1, 2}, []float64{1})
}

func TestEvaluate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	rows := landscape{noise: 0.05}.rows(r, 20)
	rows = append(rows, Sample{Features: rows[0].Features, Group: "lonely", Cost: 5})
	gs, err := evaluate(NewGBT(Options{}), rows, 0.5, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != len(shapes)+1 {
		t.Fatalf("%d groups, want %d", len(gs), len(shapes)+1)
	}
	for _, g := range gs[:len(shapes)] {
		if g.Train != 10 || g.Test != 10 || math.IsNaN(g.Tau) {
			t.Errorf("%+v: want 10 rows trained, 10 held out and a τ", g)
		}
	}
	if g := gs[len(shapes)]; g.Group != "lonely" || !math.IsNaN(g.Tau) {
		t.Errorf("a group of one row: %+v, want τ NaN", g)
	}
	if !(meanTau(gs) > 0) {
		t.Errorf("meanTau = %v", meanTau(gs))
	}
	if _, err := evaluate(NewGBT(Options{}), rows, 1, r); err == nil {
		t.Error("evaluate holding out every row succeeded")
	}
}

func TestMeanTau(t *testing.T) {
	gs := []groupTau{{Test: 1, Tau: 1}, {Test: 3, Tau: 0}, {Test: 5, Tau: math.NaN()}}
	if got := meanTau(gs); got != 0.25 {
		t.Errorf("meanTau = %v, want 0.25", got)
	}
	if got := meanTau(nil); !math.IsNaN(got) {
		t.Errorf("meanTau(nil) = %v, want NaN", got)
	}
}
