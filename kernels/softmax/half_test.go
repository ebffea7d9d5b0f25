package softmax

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// halfShapes are the shapes of the 16-bit test: one element, partial
// vectors, a long row with a tail, many short rows.
var halfShapes = [][]int{{1, 1}, {3, 17}, {5, 48}, {7, 1023}, {131, 33}, {1, 4099}}

// TestHalfKernels checks softmax's kernels of bf16 and f16 as TestKernels
// checks float32's: the short grid on halfShapes (every fourth config,
// every one with AUTOTUNE_EXHAUSTIVE=1), the plain forms of assembly
// included, and the shape-generic kernels of genericConfigs (every third)
// on the same shapes, each on the op's input sets for the dtype rounded to
// it, against the float64 reference with the tolerance of a 16-bit output.
func TestHalfKernels(t *testing.T) {
	host := device.Host()
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		if !Template.SupportsDType(dt) {
			t.Logf("the CPU template has no %s kernels", dt)
			continue
		}
		t.Run(string(dt), func(t *testing.T) {
			m := kerneltest.NewModule(t)
			type job struct {
				name  string
				shape []int
				cfg   schedule.Config
			}
			var jobs []job
			add := func(shape []int, kn kernels.Kernel, call string) {
				ins, out := Template.Args(shape)
				m.Add(kerneltest.Kernel{Name: call, Config: kn.Config.String(), Ins: ins, Out: out, DType: dt})
				jobs = append(jobs, job{call, shape, kn.Config})
			}
			n := 0
			for _, shape := range halfShapes {
				for _, cfg := range grid(t, shape, host, true) {
					if n++; !exhaustive && n%4 != 0 {
						continue
					}
					arches := []kernels.Arch{kernels.AMD64}
					if Template.Go.Asm(cfg) {
						arches = append(arches, kernels.AMD64Plain)
					}
					for _, arch := range arches {
						kn := kernels.Kernel{Name: fmt.Sprintf("K%d", len(jobs)), Shape: shape, DType: dt, Config: cfg, Arch: arch}
						m.Asm(shape, Template.Go.EmitGo(m.File(shape), kn))
						add(shape, kn, kn.Name)
					}
				}
			}
			for i, cfg := range genericConfigs(t) {
				if !exhaustive && i%3 != 0 {
					continue
				}
				kn := kernels.Kernel{Name: fmt.Sprintf("G%d", i), DType: dt, Config: cfg, Arch: kernels.AMD64}
				m.Asm(halfShapes[0], Template.Go.EmitGo(m.File(halfShapes[0]), kn))
				for _, shape := range halfShapes {
					call := fmt.Sprintf("%s_%dx%d", kn.Name, shape[0], shape[1])
					m.File(shape).Func().Id(call).Params(jen.List(jen.Id("dst"), jen.Id("src")).Index().Uint16()).Block(
						jen.Id(kn.Name).Call(jen.Id("dst"), jen.Id("src"), jen.Lit(shape[0]), jen.Lit(shape[1])))
					add(shape, kn, call)
				}
			}
			dir, bin := m.Build()
			t.Logf("%d kernels", len(jobs))
			t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })

			type group struct {
				shape []int
				set   string
				in    []float32
			}
			var groups []group
			var list strings.Builder
			rng := rand.New(rand.NewPCG(1, 2))
			for _, shape := range halfShapes {
				for _, set := range Template.InputSetsFor(dt) {
					ins := [][]float32{make([]float32, shape[0]*shape[1])}
					set.Fill(shape, rng, ins)
					for i, x := range ins[0] {
						ins[0][i] = dt.Round(x)
					}
					file := filepath.Join(dir, fmt.Sprintf("in_%s_%s.bin", kernels.FormatShape(shape), set.Name))
					kerneltest.WriteFloats(t, file, ins[0])
					for _, j := range jobs {
						if slices.Equal(j.shape, shape) {
							fmt.Fprintf(&list, "%s %s\n", j.name, file)
						}
					}
					groups = append(groups, group{shape, set.Name, ins[0]})
				}
			}
			run := kerneltest.Start(t, dir, bin, list.String())
			for _, g := range groups {
				want := make([]float64, len(g.in))
				Template.Reference(g.shape, [][]float32{g.in}, want)
				rel, abs := Template.Tolerance(g.shape, dt)
				got := make([]float32, len(g.in))
				worst := 0.0
				for _, j := range jobs {
					if !slices.Equal(j.shape, g.shape) {
						continue
					}
					run.Next(t, j.name, got)
					c := kerneltest.CompareNaN(got, want, rel, abs)
					if c.Bad > 0 {
						cols := g.shape[1]
						t.Errorf("%v %s, %s %s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g (rel %.2g, abs %.2g)",
							g.shape, g.set, j.name, j.cfg, c.Bad, len(got), c.First/cols, c.First%cols, got[c.First], want[c.First], rel, abs)
					}
					worst = max(worst, c.Worst)
				}
				t.Logf("%v %s: largest error %.2f of the tolerance", g.shape, g.set, worst)
			}
			run.Wait(t)
		})
	}
}
