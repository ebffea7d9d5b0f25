package gocuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/format"
	"go/token"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// runtimeSource is the part of every generated package that does not
// depend on what was tuned: the driver binding, the per-context module
// cache, the launch and the dispatch.
//
//go:embed runtime.go.txt
var runtimeSource string

// testSource is the generated package's test of its files and dispatch;
// gpuTestSource the harness of its GPU test.
var (
	//go:embed kernels_test.go.txt
	testSource string
	//go:embed gpu_test.go.txt
	gpuTestSource string
)

// A Compiler compiles a CUDA kernel to PTX for an architecture (sm_XX):
// NVRTC where it is installed, else clang; the command line wires one.
type Compiler interface {
	PTX(ctx context.Context, k kernels.CUDAKernel, arch string) ([]byte, error)
	// Name is the compiler and its version, for the manifest.
	Name() string
}

// Options says what to generate. Pkg, Archs and Compiler are required.
type Options struct {
	Pkg string
	// Archs are the CUDA architectures (sm_80, ...) whose records are
	// used and whose kernels the package holds.
	Archs []string
	// Ops are the ops, by name; nil means every op with a CUDA template.
	Ops []string
	// Variants is how many shape-generic winners each op gets per
	// architecture besides the default and the winners of its tuned
	// ranges' buckets, which always get theirs; 0 means 3, negative none.
	Variants int
	// Command is the command line the files' header names.
	Command  string
	Compiler Compiler
}

// The kinds of a kernel, as the manifest names them.
const (
	kindExact   = "exact"
	kindGeneric = "generic"
	kindDefault = "default"
)

// A planned kernel: a config of an op for an architecture, specialised to
// a shape or generic.
type planned struct {
	op, arch, name, kind string
	tmpl                 kernels.Template
	cfg                  schedule.Config
	shape                []int
	k                    kernels.CUDAKernel
	ptx                  []byte
}

// opPlan is one op's part of the package.
type opPlan struct {
	op    kernels.Op
	tmpl  kernels.Template
	api   kernels.API
	archs map[string]*archPlan
}

// archPlan is an op's dispatch on one architecture, as indices into the
// package's kernels.
type archPlan struct {
	def     int
	entries []entryPlan
	ranges  []rangePlan
}

// rangePlan is a tuned range of shapes and its buckets, each one of the
// arch's entries.
type rangePlan struct {
	lo, hi  []int
	buckets []entryPlan
}

type entryPlan struct {
	shape       []int
	exact, near int
}

// Generate returns the files of the package o describes, from the records
// of src, by name: Go files, the manifest, and under cu/ and ptx/ each
// kernel's CUDA C and PTX, which the package embeds.
func Generate(ctx context.Context, src gen.Source, o Options) (map[string][]byte, error) {
	switch {
	case !token.IsIdentifier(o.Pkg):
		return nil, fmt.Errorf("gocuda: package name %q is not a Go identifier", o.Pkg)
	case len(o.Archs) == 0:
		return nil, fmt.Errorf("gocuda: no architecture")
	case o.Compiler == nil:
		return nil, fmt.Errorf("gocuda: no compiler")
	}
	switch {
	case o.Variants == 0:
		o.Variants = 3
	case o.Variants < 0:
		o.Variants = 0
	}
	targets := map[string]device.Target{}
	for _, a := range o.Archs {
		t, err := device.Lookup(a)
		if err != nil || !t.IsCUDA() {
			return nil, fmt.Errorf("gocuda: %q is not a CUDA architecture (known: %s)", a, strings.Join(device.Names(), ", "))
		}
		targets[a] = t
	}
	tmpls, err := selectTemplates(o.Ops)
	if err != nil {
		return nil, err
	}
	sums, err := src.Workloads()
	if err != nil {
		return nil, fmt.Errorf("gocuda: %w", err)
	}
	rs, err := src.Ranges()
	if err != nil {
		return nil, fmt.Errorf("gocuda: %w", err)
	}
	var ks []planned
	var ops []*opPlan
	for _, tmpl := range tmpls {
		op := &opPlan{op: tmpl.Op, tmpl: tmpl, api: tmpl.Op.GoAPI(), archs: map[string]*archPlan{}}
		for _, arch := range o.Archs {
			match := func(fp string) bool { return fp == "cuda/"+arch || strings.HasPrefix(fp, "cuda/"+arch+"/") }
			sel, err := gen.Select(sums, tmpl, dtype.F32, targets[arch], match, o.Variants)
			if err != nil {
				return nil, fmt.Errorf("gocuda: %s on %s: %w", tmpl.Op.Name, arch, err)
			}
			sel.AddRanges(rs, tmpl, dtype.F32, match)
			op.archs[arch] = planArch(&ks, tmpl, arch, sel)
		}
		ops = append(ops, op)
	}
	for i := range ks {
		p := &ks[i]
		p.k = p.tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: p.name, Shape: p.shape, DType: dtype.F32, Config: p.cfg})
		if p.ptx, err = o.Compiler.PTX(ctx, p.k, p.arch); err != nil {
			return nil, fmt.Errorf("gocuda: %s: %w", p.name, err)
		}
	}
	if o.Command == "" {
		o.Command = "autotune gen --device " + strings.Join(o.Archs, ",") + " --pkg " + o.Pkg
	}
	w := &writer{o: o, ops: ops, ks: ks}
	return w.files()
}

// selectTemplates returns the CUDA templates of the ops named, or of
// every op that has one, in the registry's order.
func selectTemplates(names []string) ([]kernels.Template, error) {
	var out []kernels.Template
	for _, op := range kernels.Ops() {
		if names != nil && !slices.Contains(names, op.Name) {
			continue
		}
		t, ok := kernels.TemplateFor(op.Name, kernels.CUDA)
		if !ok || t.CUDA == nil {
			if names != nil {
				return nil, fmt.Errorf("gocuda: op %s has no CUDA template", op.Name)
			}
			continue
		}
		out = append(out, t)
	}
	for _, n := range names {
		if _, err := kernels.Lookup(n); err != nil {
			return nil, fmt.Errorf("gocuda: %w", err)
		}
	}
	return out, nil
}

// planArch appends to ks the kernels of sel on arch and returns their
// dispatch: a specialised kernel per tuned shape, the generic kernels of
// the ranked winners and of the ranges' buckets' winners, the ranges,
// and the default, generic, unless a winner's is it.
func planArch(ks *[]planned, tmpl kernels.Template, arch string, sel gen.Selection) *archPlan {
	ap := &archPlan{def: -1}
	base := tmpl.Op.Name + "_" + arch
	add := func(p planned) int {
		p.op, p.arch, p.tmpl = tmpl.Op.Name, arch, tmpl
		*ks = append(*ks, p)
		return len(*ks) - 1
	}
	generic := map[string]int{}
	for i, cfg := range sel.Generic {
		generic[cfg.String()] = add(planned{name: fmt.Sprintf("%s_g%d", base, i+1), kind: kindGeneric, cfg: cfg})
	}
	for _, t := range sel.Tuned {
		e := entryPlan{shape: t.Shape, near: -1}
		e.exact = add(planned{name: base + "_" + kernels.FormatShape(t.Shape), kind: kindExact, cfg: t.Record.Config, shape: t.Shape})
		if k, ok := generic[t.Record.Config.String()]; ok {
			e.near = k
		}
		ap.entries = append(ap.entries, e)
	}
	for _, r := range sel.Ranges {
		rp := rangePlan{lo: r.Lo, hi: r.Hi}
		for _, b := range r.Buckets {
			rp.buckets = append(rp.buckets, ap.entries[slices.IndexFunc(ap.entries, func(e entryPlan) bool { return slices.Equal(e.shape, b) })])
		}
		ap.ranges = append(ap.ranges, rp)
	}
	if k, ok := generic[sel.Default.String()]; ok {
		ap.def = k
	} else {
		ap.def = add(planned{name: base + "_default", kind: kindDefault, cfg: sel.Default})
	}
	return ap
}

// writer renders the package.
type writer struct {
	o   Options
	ops []*opPlan
	ks  []planned
}

func (w *writer) header() string { return gen.Header(w.o.Command) + "\n\n" }

func (w *writer) files() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, p := range w.ks {
		files[p.cuPath()] = []byte(p.k.Source)
		files[p.ptxPath()] = p.ptx
	}
	m, err := w.manifest()
	if err != nil {
		return nil, err
	}
	files["manifest.json"] = m
	ref, err := w.referenceFile()
	if err != nil {
		return nil, err
	}
	files["reference_test.go"] = ref
	for name, body := range map[string]struct {
		src     string
		imports []string
	}{
		"runtime.go":      {runtimeSource, []string{"bytes", "cmp", "encoding/json", "errors", "fmt", "io", "maps", "math", "slices", "strconv", "strings", "sync", "sync/atomic", "time", "unsafe", "github.com/ebitengine/purego"}},
		"kernels.go":      {w.kernelsFile(), []string{"embed"}},
		"kernels_test.go": {testSource, []string{"crypto/sha256", "encoding/hex", "encoding/json", "regexp", "strings", "testing"}},
		"gpu_test.go":     {w.gpuTestFile(), []string{"cmp", "errors", "fmt", "math", "math/rand/v2", "os", "runtime", "testing", "unsafe", "github.com/ebitengine/purego"}},
		"doc.go":          {"", nil},
	} {
		var b bytes.Buffer
		b.WriteString(w.header())
		if name == "doc.go" {
			b.WriteString(w.doc())
		}
		fmt.Fprintf(&b, "package %s\n\n", w.o.Pkg)
		if len(body.imports) > 0 {
			b.WriteString("import (\n")
			for _, imp := range body.imports {
				fmt.Fprintf(&b, "\t%q\n", imp)
			}
			b.WriteString(")\n\n")
		}
		b.WriteString(body.src)
		src, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("gocuda: %s: %w\n%s", name, err, numbered(b.String()))
		}
		files[name] = src
	}
	return files, nil
}

func (p planned) cuPath() string  { return "cu/" + p.name + ".cu" }
func (p planned) ptxPath() string { return "ptx/" + p.arch + "/" + p.name + ".ptx" }

// Manifest is the generated package's manifest.json: what was compiled,
// from what, with what.
type Manifest struct {
	Command   string            `json:"command"`
	Compiler  string            `json:"compiler"`
	Archs     []string          `json:"archs"`
	Templates map[string]string `json:"templates"` // op → template version
	Kernels   []ManifestKernel  `json:"kernels"`
}

// ManifestKernel is one compiled kernel of a Manifest.
type ManifestKernel struct {
	Name         string `json:"name"`
	Op           string `json:"op"`
	Arch         string `json:"arch"`
	Kind         string `json:"kind"` // exact, generic or default
	Shape        []int  `json:"shape,omitempty"`
	Config       string `json:"config"`
	Source       string `json:"source"`
	SourceSHA256 string `json:"source_sha256"`
	PTX          string `json:"ptx"`
	PTXSHA256    string `json:"ptx_sha256"`
}

func (w *writer) manifest() ([]byte, error) {
	m := Manifest{Command: w.o.Command, Compiler: w.o.Compiler.Name(), Archs: w.o.Archs, Templates: map[string]string{}}
	for _, op := range w.ops {
		m.Templates[op.op.Name] = op.tmpl.Version
	}
	for _, p := range w.ks {
		m.Kernels = append(m.Kernels, ManifestKernel{Name: p.name, Op: p.op, Arch: p.arch, Kind: p.kind, Shape: p.shape,
			Config: p.cfg.String(), Source: p.cuPath(), SourceSHA256: sum(p.k.Source), PTX: p.ptxPath(), PTXSHA256: sum(string(p.ptx))})
	}
	b, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return nil, fmt.Errorf("gocuda: %w", err)
	}
	return append(b, '\n'), nil
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// numbered returns src with line numbers, for a render error.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}
