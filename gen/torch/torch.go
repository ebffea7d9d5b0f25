package torch

import (
	"cmp"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// The parts of every extension that do not depend on what was tuned.
var (
	//go:embed launch.h.txt
	launchSource string
	//go:embed ops.cpp.txt
	opsSource string
	//go:embed load.py.txt
	loadSource string
	//go:embed setup.py.txt
	setupSource string
	//go:embed bench.py.txt
	benchSource string
)

// Ops are the ops of an extension, in the order of its tables: the
// operators of ops.cpp (attention_causal is attention with causal=True).
var Ops = []string{"softmax", "gemm", "attention", "attention_causal", "rmsnorm", "layernorm"}

// Options says what to generate. Archs is required.
type Options struct {
	// Archs are the CUDA architectures (sm_80, ...) whose records are
	// used and whose kernels the extension holds.
	Archs []string
	// Ops are the ops, of Ops; nil means all of them.
	Ops []string
	// Variants is how many shape-generic winners each op gets per
	// architecture and dtype besides the default; 0 means 3, negative
	// none.
	Variants int
	// Command is the command line the files' header names.
	Command string
}

// The kinds of a kernel, as the manifest names them.
const (
	kindExact   = "exact"
	kindGeneric = "generic"
	kindDefault = "default"
)

// A planned kernel: a config of an op in a dtype for an architecture,
// specialised to a shape or generic.
type planned struct {
	op, arch, name, kind string
	dt                   dtype.DType
	tmpl                 kernels.Template
	cfg                  schedule.Config
	shape                []int
	k                    kernels.CUDAKernel
}

// A table is the dispatch of an op in a dtype on an architecture, as
// indices into the extension's kernels.
type table struct {
	op   string
	dt   dtype.DType
	arch string
	tmpl kernels.Template
	def  int
	// entries are the tuned shapes: the kernel specialised to each, and
	// the generic kernel of its winner (-1: none).
	entries []entry
}

type entry struct {
	shape       []int
	exact, near int
}

// A plan is what an extension holds.
type plan struct {
	o      Options
	ks     []planned
	tables []*table
}

// Archs returns the CUDA architectures of the records of src, sorted:
// what an extension is generated for when none is named.
func Archs(src gen.Source) ([]string, error) {
	sums, err := src.Workloads()
	if err != nil {
		return nil, fmt.Errorf("torch: %w", err)
	}
	var archs []string
	for _, s := range sums {
		if a, ok := archOf(s.Workload.Device); ok && !slices.Contains(archs, a) {
			archs = append(archs, a)
		}
	}
	slices.Sort(archs)
	return archs, nil
}

// archOf returns the architecture of a CUDA device's fingerprint
// (cuda/sm_90/NAME/DRIVER).
func archOf(fingerprint string) (string, bool) {
	rest, ok := strings.CutPrefix(fingerprint, "cuda/")
	if !ok {
		return "", false
	}
	arch, _, _ := strings.Cut(rest, "/")
	return arch, strings.HasPrefix(arch, "sm_")
}

// Generate returns the files of the extension o describes, from the
// records of src, by name.
func Generate(src gen.Source, o Options) (map[string][]byte, error) {
	p, err := newPlan(src, o)
	if err != nil {
		return nil, err
	}
	return p.files()
}

func newPlan(src gen.Source, o Options) (*plan, error) {
	if len(o.Archs) == 0 {
		return nil, fmt.Errorf("torch: no architecture")
	}
	switch {
	case o.Variants == 0:
		o.Variants = 3
	case o.Variants < 0:
		o.Variants = 0
	}
	if o.Ops == nil {
		o.Ops = Ops
	}
	targets := map[string]device.Target{}
	for _, a := range o.Archs {
		t, err := device.Lookup(a)
		if err != nil || !t.IsCUDA() {
			return nil, fmt.Errorf("torch: %q is not a CUDA architecture (known: %s)", a, strings.Join(device.Names(), ", "))
		}
		targets[a] = t
	}
	if o.Command == "" {
		o.Command = "autotune gen --torch DIR --device " + strings.Join(o.Archs, ",")
	}
	sums, err := src.Workloads()
	if err != nil {
		return nil, fmt.Errorf("torch: %w", err)
	}
	p := &plan{o: o}
	for _, name := range Ops {
		if !slices.Contains(o.Ops, name) {
			continue
		}
		tmpl, ok := kernels.TemplateFor(name, kernels.CUDA)
		if !ok || tmpl.CUDA == nil {
			return nil, fmt.Errorf("torch: op %s has no CUDA template", name)
		}
		for _, dt := range dtypes(sums, tmpl, o.Archs) {
			for _, arch := range o.Archs {
				match := func(fp string) bool { a, _ := archOf(fp); return a == arch }
				sel, err := gen.Select(sums, tmpl, dt, targets[arch], match, o.Variants)
				if err != nil {
					return nil, fmt.Errorf("torch: %s %s on %s: %w", name, dt, arch, err)
				}
				p.add(tmpl, dt, arch, sel)
			}
		}
	}
	for _, name := range o.Ops {
		if !slices.Contains(Ops, name) {
			return nil, fmt.Errorf("torch: op %s is not one of the extension's (%s)", name, strings.Join(Ops, ", "))
		}
	}
	for i := range p.ks {
		k := &p.ks[i]
		k.k = k.tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: k.name, Shape: k.shape, DType: k.dt, Config: k.cfg})
	}
	return p, nil
}

// dtypes returns the dtypes tmpl's kernels are planned in: f32 always
// (its defaults serve every shape), and the other dtypes of the CUDA
// template that records of archs have.
func dtypes(sums []tunedb.Summary, tmpl kernels.Template, archs []string) []dtype.DType {
	out := []dtype.DType{dtype.F32}
	for _, s := range sums {
		w := s.Workload
		a, _ := archOf(w.Device)
		if w.Op == tmpl.Op.Name && w.Template == tmpl.Version && s.Best != nil && slices.Contains(archs, a) &&
			slices.Contains(tmpl.Op.DTypes, w.DType) && !slices.Contains(out, w.DType) {
			out = append(out, w.DType)
		}
	}
	slices.SortStableFunc(out[1:], func(a, b dtype.DType) int { return cmp.Compare(a, b) })
	return out
}

// add appends the kernels of sel, tmpl's plan in dt on arch, and their
// table: a specialised kernel per tuned shape, the generic kernels of the
// ranked winners, and the default, generic, unless a winner's is it.
func (p *plan) add(tmpl kernels.Template, dt dtype.DType, arch string, sel gen.Selection) {
	t := &table{op: tmpl.Op.Name, dt: dt, arch: arch, tmpl: tmpl}
	base := tmpl.Op.Name + "_" + arch
	if dt != dtype.F32 {
		base = tmpl.Op.Name + "_" + string(dt) + "_" + arch
	}
	add := func(k planned) int {
		k.op, k.arch, k.dt, k.tmpl = tmpl.Op.Name, arch, dt, tmpl
		p.ks = append(p.ks, k)
		return len(p.ks) - 1
	}
	generic := map[string]int{}
	for i, cfg := range sel.Generic {
		generic[cfg.String()] = add(planned{name: fmt.Sprintf("%s_g%d", base, i+1), kind: kindGeneric, cfg: cfg})
	}
	for _, tu := range sel.Tuned {
		e := entry{shape: tu.Shape, near: -1}
		e.exact = add(planned{name: base + "_" + kernels.FormatShape(tu.Shape), kind: kindExact, cfg: tu.Record.Config, shape: tu.Shape})
		if k, ok := generic[tu.Record.Config.String()]; ok {
			e.near = k
		}
		t.entries = append(t.entries, e)
	}
	if k, ok := generic[sel.Default.String()]; ok {
		t.def = k
	} else {
		t.def = add(planned{name: base + "_default", kind: kindDefault, cfg: sel.Default})
	}
	p.tables = append(p.tables, t)
}

// archKernels returns the indices of arch's kernels, in order: the
// array of kernels_<arch>.cu.
func (p *plan) archKernels(arch string) []int {
	var out []int
	for i, k := range p.ks {
		if k.arch == arch {
			out = append(out, i)
		}
	}
	return out
}
