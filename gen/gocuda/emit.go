package gocuda

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/kernels"
)

// kernelsFile is the package's tables and exported functions.
func (w *writer) kernelsFile() string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f("const pkgName = %q\n\n", w.o.Pkg)
	f("// archs are the architectures this package has kernels for.\n")
	f("var archs = %#v\n\n", w.o.Archs)
	f("// modules holds each kernel's PTX, loaded into a context at its first launch there, and its CUDA C.\n")
	f("//\n//go:embed ptx cu manifest.json\nvar modules embed.FS\n\n")
	f("var kernels = []kernel{\n")
	for _, p := range w.ks {
		f("\t{name: %q, arch: %q, entry: %q, ptx: %q, config: %q, json: %q", p.name, p.arch, p.k.Entry, p.ptxPath(), p.cfg.String(), configJSON(p))
		if p.shape != nil {
			f(", shape: %#v, grid: %#v, block: %#v, shared: %d", p.shape, p.k.Grid, p.k.Block, p.k.SharedBytes)
		} else {
			f(", generic: %s", launchSpec(p.k.Generic))
		}
		f("},\n")
	}
	f("}\n\n")
	f("var ops = map[string]*opState{\n")
	for _, op := range w.ops {
		f("\t%q: %s,\n", op.op.Name, opVar(op))
	}
	f("}\n\n")
	for _, op := range w.ops {
		f("var %s = &opState{name: %q, fn: %q, dims: %#v, template: %q, archs: map[string]*tables{\n", opVar(op), op.op.Name, op.api.Func, op.api.Dims, op.tmpl.Version)
		for _, arch := range w.o.Archs {
			ap := op.archs[arch]
			f("\t%q: newTables(%d, []entry{", arch, ap.def)
			for _, e := range ap.entries {
				f("newEntry(%#v, %d, %d), ", e.shape, e.exact, e.near)
			}
			f("}")
			for _, r := range ap.ranges {
				f(", shapeRange{lo: %#v, hi: %#v, buckets: []entry{", r.lo, r.hi)
				for _, e := range r.buckets {
					f("newEntry(%#v, %d, %d), ", e.shape, e.exact, e.near)
				}
				f("}}")
			}
			f("),\n")
		}
		f("}}\n\n")
		w.function(&b, op)
	}
	return b.String()
}

func opVar(op *opPlan) string { return "op" + op.api.Func }

// function writes op's exported function.
func (w *writer) function(b *strings.Builder, op *opPlan) {
	a := op.api
	fmt.Fprintf(b, "// %s runs %s (%s) on stream, a CUstream of the calling thread's current context (0: its default stream).\n", a.Func, op.op.Name, op.op.Summary)
	fmt.Fprintf(b, "// %s are device pointers (CUdeviceptr) to row-major float32 arrays the caller owns, ", strings.Join(a.Args, ", "))
	fmt.Fprintf(b, "of the sizes the extents %s give, the output first; they are not checked.\n", strings.Join(a.Dims, ", "))
	fmt.Fprintf(b, "// It returns once the kernel is queued, without waiting for it, and allocates nothing once its kernel is loaded in the context.\n")
	fmt.Fprintf(b, "func %s(stream uintptr, %s uintptr, %s int) error {\n", a.Func, strings.Join(a.Args, ", "), strings.Join(a.Dims, ", "))
	fmt.Fprintf(b, "\tptrs := [...]uintptr{%s}\n\tdims := [...]int{%s}\n", strings.Join(a.Args, ", "), strings.Join(a.Dims, ", "))
	fmt.Fprintf(b, "\treturn %s.launch(stream, ptrs[:], dims[:])\n}\n\n", opVar(op))
}

func launchSpec(l *kernels.CUDALaunch) string {
	var grid []string
	for _, fs := range l.Grid {
		var parts []string
		for _, f := range fs {
			parts = append(parts, fmt.Sprintf("{%d, %d}", f.Dim, f.Div))
		}
		grid = append(grid, "{"+strings.Join(parts, ", ")+"}")
	}
	s := l.Shared
	return fmt.Sprintf("&launchSpec{block: %#v, grid: [3][]factor{%s}, shared: size{%d, %d, %d, %d, %d}, multiple: %#v, max: %#v}",
		l.Block, strings.Join(grid, ", "), s.Base, s.Per, s.Dim, s.Add, s.Round, l.Multiple, l.Max)
}

// configJSON is p's config as a tuning log writes it.
func configJSON(p planned) string {
	b, err := p.cfg.MarshalJSON()
	if err != nil {
		panic(err) // a config of a space always marshals
	}
	return string(b)
}

// doc is the package doc.
func (w *writer) doc() string {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f("Package %s holds CUDA kernels tuned by autotune for %s, compiled to PTX when it was generated ", w.o.Pkg, strings.Join(w.o.Archs, ", "))
	f("(%s) and embedded: per architecture, the winners specialised to the shapes tuned there, ", w.o.Compiler.Name())
	f("and shape-generic kernels of the best configs and of each template's default, so that every shape is served.\n\n")
	f("Functions, each launching on a stream the caller gives with device pointers the caller owns:\n\n")
	for _, op := range w.ops {
		f("\t%s(stream uintptr, %s uintptr, %s int) error\n", op.api.Func, strings.Join(op.api.Args, ", "), strings.Join(op.api.Dims, ", "))
	}
	f("\nThe driver (libcuda.so.1) is loaded at the first launch with purego, so the package builds with CGO_ENABLED=0 ")
	f("and a program that imports it runs on machines without a GPU until it launches; Load loads another library. ")
	f("Each kernel's module is loaded into a context at its first launch there. ")
	f("A launch runs the kernels of the current device's architecture; on a newer one without kernels of its own, ")
	f("those of the newest older architecture, whose PTX the driver JIT-compiles (Arch says which). ")
	f("An older architecture than all of the package's is an error that names them.\n\n")
	f("# Dispatch\n\n")
	f("A call runs, allocating nothing once its kernel is loaded: the kernel specialised to its shape when that shape was tuned on the architecture; ")
	f("else, for a shape inside a range tuned as one (autotune tune --shape 1..64x1024), the shape-generic kernel of the winner of its nearest bucket (one of the shapes tuned for the range) that can run the shape; ")
	f("else the shape-generic kernel of the winner of the nearest tuned shape that has one and can run the shape ")
	f("(nearest by the sum over dimensions of |log2 a − log2 b|); else the template's default, shape-generic. ")
	f("Variant(arch, op, shape...) says which kernel and why. LoadTuning reads a tuning log (autotune db export) of the package's ")
	f("architectures and template versions and from then on sends each shape of the log to the fastest of the compiled kernels there. ")
	f("manifest.json lists every kernel with its config, ")
	f("template version and the hashes of its source (cu/) and PTX (ptx/).\n\n")
	f("# Kernels\n\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, p := range w.ks {
		shape := "any"
		if p.shape != nil {
			shape = kernels.FormatShape(p.shape)
		}
		fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\n", p.name, p.kind, shape, p.cfg)
	}
	tw.Flush()
	out := "// " + strings.ReplaceAll(strings.TrimRight(b.String(), "\n"), "\n", "\n// ")
	return strings.ReplaceAll(out, "// \t", "//\t") + "\n"
}
