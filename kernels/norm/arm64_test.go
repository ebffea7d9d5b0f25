package norm

import (
	"fmt"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// neoverse is an arm64 target: two cores of NEON.
var neoverse = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Neoverse-N1", Cores: 2,
	ISA: device.ISA{ASIMD: true, FP16: true}}}

// arm64Schedules are the configs of the arm64 tests: the NEON rows at
// every unroll, RMSNorm's with and without prefetch, LayerNorm's of both
// algorithms, on one goroutine and on two; and a scalar config of each
// op, the same Go as on amd64.
func arm64Schedules(tmpl *kernels.Template) []string {
	var out []string
	if tmpl.Op.Name == LayerOp.Name {
		for _, u := range unrolls {
			for _, algo := range algos {
				out = append(out, fmt.Sprintf("vec=4,unroll=%d,threads=1,rows_per_chunk=1,algo=%s", u, algo))
			}
		}
		return append(out, "vec=4,unroll=4,threads=2,rows_per_chunk=1,algo=onepass", "vec=1,unroll=4,threads=1,rows_per_chunk=1,algo=twopass")
	}
	for _, u := range unrolls {
		for _, pf := range []bool{false, true} {
			out = append(out, fmt.Sprintf("vec=4,unroll=%d,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=%t,convert=block", u, pf))
		}
	}
	return append(out,
		"vec=4,unroll=4,threads=2,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block",
		"vec=1,unroll=4,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block")
}

// arm64Configs parses arm64Schedules in the arm64 space of shape, keeping
// the valid ones.
func arm64Configs(t *testing.T, tmpl *kernels.Template, shape []int) []schedule.Config {
	sp := tmpl.Space(shape, neoverse)
	var out []schedule.Config
	for _, s := range arm64Schedules(tmpl) {
		cfg, err := sp.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			out = append(out, cfg)
		}
	}
	return out
}

// TestARM64Kernels is TestKernels for arm64: the configs of
// arm64Schedules on testShapes, specialised and shape-generic (on
// genericShapes), built for arm64 and run natively or under emulation
// (skipped where neither can run), against the float64 reference on every
// input set of the op.
func TestARM64Kernels(t *testing.T) {
	for _, tmpl := range templates {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			m := kerneltest.NewModule(t)
			m.SetArch(kernels.ARM64)
			var jobs []job
			for _, shape := range testShapes {
				for _, cfg := range arm64Configs(t, tmpl, shape) {
					name := fmt.Sprintf("K%d", len(jobs))
					m.Asm(shape, tmpl.Go.EmitGo(m.File(shape), kernels.Kernel{Name: name, Shape: shape, Config: cfg, Arch: kernels.ARM64}))
					ins, out := tmpl.Args(shape)
					m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out})
					jobs = append(jobs, job{name, shape, cfg})
				}
			}
			for i, cfg := range arm64Configs(t, tmpl, []int{256, 100}) {
				generic := fmt.Sprintf("G%d", i)
				m.Asm(genericShapes[0], tmpl.Go.EmitGo(m.File(genericShapes[0]), kernels.Kernel{Name: generic, Config: cfg, Arch: kernels.ARM64}))
				for _, shape := range genericShapes {
					name := fmt.Sprintf("%s_%dx%d", generic, shape[0], shape[1])
					ins, out := tmpl.Args(shape)
					params := []jen.Code{jen.Id("y")}
					for i := range ins {
						params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
					}
					m.File(shape).Func().Id(name).Params(jen.List(params...).Index().Float32()).Block(
						jen.Id(generic).Call(append(params, jen.Lit(shape[0]), jen.Lit(shape[1]))...))
					m.Add(kerneltest.Kernel{Name: name, Config: cfg.String() + " (generic)", Ins: ins, Out: out})
					jobs = append(jobs, job{name, shape, cfg})
				}
			}
			dir, bin := m.Build()
			t.Logf("generated and built %d kernels", len(jobs))
			t.Run("vet", func(t *testing.T) { m.Vet(dir) })
			var shapes [][]int
			shapes = append(shapes, testShapes...)
			for _, s := range genericShapes {
				if !containsShape(shapes, s) {
					shapes = append(shapes, s)
				}
			}
			check(t, tmpl, dir, bin, jobs, shapes)
		})
	}
}

// containsShape reports whether shapes holds s.
func containsShape(shapes [][]int, s []int) bool {
	for _, x := range shapes {
		if fmt.Sprint(x) == fmt.Sprint(s) {
			return true
		}
	}
	return false
}

// TestARM64Space checks the arm64 spaces: NEON in assembly only
// (LayerNorm's vec=4 is), RMSNorm's with cached stores; NEON defaults;
// neither with amd64's vectors.
func TestARM64Space(t *testing.T) {
	shape := []int{64, 100}
	for _, tmpl := range templates {
		sp := tmpl.Space(shape, neoverse)
		neonAsm := 0
		for i := range sp.Size() {
			c := sp.At(i)
			if !sp.Valid(c) {
				continue
			}
			switch {
			case c.Int("vec") > 4:
				t.Fatalf("%s: %s is valid on arm64", tmpl.Op.Name, c)
			case c.Int("vec") == 4 && !tmpl.Go.Asm(c):
				t.Fatalf("%s: %s, NEON in Go, is valid on arm64", tmpl.Op.Name, c)
			case c.Int("vec") == 4 && tmpl == &RMSTemplate && c.Str("store") != "cached":
				t.Fatalf("%s: %s is valid on arm64", tmpl.Op.Name, c)
			case c.Int("vec") == 4:
				neonAsm++
			}
		}
		c, err := tmpl.DefaultConfig(shape, neoverse)
		if err != nil {
			t.Fatal(err)
		}
		if neonAsm == 0 || c.Int("vec") != 4 || !tmpl.Go.Asm(c) {
			t.Errorf("%s on arm64: %d NEON configs, default %s; want some, and NEON", tmpl.Op.Name, neonAsm, c)
		}
	}
}

// TestARM64HalfKernels checks the arm64 kernels of bf16 and f16, whose
// conversions are Go around the float32 NEON rows: every third config of
// arm64Schedules on testShapes, specialised and shape-generic, under
// emulation where this is not arm64.
func TestARM64HalfKernels(t *testing.T) {
	for _, tmpl := range templates {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(tmpl.Op.Name+"/"+string(dt), func(t *testing.T) {
				var specs []kerneltest.Spec
				for _, shape := range testShapes {
					for i, cfg := range arm64Configs(t, tmpl, shape) {
						if i%3 == 0 {
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, ARM64: true},
								kerneltest.Spec{Config: cfg, Shape: shape, Generic: true, ARM64: true})
						}
					}
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}
