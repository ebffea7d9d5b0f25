package norm

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestHalfKernels checks the kernels of bf16 and f16 of both templates as
// TestKernels checks float32's: specialised kernels of the grid on the
// test shapes (every third config, every one with AUTOTUNE_EXHAUSTIVE=1),
// plain forms of assembly included, and shape-generic kernels on the
// generic shapes, each on the input sets of its dtype (f16's at the edges
// of its range) rounded to it, against the float64 reference with the
// tolerance of a 16-bit output.
func TestHalfKernels(t *testing.T) {
	for _, tmpl := range templates {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				m := kerneltest.NewModule(t)
				var jobs []job
				add := func(name string, shape []int, kn kernels.Kernel) {
					kn.Name = name
					m.Asm(shape, tmpl.Go.EmitGo(m.File(shape), kn))
					ins, out := tmpl.Args(shape)
					m.Add(kerneltest.Kernel{Name: name, Config: kn.Config.String(), Ins: ins, Out: out, DType: dt})
					jobs = append(jobs, job{name, shape, kn.Config})
				}
				n := 0
				for _, shape := range testShapes {
					for _, cfg := range grid(t, tmpl, shape, twoCores()) {
						if n++; !exhaustive && n%3 != 0 {
							continue
						}
						arches := []kernels.Arch{kernels.AMD64}
						if tmpl.Go.Asm(cfg) {
							arches = append(arches, kernels.AMD64Plain)
						}
						for _, arch := range arches {
							add(fmt.Sprintf("K%d", len(jobs)), shape, kernels.Kernel{Shape: shape, DType: dt, Config: cfg, Arch: arch})
						}
					}
				}
				specialised := len(jobs)

				// Shape-generic kernels: each vector width with the
				// first code form, called through wrappers of each shape.
				sp := tmpl.Space([]int{256, 100}, twoCores())
				for _, vec := range vecs {
					form := "algo=twopass"
					if tmpl.Op.Name != LayerOp.Name {
						form = codeForms[1]
						if vec == 1 {
							form = codeForms[0]
						}
					}
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,%s,%s", vec, genericSchedules[1], form))
					if err != nil {
						t.Fatal(err)
					}
					if sp.Check(cfg) != nil {
						continue // a width the host lacks
					}
					generic := fmt.Sprintf("G%d", vec)
					m.Asm(genericShapes[0], tmpl.Go.EmitGo(m.File(genericShapes[0]), kernels.Kernel{Name: generic, DType: dt, Config: cfg, Arch: kernels.AMD64}))
					for _, shape := range genericShapes {
						name := fmt.Sprintf("%s_%dx%d", generic, shape[0], shape[1])
						ins, out := tmpl.Args(shape)
						params := []jen.Code{jen.Id("y")}
						for i := range ins {
							params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
						}
						m.File(shape).Func().Id(name).Params(jen.List(params...).Index().Uint16()).Block(
							jen.Id(generic).Call(append(params, jen.Lit(shape[0]), jen.Lit(shape[1]))...))
						m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out, DType: dt})
						jobs = append(jobs, job{name, shape, cfg})
					}
				}
				dir, bin := m.Build()
				t.Logf("%d specialised kernels, %d generic", specialised, len(jobs)-specialised)
				t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })
				shapes := slices.Clone(testShapes)
				for _, shape := range genericShapes {
					if !slices.ContainsFunc(shapes, func(s []int) bool { return slices.Equal(s, shape) }) {
						shapes = append(shapes, shape) // once: check names its input files by shape
					}
				}
				check(t, tmpl, dt, dir, bin, jobs, shapes)
			})
		}
	}
}
