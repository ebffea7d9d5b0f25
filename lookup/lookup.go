package lookup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	// Every answer needs the op's template from the registry; a program
	// that imports only lookup must find the ops autotune ships.
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Rule says which rule answered a lookup.
type Rule string

const (
	Exact   Rule = "exact"
	Bucket  Rule = "bucket"
	Nearest Rule = "nearest"
	Default Rule = "default"
)

// Answer is the config to use for a workload and why.
type Answer struct {
	Config schedule.Config
	Rule   Rule
	// Shape is the tuned shape whose winner Config is (the asked shape for
	// Exact); Record is that winner's record, shared by every answer that
	// names it: read it, do not change it. Both are nil for Default.
	Shape  []int
	Record *tunedb.Record
	// Range is the tuned range whose bucket Shape is, for Bucket; nil
	// otherwise. It is shared too.
	Range *tunedb.Range
}

// Toolchain is the toolchain that built the winner (its record's), "" for
// Default or an unknown one.
func (a Answer) Toolchain() string {
	if a.Record == nil {
		return ""
	}
	return a.Record.Workload.Toolchain
}

// String says what answered, e.g. "nearest 4096x1024", or "bucket
// 64x1024 of 1..4096x1024", as a generated package's Variant says it.
func (a Answer) String() string {
	switch {
	case a.Rule == Default:
		return string(a.Rule)
	case a.Range != nil:
		return string(a.Rule) + " " + kernels.FormatShape(a.Shape) + " of " + a.Range.String()
	}
	return string(a.Rule) + " " + kernels.FormatShape(a.Shape)
}

// Options configures Open. A nil *Options means the zero Options.
type Options struct {
	// Timeout is how long Open waits for a tuner that holds the database.
	// Zero means one second.
	Timeout time.Duration
}

// Table answers lookups from a snapshot of tuning records. It is safe for
// concurrent use.
type Table struct {
	best      []tunedb.Record // the best record of every workload that has one
	ranges    []tunedb.Range  // every tuned range
	toolchain string          // preferred; see Prefer

	mu    sync.RWMutex
	cache map[cacheKey]Answer
}

// cacheKey identifies a question without building a string, so that a
// cached answer costs a map read and no allocation but the answer's shape.
type cacheKey struct {
	op, device string
	dtype      dtype.DType
	dims       int
	shape      [maxCachedDims]int
}

// maxCachedDims bounds the shapes whose answers are cached; every op has
// at most four dimensions.
const maxCachedDims = 8

// Open reads the tuning database at path. It never creates one: a missing
// path is an error matching fs.ErrNotExist.
func Open(path string, o *Options) (*Table, error) {
	timeout := time.Second
	if o != nil && o.Timeout > 0 {
		timeout = o.Timeout
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("lookup: no database at %s: %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("lookup: %w", err)
	}
	db, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true, Shared: true, Timeout: timeout})
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	defer db.Close()
	return New(db)
}

// Source is what a Table is read from: a tuning database (tunedb.DB,
// tunedb.Memory) or anything else that summarises workloads and keeps
// tuned ranges as they do.
type Source interface {
	Workloads() ([]tunedb.Summary, error)
	Ranges() ([]tunedb.Range, error)
}

// New reads a Table from src, once.
func New(src Source) (*Table, error) {
	sums, err := src.Workloads()
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	rs, err := src.Ranges()
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	t := &Table{ranges: rs, cache: map[cacheKey]Answer{}}
	for _, s := range sums {
		if s.Best != nil {
			t.best = append(t.best, *s.Best)
		}
	}
	return t, nil
}

// Load reads a JSON Lines log, as `autotune db export` writes it (its
// records and tuned ranges), checking every line as `autotune db import`
// does.
func Load(r io.Reader) (*Table, error) {
	recs, rs, err := tunedb.ReadLog(r)
	if err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	mem := tunedb.NewMemory()
	if err := mem.Commit(recs); err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	for _, rng := range rs {
		if err := mem.SaveRange(rng); err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
	}
	return New(mem)
}

// Prefer returns a Table of the same records that prefers those built by
// toolchain (a tunedb.Workload.Toolchain, such as "go1.26.0"): of the
// records of a shape, it answers with that toolchain's when there is one,
// else with another toolchain's, and the answer names it
// (Answer.Toolchain), for the caller to say so. The Table Open, New and
// Load return prefers none, and takes of each shape the toolchain measured
// last.
func (t *Table) Prefer(toolchain string) *Table {
	return &Table{best: t.best, ranges: t.ranges, toolchain: toolchain, cache: map[cacheKey]Answer{}}
}

// Best returns the config to use for op at shape, of dtype dt, on the
// device with the given fingerprint, and which rule chose it (see the
// package doc). It fails when the op is unknown or has no kernels of dt,
// the shape is not one of the op's, the device fingerprint cannot be read,
// or the op has no template for the device's backend.
func (t *Table) Best(op string, shape []int, dt dtype.DType, fingerprint string) (Answer, error) {
	if len(shape) > maxCachedDims {
		return t.answer(op, shape, dt, fingerprint)
	}
	key := cacheKey{op: op, dtype: dt, device: fingerprint, dims: len(shape)}
	copy(key.shape[:], shape)
	t.mu.RLock()
	a, ok := t.cache[key]
	t.mu.RUnlock()
	if !ok {
		var err error
		if a, err = t.answer(op, shape, dt, fingerprint); err != nil {
			return Answer{}, err
		}
		t.mu.Lock()
		t.cache[key] = a
		t.mu.Unlock()
	}
	a.Shape = slices.Clone(a.Shape) // the caller's to change
	return a, nil
}

func (t *Table) answer(op string, shape []int, dt dtype.DType, fingerprint string) (Answer, error) {
	o, err := kernels.Lookup(op)
	if err != nil {
		return Answer{}, fmt.Errorf("lookup: %w", err)
	}
	if _, err := o.ParseShape(kernels.FormatShape(shape)); err != nil {
		return Answer{}, fmt.Errorf("lookup: %w", err)
	}
	target, err := device.FromFingerprint(fingerprint)
	if err != nil {
		return Answer{}, fmt.Errorf("lookup: %w", err)
	}
	tmpl, ok := kernels.TemplateFor(op, kernels.BackendOf(target))
	if !ok {
		return Answer{}, fmt.Errorf("lookup: op %s has no %s template", op, kernels.BackendOf(target))
	}
	if err := tmpl.CheckDType(dt); err != nil { // a template may have fewer dtypes than its op
		return Answer{}, fmt.Errorf("lookup: %w", err)
	}
	var sums []tunedb.Summary
	for i := range t.best {
		if w := t.best[i].Workload; w.Op == op && w.DType == dt && w.Device == fingerprint && w.Template == tmpl.Version {
			sums = append(sums, tunedb.Summary{Workload: w, Best: &t.best[i]})
		}
	}
	sums = tunedb.PreferToolchain(sums, t.toolchain)
	tuned := make([][]int, len(sums))
	for i, s := range sums {
		tuned[i] = s.Workload.Shape
	}
	var rs []tunedb.Range
	var index []int // of rs in t.ranges
	for i, r := range t.ranges {
		if w := r.Workload; w.Op == op && w.DType == dt && w.Device == fingerprint && w.Template == tmpl.Version {
			rs, index = append(rs, r), append(index, i)
		}
	}
	s := tunedb.Serve(shape, tuned, rs, nil)
	if s.Tuned < 0 {
		cfg, err := tmpl.DefaultConfig(shape, target)
		if err != nil {
			return Answer{}, fmt.Errorf("lookup: %w", err)
		}
		return Answer{Config: cfg, Rule: Default}, nil
	}
	r := sums[s.Tuned].Best
	a := Answer{Config: r.Config, Rule: Nearest, Shape: slices.Clone(tuned[s.Tuned]), Record: r}
	switch {
	case s.Exact:
		a.Rule = Exact
	case s.Range >= 0:
		a.Rule, a.Range = Bucket, &t.ranges[index[s.Range]]
	}
	return a, nil
}
