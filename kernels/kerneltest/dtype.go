package kerneltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// A Spec is a kernel CheckDType checks: a config at a shape, specialised
// or shape-generic (called with the shape's extents), in its plain form
// (kernels.AMD64Plain) or not, or its arm64 kernel (kernels.ARM64; a
// module holds arm64 kernels or none).
type Spec struct {
	Config  schedule.Config
	Shape   []int
	Generic bool
	Plain   bool
	ARM64   bool
	// Twin, when above 0, is 1 + the index of an earlier spec of the
	// same shape whose outputs this one's must equal bit for bit: two
	// forms of one computation (the place of a conversion, say), where
	// the tolerance would hide a difference in rounding.
	Twin int
}

// CheckDType builds the kernels of specs of tmpl in dtype dt into one
// module, vets it, and checks every kernel on each input set of the op
// for dt (kernels.Op.InputSetsFor), drawn once per shape and rounded to
// dt, against the float64 reference under the tolerance for dt, the
// output poisoned (see Kernel.DType). It logs the largest error per shape
// and set as a fraction of the tolerance.
func CheckDType(t testing.TB, tmpl *kernels.Template, dt dtype.DType, specs []Spec) {
	t.Helper()
	m := NewModule(t)
	if len(specs) > 0 && specs[0].ARM64 {
		m.SetArch(kernels.ARM64)
	}
	type job struct {
		name string
		spec Spec
	}
	var jobs []job
	generic := map[string]string{} // a generic kernel's name by config and form
	api := tmpl.Op.GoAPI()
	for i, s := range specs {
		arch := kernels.AMD64
		switch {
		case s.Plain:
			arch = kernels.AMD64Plain
		case s.ARM64:
			arch = kernels.ARM64
		}
		name := fmt.Sprintf("K%d", i)
		ins, out := tmpl.Args(s.Shape)
		if s.Generic {
			key := fmt.Sprintf("%s/%v", s.Config, s.Plain)
			g, ok := generic[key]
			if !ok {
				g = fmt.Sprintf("G%d", len(generic))
				generic[key] = g
				m.Asm(s.Shape, tmpl.Go.EmitGo(m.File(s.Shape), kernels.Kernel{Name: g, DType: dt, Config: s.Config, Arch: arch}))
			}
			params := make([]jen.Code, len(api.Args))
			for j, a := range api.Args {
				params[j] = jen.Id(a)
			}
			call := append(slices.Clone(params), intLits(s.Shape)...)
			m.File(s.Shape).Func().Id(name).Params(jen.List(params...).Index().Add(kernels.GoElem(dt))).Block(jen.Id(g).Call(call...))
		} else {
			m.Asm(s.Shape, tmpl.Go.EmitGo(m.File(s.Shape), kernels.Kernel{Name: name, Shape: s.Shape, DType: dt, Config: s.Config, Arch: arch}))
		}
		m.Add(Kernel{Name: name, Config: s.Config.String(), Ins: ins, Out: out, DType: dt})
		jobs = append(jobs, job{name, s})
	}
	dir, bin := m.Build()
	t.Logf("%d %s kernels, %d of them generic ones", len(jobs), dt, len(generic))
	Go(t, dir, "vet", ".")

	type group struct {
		shape []int
		set   kernels.InputSet
		ins   [][]float32
	}
	var groups []group
	var list strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for _, j := range jobs {
		if slices.ContainsFunc(groups, func(g group) bool { return slices.Equal(g.shape, j.spec.Shape) }) {
			continue
		}
		shape := j.spec.Shape
		lens, _ := tmpl.Args(shape)
		for _, set := range tmpl.InputSetsFor(dt) {
			g := group{shape: shape, set: set, ins: make([][]float32, len(lens))}
			for i, n := range lens {
				g.ins[i] = make([]float32, n)
			}
			set.Fill(shape, rng, g.ins)
			var files []string
			for i, in := range g.ins {
				for k, x := range in {
					in[k] = dt.Round(x)
				}
				file := filepath.Join(dir, fmt.Sprintf("in_%s_%s_%d.bin", kernels.FormatShape(shape), set.Name, i))
				WriteFloats(t, file, in)
				files = append(files, file)
			}
			for _, j := range jobs {
				if slices.Equal(j.spec.Shape, shape) {
					fmt.Fprintf(&list, "%s %s\n", j.name, strings.Join(files, " "))
				}
			}
			groups = append(groups, g)
		}
	}
	twins := map[int]bool{}
	for _, j := range jobs {
		if j.spec.Twin > 0 {
			twins[j.spec.Twin-1] = true
		}
	}
	run := Start(t, dir, bin, list.String())
	for _, g := range groups {
		_, n := tmpl.Args(g.shape)
		want, got := make([]float64, n), make([]float32, n)
		tmpl.Reference(g.shape, g.ins, want)
		tol := tmpl.Tolerance
		if g.set.Tolerance != nil {
			tol = g.set.Tolerance
		}
		rel, abs := tol(g.shape, dt)
		worst := 0.0
		outs := map[int][]float32{} // of the specs that are twins, by index
		for i, j := range jobs {
			if !slices.Equal(j.spec.Shape, g.shape) {
				continue
			}
			run.Next(t, j.name, got)
			if twins[i] {
				outs[i] = slices.Clone(got)
			}
			if tw := j.spec.Twin; tw > 0 {
				if k := firstBitDiff(got, outs[tw-1]); k >= 0 {
					t.Errorf("%v %s, %s: output [%d] is %#08x, its twin %s's %#08x", g.shape, g.set.Name, j.spec.Config, k,
						math.Float32bits(got[k]), jobs[tw-1].spec.Config, math.Float32bits(outs[tw-1][k]))
				}
			}
			c := CompareNaN(got, want, rel, abs)
			if c.Bad > 0 {
				form := ""
				if j.spec.Generic {
					form += " (generic)"
				}
				if j.spec.Plain {
					form += " (plain)"
				}
				t.Errorf("%v %s, %s%s: %d of %d outputs wrong; first [%d]: got %g, want %g (rel %.2g, abs %.2g)",
					g.shape, g.set.Name, j.spec.Config, form, c.Bad, n, c.First, got[c.First], want[c.First], rel, abs)
			}
			worst = max(worst, c.Worst)
		}
		t.Logf("%v %s: largest error %.2f of the tolerance", g.shape, g.set.Name, worst)
	}
	run.Wait(t)
}

// firstBitDiff returns the first index where a and b differ in their
// bits, or -1; a twin that did not run (nil) differs at 0.
func firstBitDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func intLits(xs []int) []jen.Code {
	out := make([]jen.Code, len(xs))
	for i, x := range xs {
		out[i] = jen.Lit(x)
	}
	return out
}
