package gen

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/gen/amd64"
	"github.com/autotune-dev/autotune/gen/arm64"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// docFile writes the package doc: what the package is, how it dispatches,
// what each build runs, and what was tuned.
func (p *plan) docFile() *jen.File {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	elems := "float32"
	if p.half() {
		elems = fmt.Sprintf("%s (%s, stored in 16 bits and computed in float32)", p.o.DType, p.elemName())
	}
	w("Package %s holds %s kernels tuned by autotune for one CPU, specialised to the shapes tuned there, ", p.o.Pkg, elems)
	w("and shape-generic forms of the best configs, so that every shape is served.\n\n")
	var fns []string
	for _, op := range p.ops {
		if op.parent == "" {
			sig := strings.Join(op.api.Args, ", ") + " []" + p.elemName() + ", " + strings.Join(op.api.Dims, ", ") + " int"
			for _, v := range op.flags {
				sig += ", " + v.Flag + " bool"
			}
			fns = append(fns, fmt.Sprintf("\t%s(%s)", op.api.Func, sig))
		}
	}
	w("Functions:\n\n%s\n\n", strings.Join(fns, "\n"))
	w("Arguments are row-major %s arrays, the output first. Each function panics when an extent is below 1 ", p.elemName())
	w("or when a slice's length is not what the extents give, with a message naming the argument and both lengths ")
	w("(as gonum does for dimension errors): a wrong length is a bug in the caller.\n\n")
	w("# Dispatch\n\n")
	w("A call runs, allocating nothing:\n\n")
	w("  - exact: the kernel specialised to its shape, when that shape was tuned;\n")
	w("  - bucket: else, for a shape inside a range tuned as one (autotune tune --shape 1..64x64), ")
	w("the shape-generic kernel of the winner of the range's nearest bucket, one of the shapes tuned for it;\n")
	w("  - nearest: else the shape-generic kernel of the winner of the nearest tuned shape that has one, ")
	w("nearest by the sum over dimensions of |log2 a − log2 b| (ties: fewer elements, then the smaller first differing extent), as autotune's lookup measures it;\n")
	w("  - default: else the template's default config, shape-generic.\n\n")
	w("Variant(op, shape...) says which kernel a call would run and why. LoadTuning reads a tuning log ")
	w("(autotune db export) of the same device and template versions and from then on sends each shape of the log ")
	w("to the fastest of the compiled kernels there.\n\n")
	if arm64.Is(p.target) {
		w("# Builds\n\n%s", arm64.BuildsDoc())
	} else {
		w("# Builds\n\n%s", amd64.BuildsDoc(p.hasPlain()))
	}
	w("# Tuning\n\n")
	w("Device: %s\n\n", p.o.Device)
	if !p.date.IsZero() {
		w("Tuned: the latest winning record is of %s.\n\n", p.date.Format("2006-01-02 15:04 MST"))
	}
	w("Templates:\n\n")
	for _, op := range p.ops {
		w("\t%-18s %s\n", op.op.Name, op.tmpl.Version)
	}
	w("\nWorkloads, with the median of the winner as autotune measured it:\n\n")
	var t strings.Builder
	tw := tabwriter.NewWriter(&t, 0, 0, 2, ' ', 0)
	any := false
	for _, op := range p.ops {
		for _, s := range op.tuned {
			any = true
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\n", op.op.Name, kernels.FormatShape(s.shape), tunedb.FormatNS(s.record.MedianNS), s.record.Config)
		}
	}
	tw.Flush()
	if !any {
		t.WriteString("\tnone: every call runs a default kernel\n")
	}
	w("%s\n", t.String())
	if p.hasPlain() {
		w("Kernels by op (the first form runs where the build and the CPU allow, else the scalar one; ")
		w("\"also plain\": %s):\n\n", amd64.PlainLegend)
	} else {
		w("Kernels by op (the first form runs where the build and the CPU allow, else the scalar one):\n\n")
	}
	for _, op := range p.ops {
		for i, v := range op.variants {
			kind := "generic"
			if v.shape != nil {
				kind = "exact " + kernels.FormatShape(v.shape)
			} else if i == op.def {
				kind = "default"
			}
			names := v.name
			if v.Plain {
				names += " (also plain)"
			}
			if v.vector() {
				names += ", " + v.scalarName() + " (" + v.Scalar.String() + ")"
			}
			w("\t%s %s: %s  %s\n", op.op.Name, kind, names, v.cfg)
		}
	}
	f := p.newFile("")
	f.PackageComment(strings.TrimRight(b.String(), "\n"))
	return f
}

// hasPlain reports whether some kernel of the package has a plain form.
func (p *plan) hasPlain() bool {
	for _, op := range p.ops {
		if slices.ContainsFunc(op.variants, func(v variant) bool { return v.Plain }) {
			return true
		}
	}
	return false
}
