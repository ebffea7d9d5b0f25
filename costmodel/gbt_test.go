package costmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestHeldOutTauTransfer(t *testing.T) {
	// Warm start: train on two shapes, rank configs of the third.
	r := rand.New(rand.NewPCG(7, 1))
	l := landscape{noise: 0.05}
	for _, obj := range []Objective{Rank, Regression} {
		for held := range shapes {
			var train []Sample
			for range 120 {
				s := r.IntN(len(shapes))
				if s != held {
					train = append(train, l.row(r, s))
				}
			}
			m := NewGBT(Options{Objective: obj, Rand: rand.New(rand.NewPCG(1, 1))})
			if err := m.Fit(train); err != nil {
				t.Fatal(err)
			}
			var feats [][]float64
			var speed []float64
			for range 100 {
				s := l.row(r, held)
				feats = append(feats, s.Features)
				speed = append(speed, 1/s.Cost)
			}
			tau := KendallTau(m.Predict(feats), speed)
			t.Logf("%s: trained on the other shapes, τ on shape 2^%g: %.3f", obj, shapes[held], tau)
			if !(tau > 0.2) {
				t.Errorf("%s: transfer to shape 2^%g: τ %.3f, want > 0.2", obj, shapes[held], tau)
			}
		}
	}
}

func TestFitEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	row := func(g string, cost float64, f ...float64) Sample { return Sample{Features: f, Group: g, Cost: cost} }
	cases := []struct {
		name string
		rows []Sample
	}{
		{"one row", []Sample{row("a", 5, 1, 2)}},
		{"single-row groups", []Sample{row("a", 5, 1, 2), row("b", 7, 2, 2), row("c", 1, 3, 0)}},
		{"all failed", []Sample{row("a", inf, 1, 2), row("a", inf, 2, 2), row("b", inf, 3, 3)}},
		{"some failed", []Sample{row("a", inf, 1, 2), row("a", 3, 2, 2), row("a", 4, 3, 3), row("a", inf, 0, 0)}},
		{"ties", []Sample{row("a", 3, 1, 1), row("a", 3, 1, 1), row("a", 3, 2, 2), row("a", 6, 2, 2), row("a", 6, 3, 3)}},
		{"constant target", []Sample{row("a", 2, 1, 5), row("a", 2, 2, 5), row("a", 2, 3, 5), row("a", 2, 4, 5)}},
		{"constant features", []Sample{row("a", 2, 1, 1), row("a", 3, 1, 1), row("a", 4, 1, 1), row("a", 5, 1, 1)}},
		{"no features", []Sample{row("a", 2), row("a", 3), row("b", 4)}},
		{"huge and tiny", []Sample{row("a", 1e-300, -1e300, 1e300), row("a", 1e300, 1e300, -1e300), row("a", 1, 0, 0)}},
	}
	for _, c := range cases {
		for _, obj := range []Objective{Rank, Regression} {
			t.Run(c.name+"/"+obj.String(), func(t *testing.T) {
				m := NewGBT(Options{Objective: obj, Trees: 20, MinLeaf: 1, Subsample: 1})
				if err := m.Fit(c.rows); err != nil {
					t.Fatal(err)
				}
				feats := make([][]float64, len(c.rows))
				for i, r := range c.rows {
					feats[i] = r.Features
				}
				for i, p := range m.Predict(feats) {
					if math.IsNaN(p) || math.IsInf(p, 0) {
						t.Errorf("prediction %d is %v", i, p)
					}
				}
			})
		}
	}
}

func TestFitLearnsOrder(t *testing.T) {
	// Faster rows must score higher on the training data, failures lowest,
	// whatever the scale of each group.
	var rows []Sample
	for g, scale := range []float64{1, 1e6} {
		for x := range 8 {
			cost := scale * float64(1+x)
			if x == 7 {
				cost = math.Inf(1)
			}
			rows = append(rows, Sample{Features: []float64{float64(x), float64(g)}, Group: string(rune('a' + g)), Cost: cost})
		}
	}
	for _, obj := range []Objective{Rank, Regression} {
		m := NewGBT(Options{Objective: obj, MinLeaf: 1, Subsample: 1})
		if err := m.Fit(rows); err != nil {
			t.Fatal(err)
		}
		for g := range 2 {
			feats := make([][]float64, 8)
			speed := make([]float64, 8)
			for x := range 8 {
				feats[x] = rows[8*g+x].Features
				speed[x] = 1 / rows[8*g+x].Cost
			}
			if tau := KendallTau(m.Predict(feats), speed); tau != 1 {
				t.Errorf("%s, group %d: training τ %v, want 1", obj, g, tau)
			}
		}
	}
}

func TestFitErrors(t *testing.T) {
	ok := Sample{Features: []float64{1, 2}, Group: "a", Cost: 1}
	cases := []struct {
		name string
		rows []Sample
	}{
		{"no rows", nil},
		{"widths differ", []Sample{ok, {Features: []float64{1}, Group: "a", Cost: 1}}},
		{"NaN feature", []Sample{ok, {Features: []float64{1, math.NaN()}, Group: "a", Cost: 1}}},
		{"infinite feature", []Sample{ok, {Features: []float64{math.Inf(-1), 1}, Group: "a", Cost: 1}}},
		{"zero cost", []Sample{ok, {Features: []float64{1, 1}, Group: "a", Cost: 0}}},
		{"negative cost", []Sample{ok, {Features: []float64{1, 1}, Group: "a", Cost: -3}}},
		{"NaN cost", []Sample{ok, {Features: []float64{1, 1}, Group: "a", Cost: math.NaN()}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewGBT(Options{})
			if err := m.Fit([]Sample{ok, ok}); err != nil {
				t.Fatal(err)
			}
			before := m.Predict([][]float64{{1, 2}})
			if err := m.Fit(c.rows); err == nil {
				t.Fatal("Fit succeeded")
			} else {
				t.Log(err)
			}
			if after := m.Predict([][]float64{{1, 2}}); after[0] != before[0] {
				t.Errorf("a failed Fit changed the model: %v, then %v", before, after)
			}
		})
	}
}

func TestPredictUntrained(t *testing.T) {
	var m GBT
	if p := m.Predict([][]float64{{1, 2}}); p != nil {
		t.Errorf("untrained Predict = %v, want nil", p)
	}
	if m.NumFeatures() != 0 {
		t.Errorf("untrained NumFeatures = %d", m.NumFeatures())
	}
	// The zero GBT trains with the default options.
	if err := m.Fit([]Sample{{Features: []float64{1}, Cost: 1}, {Features: []float64{2}, Cost: 2}}); err != nil {
		t.Fatal(err)
	}
	if m.NumFeatures() != 1 || len(m.Predict([][]float64{{3}})) != 1 {
		t.Errorf("after Fit: %v", &m)
	}
}

func TestPredictWidthPanics(t *testing.T) {
	m := NewGBT(Options{Trees: 1})
	if err := m.Fit([]Sample{{Features: []float64{1, 2}, Cost: 1}}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Predict on 3 features of a 2-feature model did not panic")
		}
	}()
	m.Predict([][]float64{{1, 2, 3}})
}

func TestFitDeterministic(t *testing.T) {
	rows := landscape{noise: 0.05}.rows(rand.New(rand.NewPCG(3, 3)), 30)
	for _, obj := range []Objective{Rank, Regression} {
		var preds [2][]float64
		for k := range preds {
			m := NewGBT(Options{Objective: obj, Rand: rand.New(rand.NewPCG(9, 9))})
			if err := m.Fit(rows); err != nil {
				t.Fatal(err)
			}
			preds[k] = m.Predict(features(rows))
		}
		for i := range preds[0] {
			if preds[0][i] != preds[1][i] {
				t.Fatalf("%s: same seed, prediction %d differs: %v, %v", obj, i, preds[0][i], preds[1][i])
			}
		}
	}
}

func features(rows []Sample) [][]float64 {
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = r.Features
	}
	return out
}

// timingRows returns n rows of the synthetic landscape padded to 30
// features with irrelevant ones, the size of a real model's input.
func timingRows(n int) []Sample {
	r := rand.New(rand.NewPCG(5, 5))
	rows := landscape{noise: 0.05}.rows(r, n/len(shapes)+1)[:n]
	for i := range rows {
		for len(rows[i].Features) < 30 {
			rows[i].Features = append(rows[i].Features, float64(r.IntN(8)))
		}
	}
	return rows
}

// BenchmarkFit times Fit with the default options on rows the size of a
// real model's input (the figure costmodel's doc quotes).
func BenchmarkFit(b *testing.B) {
	for _, n := range []int{500, 2000} {
		rows := timingRows(n)
		for _, obj := range []Objective{Rank, Regression} {
			b.Run(fmt.Sprintf("%s/rows=%d", obj, n), func(b *testing.B) {
				m := NewGBT(Options{Objective: obj})
				for b.Loop() {
					if err := m.Fit(rows); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkPredict(b *testing.B) {
	rows := timingRows(2000)
	m := NewGBT(Options{})
	if err := m.Fit(rows); err != nil {
		b.Fatal(err)
	}
	feats := features(rows[:1024])
	for b.Loop() {
		m.Predict(feats)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(feats)), "ns/config")
}

// BenchmarkUpdate times the refit after one batch of 16 rows at 2,000 rows,
// as the tuner does it: from scratch (Options.WarmRounds 0), one
// incremental fit (warm), and the mean over a cycle of RefitEvery fits, one
// from scratch and the rest incremental (cycle, in ns/fit).
func BenchmarkUpdate(b *testing.B) {
	const n, batch = 2000, 16
	rows := timingRows(n)
	for _, rounds := range []int{0, 10, 20} {
		opts := Options{WarmRounds: rounds}
		if rounds == 0 {
			b.Run("scratch", func(b *testing.B) {
				m := NewGBT(opts)
				for b.Loop() {
					if err := m.Fit(rows); err != nil {
						b.Fatal(err)
					}
				}
			})
			continue
		}
		b.Run(fmt.Sprintf("warm/rounds=%d", rounds), func(b *testing.B) {
			m := NewGBT(opts)
			if err := m.Fit(rows[:n-batch]); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c := *m
				if err := c.Fit(rows); err != nil {
					b.Fatal(err)
				}
				if c.warm != 1 {
					b.Fatalf("the fit was not incremental")
				}
			}
		})
		b.Run(fmt.Sprintf("cycle/rounds=%d", rounds), func(b *testing.B) {
			every := opts.withDefaults().RefitEvery
			fits := 0
			for b.Loop() {
				m := NewGBT(opts)
				for k := every - 1; k >= 0; k-- {
					if err := m.Fit(rows[:n-k*batch]); err != nil {
						b.Fatal(err)
					}
					fits++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(fits), "ns/fit")
		})
	}
}

// TestWarmFit follows the tuner past WarmFrom rows, a batch of 16 rows at a
// time: the incremental fits keep the trees and add WarmRounds each, every
// RefitEvery-th fit starts again from Trees, and the incremental model ranks
// held-out rows about as well as one fitted from scratch on the same rows.
func TestWarmFit(t *testing.T) {
	const batch, warmFrom, every, rounds = 16, 480, 4, 10
	r := rand.New(rand.NewPCG(7, 7))
	all := landscape{noise: 0.05}.rows(r, 400) // 1200 rows
	train, held := all[:warmFrom+(2*every-2)*batch], all[warmFrom+(2*every-2)*batch:]
	warm := NewGBT(Options{WarmRounds: rounds, WarmFrom: warmFrom, RefitEvery: every, Rand: rand.New(rand.NewPCG(1, 1))})
	scratch := NewGBT(Options{Rand: rand.New(rand.NewPCG(1, 1))})
	if err := warm.Fit(train[:warmFrom-batch]); err != nil {
		t.Fatal(err)
	}
	if len(warm.trees) != 100 {
		t.Fatalf("below WarmFrom: %d trees, want 100 from scratch", len(warm.trees))
	}
	for k := 0; warmFrom+k*batch <= len(train); k++ {
		rows := train[:warmFrom+k*batch]
		prev := slices.Clone(warm.trees)
		if err := warm.Fit(rows); err != nil {
			t.Fatal(err)
		}
		want := 100 + rounds*((k+1)%every) // the first is incremental, the every-th from scratch
		if len(warm.trees) != want {
			t.Fatalf("fit %d at %d rows: %d trees, want %d", k, len(rows), len(warm.trees), want)
		}
		if (k+1)%every != 0 && !reflect.DeepEqual(warm.trees[:len(prev)], prev) {
			t.Fatalf("fit %d: an incremental fit changed the trees it had", k)
		}
	}
	if err := scratch.Fit(train); err != nil {
		t.Fatal(err)
	}
	if len(warm.trees) == 100 {
		t.Fatal("the last fit was from scratch; want one that was not")
	}
	tau := func(m *GBT) float64 {
		var taus []groupTau
		for _, g := range groups(held) {
			var feats [][]float64
			var speed []float64
			for _, i := range g {
				feats, speed = append(feats, held[i].Features), append(speed, 1/held[i].Cost)
			}
			taus = append(taus, groupTau{Test: len(g), Tau: KendallTau(m.Predict(feats), speed)})
		}
		return meanTau(taus)
	}
	tw, ts := tau(warm), tau(scratch)
	t.Logf("held-out τ: incremental %.3f (%d trees), from scratch %.3f", tw, len(warm.trees), ts)
	if tw < ts-0.05 {
		t.Errorf("incremental fits rank held-out rows with τ %.3f, from scratch %.3f: want within 0.05", tw, ts)
	}
}
