package all

import (
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// Every CPU template has a default config, and it is valid for every shape
// on every kind of CPU, including one that reports no caches: lookups and
// generated packages fall back to it where nothing was tuned.
func TestCPUDefaultsAreValid(t *testing.T) {
	isas := []device.ISA{{}, {SSE42: true, AVX2: true, FMA: true}, {SSE42: true, AVX2: true, FMA: true, AVX512: true}}
	var targets []device.Target
	for _, isa := range isas {
		for _, cores := range []int{1, 2, 64} {
			targets = append(targets,
				device.Target{Name: "cpu", CPU: &device.CPU{Cores: cores, ISA: isa}},
				device.Target{Name: "cpu", CPU: &device.CPU{Cores: cores, ISA: isa, L1D: 48 << 10, L2: 2 << 20, L3: 32 << 20}})
		}
	}
	for _, op := range kernels.Ops() {
		tmpl, ok := kernels.TemplateFor(op.Name, kernels.CPU)
		if !ok {
			continue
		}
		if tmpl.Default == nil {
			t.Errorf("%s: the CPU template has no Default", op.Name)
			continue
		}
		example, err := op.ParseShape(op.Example)
		if err != nil {
			t.Fatal(err)
		}
		shapes := [][]int{example}
		for _, fill := range []int{1, 7, 97, 1000} {
			s := make([]int, len(op.Dims))
			for i := range s {
				s[i] = fill + i
			}
			shapes = append(shapes, s)
		}
		for _, target := range targets {
			for _, shape := range shapes {
				c := tmpl.Default(shape, target)
				if err := tmpl.Space(shape, target).Check(c); err != nil {
					t.Errorf("%s %s on %+v: default %s: %v", op.Name, kernels.FormatShape(shape), *target.CPU, c, err)
				}
			}
		}
	}
}

// TestGeneric checks that every shipped CPU template emits shape-generic
// kernels too, which is what lets a config tuned for one shape serve every
// shape; and that the emitter's Asm says which forms have assembly: the
// specialised, generic and plain forms of the default config on AVX-512
// (the assembly's ISA) all render, and declare assembly exactly when Asm
// says so.
func TestGeneric(t *testing.T) {
	ops := kernels.Ops()
	if len(ops) == 0 {
		t.Fatal("no ops registered")
	}
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}}
	for _, op := range ops {
		tmpl, ok := kernels.TemplateFor(op.Name, kernels.CPU)
		if !ok {
			continue
		}
		shape, err := op.ParseShape(op.Example)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := tmpl.DefaultConfig(shape, target)
		if err != nil {
			t.Fatal(err)
		}
		forms := []kernels.Kernel{
			{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64},
			{Name: "K", Config: cfg, Arch: kernels.AMD64},
		}
		if tmpl.Go.Asm(cfg) {
			forms = append(forms, kernels.Kernel{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64Plain},
				kernels.Kernel{Name: "K", Config: cfg, Arch: kernels.AMD64Plain})
		}
		for _, k := range forms {
			f := golang.NewFile("k")
			asm := tmpl.Go.EmitGo(f, k)
			if _, err := golang.Render(f); err != nil {
				t.Errorf("%s %s (shape %v, %+v): %v", op.Name, cfg, k.Shape, k.Arch, err)
			}
			if (asm != nil) != tmpl.Go.Asm(cfg) {
				t.Errorf("%s %s (shape %v, %+v): %d bytes of assembly, but Asm says %v", op.Name, cfg, k.Shape, k.Arch, len(asm), tmpl.Go.Asm(cfg))
			}
		}
	}
}
