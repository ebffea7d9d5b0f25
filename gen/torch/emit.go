package torch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
)

// files renders the extension.
func (p *plan) files() (map[string][]byte, error) {
	cHeader := gen.Header(p.o.Command) + "\n\n"
	pyHeader := "#" + strings.TrimPrefix(gen.Header(p.o.Command), "//") + "\n\n"
	files := map[string][]byte{
		"launch.h":  []byte(cHeader + launchSource),
		"tables.h":  []byte(cHeader + p.tablesFile()),
		"ops.cpp":   []byte(cHeader + opsSource),
		"load.py":   []byte(pyHeader + strings.Replace(loadSource, "{{constants}}", p.loadConstants(), 1)),
		"setup.py":  []byte(pyHeader + setupSource),
		"bench.py":  []byte("#!/usr/bin/env python3\n" + pyHeader + benchSource),
		"README.md": []byte(p.readme()),
	}
	for _, k := range p.ks {
		files[k.cuPath()] = []byte(k.k.Source)
	}
	for _, arch := range p.o.Archs {
		files[archFile(arch)] = []byte(cHeader + p.archUnit(arch))
	}
	for name, v := range map[string]any{"manifest.json": p.manifest(), "cases.json": p.cases()} {
		b, err := json.MarshalIndent(v, "", "\t")
		if err != nil {
			return nil, fmt.Errorf("torch: %w", err)
		}
		files[name] = append(b, '\n')
	}
	return files, nil
}

func (k planned) cuPath() string { return "cu/" + k.name + ".cu" }

// archFile is the translation unit of arch's kernels.
func archFile(arch string) string { return "kernels_" + arch + ".cu" }

// dynamicShared matches a kernel's declaration of its dynamic shared
// memory; the name is the first group.
var dynamicShared = regexp.MustCompile(`extern\s+__shared__\s+[\w\s]+?\s(\w+)\s*\[\s*\]`)

// archUnit is archFile(arch): each of arch's kernels included in a
// namespace of its own, since kernels define helpers of the same names,
// and the array of their functions, which tables.h's kernel_function
// reads by slot. A namespace does not separate the kernels' dynamic
// shared memory: it is declared extern inside an extern "C" function,
// which gives the name C linkage, so two kernels that declare it under one
// name with two types (float4 and uint4) do not compile together (nvcc
// refused it on an H100). Each kernel's name for it is renamed by a macro
// around its include; every extern __shared__ array starts at the block's
// dynamic shared memory whatever its name.
func (p *plan) archUnit(arch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// The kernels of %s, each in a namespace of its own (their helpers share names),\n", arch)
	fmt.Fprintf(&b, "// and their functions, in the order of their slots in tables.h.\n\n")
	for _, i := range p.archKernels(arch) {
		k := p.ks[i]
		shared := dynamicShared.FindAllStringSubmatch(k.k.Source, -1)
		for _, m := range shared {
			fmt.Fprintf(&b, "#define %s %s_%s\n", m[1], m[1], k.name)
		}
		fmt.Fprintf(&b, "namespace k_%s {\n#include %q\n} // namespace k_%s\n", k.name, k.cuPath(), k.name)
		for _, m := range shared {
			fmt.Fprintf(&b, "#undef %s\n", m[1])
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "namespace autotune {\nextern const void *const kernels_%s[] = {\n", arch)
	for _, i := range p.archKernels(arch) {
		k := p.ks[i]
		fmt.Fprintf(&b, "\t(const void *)&k_%s::%s,\n", k.name, k.k.Entry)
	}
	b.WriteString("};\n} // namespace autotune\n")
	return b.String()
}

// tablesFile is tables.h: the extension's kernels, their launches and
// the dispatch tables, as launch.h reads them.
func (p *plan) tablesFile() string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f("// The kernels of this extension and their dispatch per op, dtype and architecture,\n")
	f("// as launch.h reads them. kernel_function is defined by kernels_<arch>.cu.\n")
	f("#pragma once\n\n#include \"launch.h\"\n\nnamespace autotune {\n\n")
	f("inline constexpr const char *kArchs[] = {%s};\n\n", quoteAll(p.o.Archs))
	f("inline constexpr Kernel kKernels[] = {\n")
	slots := map[string]int{}
	for _, k := range p.ks {
		ai := slices.Index(p.o.Archs, k.arch)
		f("\t{%q, %q, %q, %q, %q, %q, %d, %d, ", k.name, k.op, string(k.dt), k.arch, k.kind, k.cfg.String(), ai, slots[k.arch])
		slots[k.arch]++
		if g := k.k.Generic; g != nil {
			f("true, {}, {}, 0, %s},\n", genericLiteral(g))
		} else {
			f("false, {%s}, {%s}, %d, {}},\n", ints(k.k.Grid[:]), ints(k.k.Block[:]), k.k.SharedBytes)
		}
	}
	f("};\n\n")
	for i, t := range p.tables {
		if len(t.entries) == 0 {
			continue
		}
		f("inline constexpr Entry kEntries%d[] = {", i)
		for _, e := range t.entries {
			f("{{%s}, %d, %d}, ", ints(e.shape), e.exact, e.near)
		}
		f("};\n")
	}
	f("\ninline constexpr Table kTables[] = {\n")
	for i, t := range p.tables {
		entries := "nullptr"
		if len(t.entries) > 0 {
			entries = fmt.Sprintf("kEntries%d", i)
		}
		f("\t{%q, %q, %q, %d, %d, %s, %d},\n", t.op, string(t.dt), t.arch, len(t.tmpl.Op.Dims), t.def, entries, len(t.entries))
	}
	f("};\n\n")
	f("inline constexpr Extension kExtension = {kArchs, %d, kKernels, %d, kTables, %d};\n\n", len(p.o.Archs), len(p.ks), len(p.tables))
	for _, arch := range p.o.Archs {
		f("extern const void *const kernels_%s[];\n", arch)
	}
	f("\n// kernel_function returns k's function, for cudaLaunchKernel.\n")
	f("inline const void *kernel_function(const Kernel &k) {\n\tswitch (k.arch_index) {\n")
	for i, arch := range p.o.Archs {
		f("\tcase %d:\n\t\treturn kernels_%s[k.slot];\n", i, arch)
	}
	f("\t}\n\treturn nullptr;\n}\n\n} // namespace autotune\n")
	return b.String()
}

// genericLiteral is a Generic of launch.h holding l.
func genericLiteral(l *kernels.CUDALaunch) string {
	var n, grid []string
	for _, fs := range l.Grid {
		if len(fs) > 4 {
			panic(fmt.Sprintf("torch: a grid dimension of %d factors, launch.h holds 4", len(fs))) // no template has more than 2
		}
		n = append(n, fmt.Sprint(len(fs)))
		var parts []string
		for _, f := range fs {
			parts = append(parts, fmt.Sprintf("{%d, %d}", f.Dim, f.Div))
		}
		grid = append(grid, "{"+strings.Join(parts, ", ")+"}")
	}
	s := l.Shared
	return fmt.Sprintf("{{%s}, {%s}, {%s}, {%d, %d, %d, %d, %d}, {%s}, {%s}}", ints(l.Block[:]), strings.Join(n, ", "),
		strings.Join(grid, ", "), s.Base, s.Per, s.Dim, s.Add, s.Round, ints(l.Multiple), ints(l.Max))
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func quoteAll(xs []string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(s, ", ")
}

// loadConstants are load.py's architectures and sources.
func (p *plan) loadConstants() string {
	srcs := []string{"ops.cpp"}
	for _, a := range p.o.Archs {
		srcs = append(srcs, archFile(a))
	}
	return fmt.Sprintf("ARCHS = [%s]\nSOURCES = [%s]\n", quoteAll(p.o.Archs), quoteAll(srcs))
}

// Manifest is the extension's manifest.json: what it holds, from what.
type Manifest struct {
	Command   string            `json:"command"`
	Archs     []string          `json:"archs"`
	Templates map[string]string `json:"templates"` // op → template version
	Kernels   []ManifestKernel  `json:"kernels"`
}

// ManifestKernel is one kernel of a Manifest.
type ManifestKernel struct {
	Name         string `json:"name"`
	Op           string `json:"op"`
	DType        string `json:"dtype"`
	Arch         string `json:"arch"`
	Kind         string `json:"kind"` // exact, generic or default
	Shape        []int  `json:"shape,omitempty"`
	Config       string `json:"config"`
	Source       string `json:"source"`
	SourceSHA256 string `json:"source_sha256"`
}

func (p *plan) manifest() Manifest {
	m := Manifest{Command: p.o.Command, Archs: p.o.Archs, Templates: map[string]string{}}
	for _, t := range p.tables {
		m.Templates[t.op] = t.tmpl.Version
	}
	for _, k := range p.ks {
		h := sha256.Sum256([]byte(k.k.Source))
		m.Kernels = append(m.Kernels, ManifestKernel{Name: k.name, Op: k.op, DType: string(k.dt), Arch: k.arch, Kind: k.kind,
			Shape: k.shape, Config: k.cfg.String(), Source: k.cuPath(), SourceSHA256: hex.EncodeToString(h[:])})
	}
	return m
}

// Cases is cases.json: what bench.py checks and times.
type Cases struct {
	Archs []string `json:"archs"`
	Cases []Case   `json:"cases"`
}

// A Case is an op in a dtype at a shape (autotune's extents), with the
// tolerance of the op's check (|got-want| ≤ abs + rel·|want|) and the
// work of a call.
type Case struct {
	Op    string  `json:"op"`
	DType string  `json:"dtype"`
	Shape []int   `json:"shape"`
	Why   string  `json:"why"` // tuned on sm_XX, example, untuned
	Rel   float64 `json:"rel"`
	Abs   float64 `json:"abs"`
	FLOPs float64 `json:"flops"`
	Bytes float64 `json:"bytes"`
}

// oddShapes are untuned shapes each op is checked at, tried in order: the
// first that the default kernel of every architecture runs.
var oddShapes = map[string][][]int{
	"softmax":          {{77, 1001}},
	"gemm":             {{257, 131, 67}, {257, 132, 68}, {256, 128, 64}},
	"attention":        {{1, 3, 77, 64}, {1, 3, 64, 64}},
	"attention_causal": {{1, 3, 77, 64}, {1, 3, 64, 64}},
	"rmsnorm":          {{77, 1001}, {77, 1000}, {64, 1024}},
	"layernorm":        {{77, 1001}, {77, 1000}, {64, 1024}},
}

// cases are bench.py's: for each op and dtype, the shapes tuned on any
// architecture, the op's example shape and an untuned odd shape.
func (p *plan) cases() Cases {
	cs := Cases{Archs: p.o.Archs}
	type key struct {
		op string
		dt dtype.DType
	}
	var order []key
	tables := map[key][]*table{}
	for _, t := range p.tables {
		k := key{t.op, t.dt}
		if tables[k] == nil {
			order = append(order, k)
		}
		tables[k] = append(tables[k], t)
	}
	for _, k := range order {
		ts := tables[k]
		op := ts[0].tmpl.Op
		add := func(shape []int, why string) {
			if slices.ContainsFunc(cs.Cases, func(c Case) bool { return c.Op == k.op && c.DType == string(k.dt) && slices.Equal(c.Shape, shape) }) {
				return
			}
			rel, abs := op.Tolerance(shape, k.dt)
			cs.Cases = append(cs.Cases, Case{Op: k.op, DType: string(k.dt), Shape: shape, Why: why, Rel: rel, Abs: abs,
				FLOPs: op.FLOPs(shape), Bytes: op.Bytes(shape) * float64(k.dt.Size()) / 4})
		}
		for _, t := range ts {
			for _, e := range t.entries {
				add(e.shape, "tuned on "+t.arch)
			}
		}
		if ex, err := op.ParseShape(op.Example); err == nil {
			add(ex, "example")
		}
		if odd := p.oddShape(ts); odd != nil {
			add(odd, "untuned")
		}
	}
	return cs
}

// oddShape returns the first of the op's odd shapes that the default
// kernel of each of ts runs, or nil.
func (p *plan) oddShape(ts []*table) []int {
	for _, shape := range oddShapes[ts[0].op] {
		if !slices.ContainsFunc(ts, func(t *table) bool {
			g := p.ks[t.def].k.Generic
			return g == nil || g.Serves(shape) != ""
		}) {
			return shape
		}
	}
	return nil
}

// readme is the extension's README.md.
func (p *plan) readme() string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f("<!-- %s -->\n\n", strings.TrimPrefix(gen.Header(p.o.Command), "// "))
	f("# A PyTorch extension of CUDA kernels tuned by autotune\n\n")
	f("Kernels for %s: per architecture, the winners specialised to the shapes tuned there, and shape-generic\n", strings.Join(p.o.Archs, ", "))
	f("kernels of the best configs and of each template's default, so that every shape is served.\n\n")
	f("```python\nimport load; load.load()            # builds with nvcc and ninja (MAX_JOBS=16), then registers the operators\n")
	f("import torch\ny = torch.ops.autotune.softmax(x)              # x: [..., C] on a CUDA device\n")
	f("c = torch.ops.autotune.gemm(a, b)                # a: [M, K], b: [K, N]\n")
	f("o = torch.ops.autotune.attention(q, k, v, causal=False)  # [B, H, S, D] each; softmax(q·kᵀ/√D)·v\n")
	f("y = torch.ops.autotune.rmsnorm(x, weight)        # eps 1e-6\n")
	f("y = torch.ops.autotune.layernorm(x, weight, bias)  # eps 1e-5\n")
	f("torch.ops.autotune.variant(\"softmax\", \"f32\", [4096, 1024])  # which kernel, and why\n```\n\n")
	f("`python3 setup.py build_ext --inplace` builds it too (then `import torch, autotune_kernels`).\n")
	f("`python3 bench.py --json out.json` builds it, checks every op of cases.json against torch's in float64\n")
	f("and times both with CUDA events.\n\n")
	f("Tensors must be contiguous, 16-byte aligned and of one dtype: ")
	var dts []string
	for _, t := range p.tables {
		if s := t.op + " " + string(t.dt); !slices.Contains(dts, s) {
			dts = append(dts, s)
		}
	}
	f("%s.\n", strings.Join(dts, ", "))
	return b.String()
}
