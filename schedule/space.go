package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
)

// A Constraint is a named predicate that every valid config satisfies, e.g.
// "vec16_needs_avx512". The name appears in logs and errors when a point is
// rejected, so make it say what is wrong.
type Constraint struct {
	Name string
	OK   func(Config) bool
}

// ConstraintError reports the constraint a config violates.
type ConstraintError struct {
	Constraint string
	Config     Config
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("schedule: config %s violates constraint %s", e.Config, e.Constraint)
}

// Space is the knob space of one template for one workload and target: an
// ordered list of knobs and the constraints that make a point valid.
//
// Every point of the Cartesian product of the knobs' values has an index in
// [0, Size()): a mixed-radix number whose digits are the positions of the
// values in their knobs, the last knob varying fastest (AutoTVM's
// point2knob). Not every point is valid; Check tells.
//
// A Space is immutable and safe for concurrent use.
type Space struct {
	knobs       []Knob
	constraints []Constraint
	pos         map[string]int // knob name → position in knobs
	size        int64

	validOnce sync.Once
	valid     []int64 // every valid index, only for spaces small enough to enumerate
}

// enumerateLimit bounds the spaces Sample falls back to enumerating when
// rejection sampling finds nothing; larger spaces report an error instead.
// Enumerating checks every point once per Space (about a second for 2^20
// points); small spaces with few valid points are what rejection sampling
// misses (below: larger ones get more draws).
const enumerateLimit = 1 << 20

// sampleAttempts bounds mutation and crossover.
const sampleAttempts = 1000

// sampleDraws bounds rejection sampling. A draw costs a constraint check
// (about a microsecond), and a space too large to enumerate may still have
// few valid points: GEMM's for a 64³ product on 2 AVX2 cores has 1.7·10^6
// points and 3408 valid, which 1000 draws miss one time in eight and
// 10^4 draws once in 10^9.
const sampleDraws = 10000

// rareDraws are the draws Sample makes after sampleDraws failed in a space
// too large to enumerate: one whose valid points are rarer still. GEMM's
// bf16 space for a 1×1×1 product has 5·10^6 points and 284 valid, which
// 10^4 draws miss more often than not and 2^18 draws once in 10^6. They
// cost a quarter of a second when every one fails.
const rareDraws = 1 << 18

// NewSpace returns the space of the given knobs and constraints. It panics
// when a knob is malformed (bad name, no values, mixed or repeated values),
// two knobs share a name, a constraint has no name or predicate, or the space
// has more than 2^63-1 points: each of these is a bug in a template, not an
// input error.
func NewSpace(knobs []Knob, constraints ...Constraint) *Space {
	s := &Space{
		knobs:       slices.Clone(knobs),
		constraints: slices.Clone(constraints),
		pos:         make(map[string]int, len(knobs)),
		size:        1,
	}
	for i, k := range s.knobs {
		if err := k.check(); err != nil {
			panic("schedule: " + err.Error())
		}
		if _, dup := s.pos[k.Name]; dup {
			panic(fmt.Sprintf("schedule: two knobs named %s", k.Name))
		}
		s.pos[k.Name] = i
		s.knobs[i].Values = slices.Clone(k.Values)
		n := int64(len(k.Values))
		if s.size > math.MaxInt64/n {
			panic("schedule: space has more than 2^63-1 points")
		}
		s.size *= n
	}
	for _, c := range s.constraints {
		if c.Name == "" || c.OK == nil {
			panic("schedule: a constraint needs a name and a predicate")
		}
	}
	return s
}

// Knobs returns the knobs in order. The slice is a copy.
func (s *Space) Knobs() []Knob {
	out := slices.Clone(s.knobs)
	for i := range out {
		out[i].Values = slices.Clone(out[i].Values)
	}
	return out
}

// Knob returns the named knob.
func (s *Space) Knob(name string) (Knob, bool) {
	i, ok := s.pos[name]
	if !ok {
		return Knob{}, false
	}
	k := s.knobs[i]
	k.Values = slices.Clone(k.Values)
	return k, true
}

// Constraints returns the names of the constraints, in order.
func (s *Space) Constraints() []string {
	names := make([]string, len(s.constraints))
	for i, c := range s.constraints {
		names[i] = c.Name
	}
	return names
}

// Size returns the number of points, valid or not.
func (s *Space) Size() int64 { return s.size }

// At returns the point with index i. It panics unless 0 <= i < Size().
func (s *Space) At(i int64) Config {
	if i < 0 || i >= s.size {
		panic(fmt.Sprintf("schedule: index %d out of range [0, %d)", i, s.size))
	}
	return s.fromDigits(s.digits(i))
}

func (s *Space) digits(i int64) []int {
	d := make([]int, len(s.knobs))
	for k := len(s.knobs) - 1; k >= 0; k-- {
		n := int64(len(s.knobs[k].Values))
		d[k] = int(i % n)
		i /= n
	}
	return d
}

func (s *Space) fromDigits(d []int) Config {
	c := Config{names: make([]string, len(s.knobs)), vals: make([]Value, len(s.knobs))}
	for k, knob := range s.knobs {
		c.names[k] = knob.Name
		c.vals[k] = knob.Values[d[k]]
	}
	return c
}

// toDigits returns the position of each of c's values in its knob, in knob
// order, or an error when c is not a point of s.
func (s *Space) toDigits(c Config) ([]int, error) {
	if c.Len() != len(s.knobs) {
		for _, k := range s.knobs {
			if _, ok := c.Lookup(k.Name); !ok {
				return nil, fmt.Errorf("schedule: config %q has no value for knob %s", c, k.Name)
			}
		}
	}
	d := make([]int, len(s.knobs))
	for i, name := range c.names {
		k, ok := s.pos[name]
		if !ok {
			return nil, fmt.Errorf("schedule: config %q: unknown knob %s (knobs: %s)", c, name, strings.Join(s.knobNames(), ", "))
		}
		j := slices.Index(s.knobs[k].Values, c.vals[i])
		if j < 0 {
			return nil, fmt.Errorf("schedule: config %q: %s=%s is not one of %s", c, name, c.vals[i], s.knobs[k])
		}
		d[k] = j
	}
	return d, nil
}

func (s *Space) knobNames() []string {
	names := make([]string, len(s.knobs))
	for i, k := range s.knobs {
		names[i] = k.Name
	}
	return names
}

// Index returns the index of c, which may list its knobs in any order. It
// reports an error when c is not a point of s (a knob missing or unknown, a
// value not among its knob's values); constraints are not checked.
func (s *Space) Index(c Config) (int64, error) {
	d, err := s.toDigits(c)
	if err != nil {
		return 0, err
	}
	var i int64
	for k, knob := range s.knobs {
		i = i*int64(len(knob.Values)) + int64(d[k])
	}
	return i, nil
}

// Parse reads a config's text form (see ParseConfig), in any knob order, and
// returns it in the canonical order of s. Constraints are not checked: use
// Check for that.
func (s *Space) Parse(text string) (Config, error) {
	c, err := ParseConfig(text)
	if err != nil {
		return Config{}, err
	}
	return s.Canonical(c)
}

// Canonical returns c with its knobs in the order of s, or an error when c is
// not a point of s.
func (s *Space) Canonical(c Config) (Config, error) {
	d, err := s.toDigits(c)
	if err != nil {
		return Config{}, err
	}
	return s.fromDigits(d), nil
}

// Check returns nil when c is a valid point of s: a point of the space that
// satisfies every constraint. A violated constraint is reported as a
// *ConstraintError naming the first one that fails.
func (s *Space) Check(c Config) error {
	c, err := s.Canonical(c)
	if err != nil {
		return err
	}
	if name := s.violated(c); name != "" {
		return &ConstraintError{Constraint: name, Config: c}
	}
	return nil
}

// violated returns the name of the first constraint c (canonical) fails, or "".
func (s *Space) violated(c Config) string {
	for _, con := range s.constraints {
		if !con.OK(c) {
			return con.Name
		}
	}
	return ""
}

// Violated returns the names of every constraint c fails, in declaration
// order: none for a valid point. It returns an error when c is not a
// point of the space.
func (s *Space) Violated(c Config) ([]string, error) {
	c, err := s.Canonical(c)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, con := range s.constraints {
		if !con.OK(c) {
			names = append(names, con.Name)
		}
	}
	return names, nil
}

// Valid reports whether Check(c) is nil.
func (s *Space) Valid(c Config) bool { return s.Check(c) == nil }

// Sample returns a valid config drawn uniformly at random with r. It draws up
// to a bounded number of points and keeps the first valid one; when all are
// rejected it enumerates a small space exactly, and otherwise reports which
// constraints rejected the draws.
func (s *Space) Sample(r *rand.Rand) (Config, error) {
	rejected := make(map[string]int)
	if c, ok := s.draw(r, sampleDraws, rejected); ok {
		return c, nil
	}
	if s.size <= enumerateLimit {
		valid := s.validIndexes()
		if len(valid) == 0 {
			return Config{}, errors.New("schedule: the space has no valid config; constraints: " + strings.Join(s.Constraints(), ", "))
		}
		return s.At(valid[r.IntN(len(valid))]), nil
	}
	if c, ok := s.draw(r, rareDraws, rejected); ok {
		return c, nil
	}
	return Config{}, fmt.Errorf("schedule: no valid config in %d random draws from %d points; rejected by %s",
		sampleDraws+rareDraws, s.size, rejections(rejected))
}

// draw returns the first valid point of up to n drawn uniformly with r,
// counting in rejected the constraint that turned down each invalid one.
func (s *Space) draw(r *rand.Rand, n int, rejected map[string]int) (Config, bool) {
	for range n {
		c := s.At(r.Int64N(s.size))
		name := s.violated(c)
		if name == "" {
			return c, true
		}
		rejected[name]++
	}
	return Config{}, false
}

// validIndexes enumerates the valid points of a small space, once.
func (s *Space) validIndexes() []int64 {
	s.validOnce.Do(func() {
		for i := range s.size {
			if s.violated(s.At(i)) == "" {
				s.valid = append(s.valid, i)
			}
		}
	})
	return s.valid
}

// rejections formats rejection counts, most frequent first: "regs (812), vec16_needs_avx512 (188)".
func rejections(m map[string]int) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s (%d)", n, m[n])
	}
	return strings.Join(parts, ", ")
}

// Mutate returns a valid config that differs from c in one knob: with
// probability one half the knob moves to a neighbouring value, otherwise to
// any other value. It reports an error when no valid mutation turns up in a
// bounded number of tries (for example when c's only neighbours are invalid
// or the space has a single point).
func (s *Space) Mutate(r *rand.Rand, c Config) (Config, error) {
	d, err := s.toDigits(c)
	if err != nil {
		return Config{}, err
	}
	var movable []int
	for k, knob := range s.knobs {
		if len(knob.Values) > 1 {
			movable = append(movable, k)
		}
	}
	if len(movable) == 0 {
		return Config{}, errors.New("schedule: cannot mutate a space with a single point")
	}
	for range sampleAttempts {
		k := movable[r.IntN(len(movable))]
		n := len(s.knobs[k].Values)
		old := d[k]
		if r.IntN(2) == 0 {
			d[k] = neighbour(r, old, n)
		} else {
			d[k] = (old + 1 + r.IntN(n-1)) % n // any value but old
		}
		m := s.fromDigits(d)
		d[k] = old
		if s.violated(m) == "" {
			return m, nil
		}
	}
	return Config{}, fmt.Errorf("schedule: no valid mutation of %s in %d tries", c, sampleAttempts)
}

// neighbour returns i-1 or i+1, whichever exist in [0, n), at random.
func neighbour(r *rand.Rand, i, n int) int {
	switch {
	case i == 0:
		return 1
	case i == n-1:
		return n - 2
	case r.IntN(2) == 0:
		return i - 1
	}
	return i + 1
}

// Crossover returns a valid config that takes each knob's value from a or b
// at random (uniform crossover). It reports an error when no valid child
// turns up in a bounded number of tries.
func (s *Space) Crossover(r *rand.Rand, a, b Config) (Config, error) {
	da, err := s.toDigits(a)
	if err != nil {
		return Config{}, err
	}
	db, err := s.toDigits(b)
	if err != nil {
		return Config{}, err
	}
	child := make([]int, len(s.knobs))
	for range sampleAttempts {
		for k := range child {
			if r.IntN(2) == 0 {
				child[k] = da[k]
			} else {
				child[k] = db[k]
			}
		}
		c := s.fromDigits(child)
		if s.violated(c) == "" {
			return c, nil
		}
	}
	return Config{}, fmt.Errorf("schedule: no valid crossover of %s and %s in %d tries", a, b, sampleAttempts)
}

// FeatureNames names the entries of Features, in order: one per choice
// and bool knob ("vec"), one per enum value ("algo=online").
func (s *Space) FeatureNames() []string {
	var names []string
	for _, k := range s.knobs {
		if k.Kind == EnumKind {
			for _, v := range k.Values {
				names = append(names, k.Name+"="+v.s)
			}
			continue
		}
		names = append(names, k.Name)
	}
	return names
}

// Features returns c as a numeric vector for the cost model: sizes (choice
// values) as log2, so that doubling a tile is one step whatever its
// size; enums one-hot; bools 0 or 1. c must be a point of s; it panics
// otherwise, since features are only asked of proposed configs.
func (s *Space) Features(c Config) []float64 {
	d, err := s.toDigits(c)
	if err != nil {
		panic(err)
	}
	var f []float64
	for k, knob := range s.knobs {
		v := knob.Values[d[k]]
		switch knob.Kind {
		case EnumKind:
			for j := range knob.Values {
				f = append(f, b2f(j == d[k]))
			}
		case BoolKind:
			f = append(f, b2f(v.Bool()))
		default:
			f = append(f, logSize(v.Int()))
		}
	}
	return f
}

// logSize is log2(n) for n >= 1 and continues monotonically as n-1 below, so
// that knobs with a 0 or negative setting still order correctly.
func logSize(n int) float64 {
	if n >= 1 {
		return math.Log2(float64(n))
	}
	return float64(n - 1)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Pin returns the space with the named knob limited to its first value:
// the points whose other knobs are the same but that differ in this one are
// then one point. A template's knob that means nothing for some workloads
// (where 16-bit elements are converted, for float32 arguments) is pinned
// so that a search does not time one kernel under several names; the
// configs keep the knob, with that value, so they stay valid in the full
// space. Pin returns s itself when it has no such knob.
func (s *Space) Pin(name string) *Space {
	i, ok := s.pos[name]
	if !ok || len(s.knobs[i].Values) == 1 {
		return s
	}
	knobs := s.Knobs()
	knobs[i].Values = knobs[i].Values[:1]
	return NewSpace(knobs, s.constraints...)
}

// With returns the space with more constraints besides s's: for a
// template's points that are valid in general but name, for some
// workloads, a kernel another point already names (a value of a knob that
// only one element type has a form of), so that a search of those
// workloads does not time it twice. Points valid in the result are valid
// in s.
func (s *Space) With(more ...Constraint) *Space {
	if len(more) == 0 {
		return s
	}
	return NewSpace(s.Knobs(), append(slices.Clip(s.constraints), more...)...)
}
