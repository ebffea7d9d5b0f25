package gen

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen/amd64"
	"github.com/autotune-dev/autotune/gen/arm64"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Source is where the tuning records come from: a tuning database
// (tunedb.DB, tunedb.Memory), as for lookup.New.
type Source interface {
	Workloads() ([]tunedb.Summary, error)
	Ranges() ([]tunedb.Range, error) // the tuned shape ranges, whose buckets dispatch uses
}

// Options says what to generate. Pkg and Device are required.
type Options struct {
	// Pkg is the package name of the generated package.
	Pkg string
	// Device is the fingerprint (device.Target.Fingerprint) of the CPU
	// whose records are used.
	Device string
	// Ops are the ops to generate, by name; nil means every op with a
	// CPU template. An op brings the ops of its variants (attention brings
	// attention_causal, which its causal flag runs), and a variant its op.
	Ops []string
	// Variants is how many shape-generic winners each op gets besides its
	// default config and the winners of its tuned ranges' buckets, which
	// always get theirs; 0 means 3, and a negative number none.
	Variants int
	// Command is the command line the files' header names, such as
	// `autotune gen --out fastkernels --pkg fastkernels`.
	Command string
	// DType is the element type of the kernels: records of it are used,
	// and an op without kernels of it is an error. "" means
	// dtype.Default. A package of bf16 or f16 defines its element type
	// (half.go).
	DType dtype.DType
	// Toolchain is the toolchain that builds the package's kernels (the
	// Go version, as tunedb.Workload.Toolchain names it): of the records
	// of a shape, its are used when there are any, else another
	// toolchain's, and Log hears of each such shape. "" prefers none.
	Toolchain string
	// Log, when set, hears warnings, one line each: a winner measured
	// with another toolchain than Toolchain.
	Log io.Writer
}

// A variant is one compiled kernel of an op: a config, specialised to a
// shape or shape-generic, in the forms the architecture's part of the
// writer gives it (amd64.Forms): its vector form (when it has one), its
// scalar form, and its plain form (when it has one), which builds
// without GOEXPERIMENT=simd run in place of the vector form, under the
// same name.
type variant struct {
	name string          // Go name of its vector form, or of its only form
	cfg  schedule.Config // as tuned
	amd64.Forms
	// neon says that cfg, tuned on arm64, has a NEON form (gen/arm64),
	// which arm64 builds run; Forms then has its scalar form only.
	neon   bool
	shape  []int          // the shape of a specialised kernel; nil for a generic one
	record *tunedb.Record // the winning record of a specialised kernel
}

// vector reports whether v has a vector form besides its scalar one: an
// amd64 one or a NEON one.
func (v variant) vector() bool { return v.Needs != amd64.Scalar || v.neon }

// scalarName is the Go name of v's scalar form.
func (v variant) scalarName() string {
	if !v.vector() {
		return v.name
	}
	return v.name + "Scalar"
}

// A tuned shape of an op and the variants that serve it.
type tunedShape struct {
	shape  []int
	record tunedb.Record
	exact  int // the specialised variant
	near   int // the generic variant of the same config, or -1
}

// An opPlan is everything generated for one op.
type opPlan struct {
	op       kernels.Op
	tmpl     kernels.Template
	api      kernels.API
	dtype    dtype.DType
	ident    string // lower-case prefix of its Go names
	variants []variant
	tuned    []tunedShape
	ranges   []Range // tuned shape ranges, each bucket among tuned
	def      int
	// parent is the op whose exported function runs this one with flag
	// set (attention_causal: attention, "causal"); "" for an op with a
	// function of its own.
	parent, flag string
	// flags are the ops this one's function runs when a flag is set.
	flags []kernels.Variant
}

// plan is the whole package.
type plan struct {
	o      Options
	target device.Target
	ops    []*opPlan
	date   time.Time // the latest winning record
}

// selectOps returns the ops to generate, sorted, closed under variants.
func selectOps(names []string) ([]kernels.Op, error) {
	all := kernels.Ops()
	if names == nil {
		for _, op := range all {
			if t, ok := kernels.TemplateFor(op.Name, kernels.CPU); ok && t.Go != nil {
				names = append(names, op.Name)
			}
		}
	}
	want := map[string]bool{}
	for _, n := range names {
		op, err := kernels.Lookup(n)
		if err != nil {
			return nil, fmt.Errorf("gen: %w", err)
		}
		want[op.Name] = true
		for _, v := range op.Variants {
			want[v.Op] = true
		}
		for _, o := range all {
			for _, v := range o.Variants {
				if v.Op == op.Name {
					want[o.Name] = true
				}
			}
		}
	}
	var out []kernels.Op
	for _, op := range all {
		if !want[op.Name] {
			continue
		}
		t, ok := kernels.TemplateFor(op.Name, kernels.CPU)
		if !ok || t.Go == nil || op.EmitReference == nil {
			return nil, fmt.Errorf("gen: op %s has no CPU template and an emitted reference", op.Name)
		}
		out = append(out, op)
	}
	return out, nil
}

func newPlan(src Source, o Options) (*plan, error) {
	if o.Pkg == "" || !isIdent(o.Pkg) {
		return nil, fmt.Errorf("gen: package name %q is not a Go identifier", o.Pkg)
	}
	switch {
	case o.Variants == 0:
		o.Variants = 3
	case o.Variants < 0:
		o.Variants = 0
	}
	target, err := device.FromFingerprint(o.Device)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	if target.CPU == nil {
		return nil, fmt.Errorf("gen: device %s is not a CPU: generated packages hold CPU kernels", o.Device)
	}
	if host := device.Host(); host.Fingerprint() == o.Device && host.CPU != nil {
		target = host // the fingerprint has no cache sizes; the host's spaces need them
	}
	o.DType = cmp.Or(o.DType, dtype.Default)
	ops, err := selectOps(o.Ops)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if err := op.CheckDType(o.DType); err != nil {
			return nil, fmt.Errorf("gen: %w", err)
		}
	}
	sums, err := src.Workloads()
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	rs, err := src.Ranges()
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	p := &plan{o: o, target: target}
	for _, op := range ops {
		tmpl, _ := kernels.TemplateFor(op.Name, kernels.CPU)
		api := op.GoAPI()
		op := &opPlan{op: op, tmpl: tmpl, api: api, ident: unexported(api.Func), dtype: o.DType}
		var mine []tunedb.Summary
		for _, s := range sums {
			w := s.Workload
			if s.Best != nil && w.Op == op.op.Name && w.DType == o.DType && w.Device == o.Device && w.Template == tmpl.Version {
				mine = append(mine, s)
			}
		}
		for _, s := range tunedb.PreferToolchain(mine, o.Toolchain) {
			w := s.Workload
			if o.Toolchain != "" && w.Toolchain != o.Toolchain && o.Log != nil {
				fmt.Fprintf(o.Log, "gen: warning: %s %s: the winner was measured with toolchain %s, not %s; tune again to rank with this one\n",
					w.Op, w.ShapeString(), toolchainName(w.Toolchain), o.Toolchain)
			}
			op.tuned = append(op.tuned, tunedShape{shape: slices.Clone(w.Shape), record: *s.Best})
			if s.Best.Time.After(p.date) {
				p.date = s.Best.Time.UTC()
			}
		}
		slices.SortFunc(op.tuned, func(a, b tunedShape) int { return slices.Compare(a.shape, b.shape) })
		op.ranges = rangesOf(rs, op.op.Name, tmpl.Version, o.DType, func(fp string) bool { return fp == o.Device }, op.selected())
		if err := p.planVariants(op); err != nil {
			return nil, err
		}
		p.ops = append(p.ops, op)
	}
	for _, op := range p.ops {
		for _, v := range op.op.Variants {
			if v.Op != op.op.Name {
				op.flags = append(op.flags, v)
				for _, other := range p.ops {
					if other.op.Name == v.Op {
						other.parent, other.flag = op.op.Name, v.Flag
					}
				}
			}
		}
	}
	return p, nil
}

// planVariants chooses op's variants: a specialised kernel per tuned
// shape; the generic form of the Variants winners that win the most
// shapes (ties: the winner of the larger shape, then config order), and
// of the winners of the buckets of op's ranges; the template's default.
func (p *plan) planVariants(op *opPlan) error {
	for i := range op.tuned {
		t := &op.tuned[i]
		v, err := p.newVariant(op, fmt.Sprintf("%s%s", op.ident, kernels.FormatShape(t.shape)), t.record.Config, t.shape)
		if err != nil {
			return err
		}
		v.record = &t.record
		t.exact = len(op.variants)
		op.variants = append(op.variants, v)
	}
	tuned := op.selected()
	winners := withBuckets(rankWinners(tuned, p.o.Variants), op.ranges, tuned)
	for i, w := range winners {
		v, err := p.newVariant(op, fmt.Sprintf("%sG%d", op.ident, i+1), w, nil)
		if err != nil {
			return err
		}
		for j := range op.tuned {
			if op.tuned[j].record.Config.Equal(w) {
				op.tuned[j].near = len(op.variants)
			}
		}
		op.variants = append(op.variants, v)
	}
	for j := range op.tuned {
		if !slices.ContainsFunc(winners, func(w schedule.Config) bool { return w.Equal(op.tuned[j].record.Config) }) {
			op.tuned[j].near = -1
		}
	}
	example, _ := op.op.ParseShape(op.op.Example)
	def, err := op.tmpl.DefaultConfig(example, p.target)
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	op.def = slices.IndexFunc(op.variants, func(v variant) bool { return v.shape == nil && v.cfg.Equal(def) })
	if op.def < 0 {
		v, err := p.newVariant(op, op.ident+"Default", def, nil)
		if err != nil {
			return err
		}
		op.def = len(op.variants)
		op.variants = append(op.variants, v)
	}
	return nil
}

// selected is op's tuned shapes as a Selection holds them.
func (op *opPlan) selected() []Tuned {
	tuned := make([]Tuned, len(op.tuned))
	for i, t := range op.tuned {
		tuned[i] = Tuned{Shape: t.shape, Record: t.record}
	}
	return tuned
}

// newVariant returns the variant name of op with cfg, specialised to
// shape or generic when shape is nil, and its forms, worked out at shape
// (for a generic variant: the largest shape cfg won, or the op's example).
func (p *plan) newVariant(op *opPlan, name string, cfg schedule.Config, shape []int) (variant, error) {
	at := shape
	if at == nil {
		at = p.tunedShapeOf(op, cfg)
	}
	if arm64.Is(p.target) {
		neon, scalar, err := arm64.FormsOf(op.tmpl, cfg, at, p.target)
		if err != nil {
			return variant{}, fmt.Errorf("gen: %s: %w", op.op.Name, err)
		}
		return variant{name: name, cfg: cfg, Forms: amd64.Forms{Needs: amd64.Scalar, Scalar: scalar}, neon: neon, shape: shape}, nil
	}
	forms, err := amd64.FormsOf(op.tmpl, cfg, at, p.target)
	if err != nil {
		return variant{}, fmt.Errorf("gen: %s: %w", op.op.Name, err)
	}
	return variant{name: name, cfg: cfg, Forms: forms, shape: shape}, nil
}

// tunedShapeOf returns the largest shape cfg won, or the op's example.
func (p *plan) tunedShapeOf(op *opPlan, cfg schedule.Config) []int {
	shape, _ := op.op.ParseShape(op.op.Example)
	for _, t := range op.tuned {
		if t.record.Config.Equal(cfg) {
			shape = t.shape
		}
	}
	return shape
}

// unexported returns the Go name s with its leading initialism in lower
// case, as Go spells names: "Softmax" is "softmax", "RMSNorm" "rmsNorm",
// "GEMM" "gemm".
func unexported(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) {
		n-- // the last capital starts the next word: RMS|Norm
	}
	return strings.ToLower(string(r[:n])) + string(r[n:])
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return s != ""
}

// toolchainName is tc for messages: "unknown" for "".
func toolchainName(tc string) string {
	if tc == "" {
		return "unknown"
	}
	return tc
}
