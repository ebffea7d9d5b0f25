package schedule

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// testSpace looks like a small softmax space: a constraint couples two knobs.
func testSpace() *Space {
	return NewSpace([]Knob{
		Choice("vec", 1, 8, 16),
		Choice("unroll", 1, 2, 4, 8),
		Enum("algo", "threepass", "online"),
		Bool("fma"),
		Choice("rows", 1, 2, 3, 4, 6, 12),
	}, Constraint{Name: "fma_needs_vectors", OK: func(c Config) bool {
		return !c.Bool("fma") || c.Int("vec") > 1
	}})
}

func TestKnobConstructors(t *testing.T) {
	tests := []struct {
		knob Knob
		want string
	}{
		{Choice("vec", 1, 8, 16), "vec choice {1,8,16}"},
		{Enum("algo", "a", "b"), "algo enum {a,b}"},
		{Bool("fma"), "fma bool {false,true}"},
	}
	for _, tt := range tests {
		if got := tt.knob.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestNewSpacePanicsOnTemplateBugs(t *testing.T) {
	tests := map[string]func(){
		"duplicate knob":     func() { NewSpace([]Knob{Bool("a"), Bool("a")}) },
		"no values":          func() { NewSpace([]Knob{Choice("a")}) },
		"repeated value":     func() { NewSpace([]Knob{Choice("a", 1, 1)}) },
		"bad enum value":     func() { NewSpace([]Knob{Enum("a", "true")}) },
		"numeric enum":       func() { NewSpace([]Knob{Enum("a", "16")}) },
		"bad name":           func() { NewSpace([]Knob{Bool("A b")}) },
		"mixed kinds":        func() { NewSpace([]Knob{{Name: "a", Kind: ChoiceKind, Values: []Value{IntValue(1), BoolValue(true)}}}) },
		"unnamed constraint": func() { NewSpace([]Knob{Bool("a")}, Constraint{OK: func(Config) bool { return true }}) },
		"overflow": func() {
			var ks []Knob
			for i := range 70 {
				ks = append(ks, Bool("k"+string(rune('a'+i%26))+strings.Repeat("x", i/26)))
			}
			NewSpace(ks)
		},
	}
	for name, f := range tests {
		t.Run(name, func(t *testing.T) { mustPanic(t, name, f) })
	}
}

func TestIndexBijection(t *testing.T) {
	s := testSpace()
	if s.Size() != 3*4*2*2*6 {
		t.Fatalf("Size() = %d", s.Size())
	}
	seen := make(map[string]bool)
	for i := range s.Size() {
		c := s.At(i)
		j, err := s.Index(c)
		if err != nil || j != i {
			t.Fatalf("Index(At(%d)) = %d, %v", i, j, err)
		}
		if seen[c.String()] {
			t.Fatalf("At(%d) = %s, seen before", i, c)
		}
		seen[c.String()] = true
	}
	// Last knob fastest, first knob slowest.
	if got := s.At(1).String(); got != "vec=1,unroll=1,algo=threepass,fma=false,rows=2" {
		t.Errorf("At(1) = %s", got)
	}
	if got := s.At(s.Size() - 1).String(); got != "vec=16,unroll=8,algo=online,fma=true,rows=12" {
		t.Errorf("At(last) = %s", got)
	}
	mustPanic(t, "At(-1)", func() { s.At(-1) })
	mustPanic(t, "At(Size)", func() { s.At(s.Size()) })
}

func TestParseAndCheck(t *testing.T) {
	s := testSpace()
	c, err := s.Parse("rows=4,fma=true,algo=online,unroll=2,vec=8")
	if err != nil {
		t.Fatal(err)
	}
	if c.String() != "vec=8,unroll=2,algo=online,fma=true,rows=4" {
		t.Errorf("Parse did not canonicalise: %s", c)
	}
	if err := s.Check(c); err != nil {
		t.Errorf("Check(%s) = %v", c, err)
	}
	for text, want := range map[string]string{
		"vec=8,unroll=2,algo=online,fma=true":            "no value for knob rows",
		"vec=8,unroll=2,algo=online,fma=true,rows=5":     "rows=5 is not one of rows choice",
		"vec=8,unroll=2,algo=fast,fma=true,rows=4":       "algo=fast is not one of",
		"vec=8,unroll=2,algo=online,fma=1,rows=4":        "fma=1 is not one of",
		"vec=8,unroll=2,algo=online,fma=true,rows=4,x=1": "unknown knob x",
	} {
		if _, err := s.Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", text, err, want)
		}
	}
	bad, _ := s.Parse("vec=1,unroll=2,algo=online,fma=true,rows=4")
	var ce *ConstraintError
	if err := s.Check(bad); !errors.As(err, &ce) || ce.Constraint != "fma_needs_vectors" {
		t.Errorf("Check(%s) = %v, want fma_needs_vectors", bad, err)
	}
	if s.Valid(bad) {
		t.Error("Valid accepted a config that breaks a constraint")
	}
}

func TestSampleUniformAndDeterministic(t *testing.T) {
	s := testSpace()
	r := rand.New(rand.NewPCG(1, 2))
	counts := make(map[string]int)
	const n = 40000
	for range n {
		c, err := s.Sample(r)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Valid(c) {
			t.Fatalf("Sample returned invalid %s", c)
		}
		counts[c.String()]++
	}
	// 288 points, the 48 with fma=true,vec=1 invalid: 240 valid.
	if len(counts) != 240 {
		t.Fatalf("sampled %d distinct configs, want all 240 valid ones", len(counts))
	}
	mean := float64(n) / 240
	for c, k := range counts {
		if math.Abs(float64(k)-mean) > 6*math.Sqrt(mean) { // far beyond chance
			t.Errorf("%s sampled %d times, mean %.0f: not uniform", c, k, mean)
		}
	}
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for range 100 {
		x, _ := s.Sample(a)
		y, _ := s.Sample(b)
		if !x.Equal(y) {
			t.Fatal("same seed gave different samples")
		}
	}
}

func TestSampleRareAndImpossible(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	knobs := []Knob{Choice("a", 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096), Choice("b", 1, 2, 3, 4)} // 13*4 = 52 points
	only := Constraint{Name: "only_one", OK: func(c Config) bool { return c.Int("a") == 1024 && c.Int("b") == 3 }}
	never := Constraint{Name: "never", OK: func(Config) bool { return false }}

	// One valid point in 52: rejection usually finds it, enumeration surely does.
	rare := NewSpace(knobs, only)
	for range 20 {
		c, err := rare.Sample(r)
		if err != nil || c.String() != "a=1024,b=3" {
			t.Fatalf("Sample = %s, %v", c, err)
		}
	}
	if _, err := NewSpace(knobs, never).Sample(r); err == nil || !strings.Contains(err.Error(), "never") {
		t.Errorf("empty small space: %v", err)
	}
	// Too large to enumerate: the error names the constraints that rejected the draws.
	wide := make([]int, 1100)
	for i := range wide {
		wide[i] = i
	}
	big := NewSpace([]Knob{Choice("a", wide...), Choice("b", wide...)}, never) // 1.21 million points
	if big.Size() <= enumerateLimit {
		t.Fatalf("test space of %d points is small enough to enumerate", big.Size())
	}
	if _, err := big.Sample(r); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rejected by never (%d)", sampleDraws+rareDraws)) {
		t.Errorf("empty large space: %v", err)
	}
	// Too large to enumerate, with valid points rarer than one in
	// sampleDraws (GEMM's at tiny shapes): Sample still finds them.
	sparse := NewSpace([]Knob{Choice("a", wide...), Choice("b", wide...)}, Constraint{Name: "rare", OK: func(c Config) bool {
		return c.Int("a") < 11 && c.Int("b") < 11 // 121 of 1.21 million points: 10^4 draws miss them 37% of the time
	}})
	for i := range 20 {
		c, err := sparse.Sample(r)
		if err != nil || !sparse.Valid(c) {
			t.Fatalf("draw %d of a space with sparse valid points: %v, %v", i, c, err)
		}
	}
}

func TestMutate(t *testing.T) {
	s := testSpace()
	r := rand.New(rand.NewPCG(5, 6))
	c, _ := s.Parse("vec=8,unroll=2,algo=online,fma=true,rows=4")
	for range 500 {
		m, err := s.Mutate(r, c)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Valid(m) {
			t.Fatalf("invalid mutant %s", m)
		}
		diff := 0
		for i := range m.Len() {
			if m.At(i) != c.At(i) {
				diff++
			}
		}
		if diff != 1 {
			t.Fatalf("mutant %s of %s differs in %d knobs", m, c, diff)
		}
	}
	one := NewSpace([]Knob{Choice("a", 1)})
	if _, err := one.Mutate(r, one.At(0)); err == nil {
		t.Error("mutating a single-point space did not fail")
	}
}

func TestCrossover(t *testing.T) {
	s := testSpace()
	r := rand.New(rand.NewPCG(8, 9))
	a, _ := s.Parse("vec=8,unroll=1,algo=online,fma=true,rows=1")
	b, _ := s.Parse("vec=16,unroll=8,algo=threepass,fma=false,rows=12")
	children := make(map[string]bool)
	for range 300 {
		c, err := s.Crossover(r, a, b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Len() {
			if c.At(i) != a.At(i) && c.At(i) != b.At(i) {
				t.Fatalf("child %s has a value from neither parent", c)
			}
		}
		children[c.String()] = true
	}
	if len(children) != 32 { // 2^5 combinations, all valid since both vec > 1
		t.Errorf("%d distinct children, want 32", len(children))
	}
}

func TestFeatures(t *testing.T) {
	s := testSpace()
	c, _ := s.Parse("vec=16,unroll=1,algo=online,fma=true,rows=4")
	want := []float64{4, 0, 0, 1, 1, 2}
	if got := s.Features(c); !slices.Equal(got, want) {
		t.Errorf("Features = %v, want %v", got, want)
	}
	names := []string{"vec", "unroll", "algo=threepass", "algo=online", "fma", "rows"}
	if got := s.FeatureNames(); !slices.Equal(got, names) {
		t.Errorf("FeatureNames = %v, want %v", got, names)
	}
	if logSize(0) >= logSize(1) || logSize(-1) >= logSize(0) {
		t.Error("logSize is not monotone below 1")
	}
}

func TestSpaceCopiesItsInputs(t *testing.T) {
	knobs := []Knob{Choice("a", 1, 2)}
	s := NewSpace(knobs)
	knobs[0].Values[0] = IntValue(99)
	s.Knobs()[0].Values[1] = IntValue(98)
	if got := s.At(0).String() + " " + s.At(1).String(); got != "a=1 a=2" {
		t.Errorf("space changed through a caller's slice: %s", got)
	}
}

func FuzzIndexRoundTrip(f *testing.F) {
	s := testSpace()
	for _, i := range []int64{0, 1, 17, s.Size() - 1} {
		f.Add(i)
	}
	f.Fuzz(func(t *testing.T, i int64) {
		if i < 0 {
			i = -(i + 1)
		}
		i %= s.Size()
		c := s.At(i)
		j, err := s.Index(c)
		if err != nil || j != i {
			t.Fatalf("Index(At(%d)) = %d, %v", i, j, err)
		}
		back, err := s.Parse(c.String())
		if err != nil || !back.Equal(c) {
			t.Fatalf("Parse(%s) = %s, %v", c, back, err)
		}
	})
}

func FuzzSpaceParse(f *testing.F) {
	s := testSpace()
	f.Add("vec=8,unroll=2,algo=online,fma=true,rows=4")
	f.Add("rows=4")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := s.Parse(text)
		if err != nil {
			return
		}
		if _, err := s.Index(c); err != nil {
			t.Fatalf("Parse accepted %q but Index rejects it: %v", text, err)
		}
		_ = s.Check(c)
		_ = s.Features(c)
	})
}

// Violated names every constraint a point fails, not only the first.
func TestViolated(t *testing.T) {
	s := NewSpace([]Knob{Choice("a", 1, 2, 3)},
		Constraint{Name: "a_odd", OK: func(c Config) bool { return c.Int("a")%2 == 1 }},
		Constraint{Name: "a_small", OK: func(c Config) bool { return c.Int("a") < 2 }})
	for text, want := range map[string]string{"a=1": "", "a=2": "a_odd a_small", "a=3": "a_small"} {
		c, err := s.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Violated(c)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("Violated(%s) = %q, %v; want %q", text, got, err, want)
		}
	}
	other := NewSpace([]Knob{Choice("b", 1)})
	if _, err := s.Violated(other.At(0)); err == nil {
		t.Error("a point of another space has no error")
	}
}

func TestPin(t *testing.T) {
	s := NewSpace([]Knob{Choice("vec", 1, 8), Enum("convert", "copy", "pack", "dot")},
		Constraint{Name: "dot_needs_vec8", OK: func(c Config) bool { return c.Str("convert") != "dot" || c.Int("vec") == 8 }})
	p := s.Pin("convert")
	if p.Size() != 2 {
		t.Fatalf("pinned space has %d points, want 2", p.Size())
	}
	for i := range p.Size() {
		c := p.At(i)
		if c.Str("convert") != "copy" || !s.Valid(c) {
			t.Errorf("pinned point %s: want convert=copy, valid in the full space", c)
		}
	}
	if _, err := p.Parse("vec=8,convert=pack"); err == nil {
		t.Error("the pinned space parsed a value it no longer has")
	}
	if got := p.Constraints(); len(got) != 1 || got[0] != "dot_needs_vec8" {
		t.Errorf("pinned space's constraints %v, want the original's", got)
	}
	if s.Pin("threads") != s {
		t.Error("pinning a knob the space lacks changed it")
	}
}

func TestWith(t *testing.T) {
	s := NewSpace([]Knob{Choice("vec", 1, 8), Enum("convert", "copy", "pack", "dot")},
		Constraint{Name: "dot_needs_vec8", OK: func(c Config) bool { return c.Str("convert") != "dot" || c.Int("vec") == 8 }})
	w := s.With(Constraint{Name: "no_dot", OK: func(c Config) bool { return c.Str("convert") != "dot" }})
	valid := 0
	for i := range w.Size() {
		c := w.At(i)
		if w.Valid(c) {
			valid++
			if !s.Valid(c) {
				t.Errorf("%s: valid with more constraints, not in the space", c)
			}
		}
	}
	if valid != 4 {
		t.Errorf("%d valid points with convert=dot ruled out, want 4", valid)
	}
	if got := w.Constraints(); !slices.Equal(got, []string{"dot_needs_vec8", "no_dot"}) {
		t.Errorf("constraints %v, want the space's and the new one", got)
	}
	if got := s.Constraints(); len(got) != 1 {
		t.Errorf("With changed the space's constraints: %v", got)
	}
	if s.With() != s {
		t.Error("With of nothing made a new space")
	}
}
