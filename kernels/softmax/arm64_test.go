package softmax

import (
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// neoverse is an arm64 target: two cores of NEON.
var neoverse = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Neoverse-N1", Cores: 2,
	ISA: device.ISA{ASIMD: true, FP16: true}}}

// arm64Shapes are the shapes of TestARM64Kernels: one element; partial
// vectors of 1, 2 and 3 lanes; rows of whole vectors, 12 of them, which
// an unroll of 4 takes as 3 groups; rows that cap an unroll of 4 at 3,
// with a tail; a long prime row, groups, single vectors and a tail.
var arm64Shapes = [][]int{{1, 1}, {3, 6}, {3, 17}, {5, 48}, {7, 15}, {2, 1031}}

// arm64Configs returns the NEON configs of TestARM64Kernels valid at
// shape on neoverse: every unroll, exp and prefetch on one goroutine,
// one on two, and a scalar config (the same Go as on amd64).
func arm64Configs(t *testing.T, shape []int) []schedule.Config {
	sp := Template.Space(shape, neoverse)
	var texts []string
	for _, u := range []int{1, 2, 4} {
		for _, exp := range []string{"poly4", "poly5"} {
			for _, pf := range []bool{false, true} {
				texts = append(texts, fmt.Sprintf("vec=4,unroll=%d,algo=threepass,exp=%s,threads=1,rows_per_chunk=1,code=asm,prefetch=%t,convert=block,store=cached", u, exp, pf))
			}
		}
	}
	texts = append(texts,
		"vec=4,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached")
	var out []schedule.Config
	for _, text := range texts {
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			out = append(out, cfg)
		}
	}
	return out
}

// TestARM64Kernels is TestKernels for arm64: the NEON configs of
// arm64Configs on arm64Shapes, built for arm64 and run natively or under
// emulation (skipped where neither can run), against the float64
// reference on every input kind.
func TestARM64Kernels(t *testing.T) {
	var ks []genKernel
	for _, shape := range arm64Shapes {
		for _, cfg := range arm64Configs(t, shape) {
			ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg, arm64: true})
		}
	}
	checkKernels(t, arm64Shapes, ks)
}

// TestARM64Space checks that the arm64 space offers NEON in assembly
// only, without amd64's vectors, degree-3 exp or streamed stores, and
// that its default is NEON.
func TestARM64Space(t *testing.T) {
	shape := []int{64, 100}
	sp := Template.Space(shape, neoverse)
	neonAsm := 0
	for i := range sp.Size() {
		c := sp.At(i)
		if !sp.Valid(c) {
			continue
		}
		switch {
		case c.Int("vec") > 4:
			t.Fatalf("%s is valid on arm64", c)
		case c.Int("vec") == 4 && c.Str("code") != "asm":
			t.Fatalf("%s, NEON in Go, is valid on arm64", c)
		case c.Str("exp") == poly3 || c.Str("store") == "stream":
			t.Fatalf("%s, amd64's exp or stores, is valid on arm64", c)
		case c.Int("vec") == 4:
			neonAsm++
		}
	}
	if neonAsm == 0 {
		t.Error("no NEON config on arm64")
	}
	c, err := Template.DefaultConfig(shape, neoverse)
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("vec") != 4 || c.Str("code") != "asm" {
		t.Errorf("default on arm64 = %s, want NEON", c)
	}
	if got := kernels.ArchOf(neoverse); got != kernels.ARM64 {
		t.Fatalf("ArchOf(neoverse) = %v", got)
	}
}

// TestARM64GenericKernels is TestGenericKernels for arm64: the generic
// NEON kernels of every unroll and exp, on one goroutine and on two, on
// rows of every tail of 4 lanes and of the unrolls, under emulation
// where this is not arm64.
func TestARM64GenericKernels(t *testing.T) {
	var shapes [][]int
	for _, r := range []int{1, 3, 17} {
		for _, c := range []int{1, 2, 3, 4, 5, 8, 15, 17, 33, 257} {
			shapes = append(shapes, []int{r, c})
		}
	}
	sp := Template.Space(genericTuned, neoverse)
	var forms []genericForm
	for _, s := range []string{
		"unroll=1,exp=poly5,threads=1,rows_per_chunk=1",
		"unroll=2,exp=poly4,threads=2,rows_per_chunk=16",
		"unroll=4,exp=poly5,threads=1,rows_per_chunk=1",
		"unroll=4,exp=poly4,threads=2,rows_per_chunk=1",
	} {
		cfg, err := sp.Parse("vec=4,algo=threepass,code=asm,prefetch=true,convert=block,store=cached," + s)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		forms = append(forms, genericForm{cfg, kernels.ARM64})
	}
	checkGeneric(t, shapes, forms)
}

// TestARM64HalfKernels checks the arm64 kernels of bf16 and f16, whose
// conversions are Go around the float32 NEON rows: the NEON configs of
// arm64Configs on halfShapes, specialised and shape-generic, under
// emulation where this is not arm64.
func TestARM64HalfKernels(t *testing.T) {
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			var specs []kerneltest.Spec
			for _, shape := range halfShapes {
				for i, cfg := range arm64Configs(t, shape) {
					if i%3 == 0 {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, ARM64: true},
							kerneltest.Spec{Config: cfg, Shape: shape, Generic: true, ARM64: true})
					}
				}
			}
			kerneltest.CheckDType(t, &Template, dt, specs)
		})
	}
}
