package search

import (
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/schedule"
)

// space has 3*4*2 = 24 points, of which the 4 with vec=1,algo=online are invalid.
func space() *schedule.Space {
	return schedule.NewSpace([]schedule.Knob{
		schedule.Choice("vec", 1, 8, 16),
		schedule.Choice("unroll", 1, 2, 4, 8),
		schedule.Enum("algo", "threepass", "online"),
	}, schedule.Constraint{Name: "online_needs_vectors", OK: func(c schedule.Config) bool {
		return c.Str("algo") != "online" || c.Int("vec") > 1
	}})
}

// bigSpace is too large to shuffle, so Random samples it.
func bigSpace() *schedule.Space {
	vals := make([]int, 400)
	for i := range vals {
		vals[i] = i + 1
	}
	return schedule.NewSpace([]schedule.Knob{schedule.Choice("a", vals...), schedule.Choice("b", vals...)})
}

// sumModel prefers configs with small features; any fixed ranking will do
// for the conformance tests.
type sumModel struct{}

func (sumModel) Predict(feats [][]float64) []float64 {
	out := make([]float64, len(feats))
	for i, f := range feats {
		for _, x := range f {
			out[i] -= x
		}
	}
	return out
}

type newStrategy func(*schedule.Space, Options) Strategy

// strategies are the registry's strategies, the guided ones both without
// and with a model: every strategy a user can choose is held to the
// contract.
var strategies = map[string]newStrategy{}

func init() {
	for _, k := range Kinds() {
		strategies[k.Name] = func(s *schedule.Space, o Options) Strategy { return k.New(s, o, Guide{}) }
		if k.Guided {
			strategies[k.Name+"+model"] = func(s *schedule.Space, o Options) Strategy {
				return k.New(s, o, Guide{Model: sumModel{}, Features: s.Features})
			}
		}
	}
}

func TestRegistry(t *testing.T) {
	if got, want := Names(), []string{"analytic", "evolutionary", "shipped", "random", "grid"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q (the default first)", got, want)
	}
	for _, k := range Kinds() {
		got, err := Lookup(k.Name)
		if err != nil || got.Name != k.Name || got.Doc == "" || got.New == nil {
			t.Errorf("Lookup(%q) = %+v, %v", k.Name, got, err)
		}
	}
	for _, k := range Kinds() {
		if guided := k.Name != "random" && k.Name != "grid"; k.Guided != guided {
			t.Errorf("%s: Guided %v, want %v", k.Name, k.Guided, guided)
		}
		if want := map[string]string{"analytic": Analytic, "shipped": Shipped}[k.Name]; k.Estimates != want {
			t.Errorf("%s: Estimates %q, want %q", k.Name, k.Estimates, want)
		}
	}
	if _, err := Lookup("annealing"); err == nil || err.Error() != `search: unknown strategy "annealing" (known: analytic, evolutionary, shipped, random, grid)` {
		t.Errorf("Lookup of an unknown name: %v", err)
	}
	// The registry's constructors are the package's: same seed, same proposals.
	k, _ := Lookup("random")
	a := drain(t, k.New(space(), Options{Seed: 5}, Guide{}), 20, 20)
	b := drain(t, NewRandom(space(), Options{Seed: 5}), 20, 20)
	if !slices.EqualFunc(a, b, schedule.Config.Equal) {
		t.Errorf("the registry's random search proposed %v, NewRandom %v", a, b)
	}
}

// drain asks for batches of n until the strategy runs dry or budget configs came.
func drain(t *testing.T, st Strategy, n, budget int) []schedule.Config {
	t.Helper()
	var all []schedule.Config
	for len(all) < budget {
		batch, err := st.Next(min(n, budget-len(all)))
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) == 0 {
			break
		}
		all = append(all, batch...)
		st.Tell(batch, make([]float64, len(batch)))
	}
	return all
}

func TestStrategiesCoverEveryValidConfigOnce(t *testing.T) {
	for name, newSt := range strategies {
		t.Run(name, func(t *testing.T) {
			s := space()
			all := drain(t, newSt(s, Options{Seed: 1}), 7, 1000)
			if len(all) != 20 {
				t.Fatalf("proposed %d configs, want the 20 valid ones", len(all))
			}
			seen := map[string]bool{}
			for _, c := range all {
				if !s.Valid(c) {
					t.Errorf("proposed invalid %s", c)
				}
				if seen[c.String()] {
					t.Errorf("proposed %s twice", c)
				}
				seen[c.String()] = true
			}
		})
	}
}

func TestStrategiesSkipMeasured(t *testing.T) {
	for name, newSt := range strategies {
		t.Run(name, func(t *testing.T) {
			s := space()
			first := drain(t, newSt(s, Options{Seed: 3}), 4, 8)
			measured := map[string]bool{}
			for _, c := range first {
				measured[c.String()] = true
			}
			rest := drain(t, newSt(s, Options{Seed: 3, Measured: measured}), 4, 1000)
			if len(rest) != 20-len(first) {
				t.Errorf("resumed run proposed %d configs, want %d", len(rest), 20-len(first))
			}
			for _, c := range rest {
				if measured[c.String()] {
					t.Errorf("resumed run proposed measured %s", c)
				}
			}
		})
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	for _, s := range []*schedule.Space{space(), bigSpace()} {
		for name, newSt := range strategies {
			a := drain(t, newSt(s, Options{Seed: 42}), 5, 15)
			b := drain(t, newSt(s, Options{Seed: 42}), 5, 15)
			if len(a) != 15 || len(a) != len(b) {
				t.Fatalf("%s: %d and %d proposals", name, len(a), len(b))
			}
			for i := range a {
				if !a[i].Equal(b[i]) {
					t.Fatalf("%s: proposal %d differs: %s vs %s", name, i, a[i], b[i])
				}
			}
		}
	}
	a := drain(t, NewRandom(space(), Options{Seed: 1}), 20, 20)
	b := drain(t, NewRandom(space(), Options{Seed: 2}), 20, 20)
	same := true
	for i := range a {
		same = same && a[i].Equal(b[i])
	}
	if same {
		t.Error("seeds 1 and 2 gave the same random order")
	}
}

func TestGridOrder(t *testing.T) {
	got := drain(t, NewGrid(space(), Options{}), 3, 3)
	want := []string{"vec=1,unroll=1,algo=threepass", "vec=1,unroll=2,algo=threepass", "vec=1,unroll=4,algo=threepass"}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("grid proposal %d = %s, want %s", i, got[i], want[i])
		}
	}
}

func TestRandomOnLargeSpace(t *testing.T) {
	s := bigSpace()
	all := drain(t, NewRandom(s, Options{Seed: 9}), 50, 500)
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.String()] {
			t.Fatalf("repeat %s", c)
		}
		seen[c.String()] = true
	}
	if len(all) != 500 {
		t.Errorf("got %d proposals from a space of %d", len(all), s.Size())
	}
}
