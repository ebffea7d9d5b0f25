package costmodel

import (
	"slices"
	"testing"
)

func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"gbt", "ucb", "none"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q (the default first)", got, want)
	}
	rows := timingRows(50)
	feats := features(rows)
	for _, k := range Kinds() {
		got, err := Lookup(k.Name)
		if err != nil || got.Name != k.Name || got.Doc == "" {
			t.Errorf("Lookup(%q) = %+v, %v", k.Name, got, err)
			continue
		}
		// Every model trains and predicts; the same seed, the same scores.
		a, b := k.New(7), k.New(7)
		for _, m := range []Model{a, b} {
			if err := m.Fit(rows); err != nil {
				t.Fatalf("%s: Fit: %v", k.Name, err)
			}
		}
		pa, pb := a.Predict(feats), b.Predict(feats)
		if len(pa) != len(feats) || !slices.Equal(pa, pb) {
			t.Errorf("%s: two models of seed 7 predicted %v and %v", k.Name, pa[:3], pb[:3])
		}
	}
	if _, ok := Kinds()[0].New(1).(*GBT); !ok {
		t.Error("the default model is not the boosted trees")
	}
	if _, err := Lookup("forest"); err == nil || err.Error() != `costmodel: unknown cost model "forest" (known: gbt, ucb, none)` {
		t.Errorf("Lookup of an unknown name: %v", err)
	}
}
