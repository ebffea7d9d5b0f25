package gemm

import (
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// neoverse is an arm64 target: two cores of NEON, with the caches of a
// Neoverse N1.
var neoverse = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Neoverse-N1", Cores: 2,
	ISA: device.ISA{ASIMD: true, FP16: true}, L1D: 64 << 10, L2: 1 << 20, L3: 32 << 20}}

// TestARM64Kernels is TestKernels for arm64: the NEON configs of the
// grid of the arm64 space, and its first scalar config (the same Go as on
// amd64, which TestKernels checks at length), built for arm64 and run
// natively or under emulation, skipped where neither can run.
func TestARM64Kernels(t *testing.T) {
	var ks []genKernel
	for _, shape := range testShapes {
		for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
			short := testing.Short() || tmpl != &Template
			scalar := false
			for _, cfg := range grid(t, shape, neoverse, short) {
				if cfg.Int("vec") == 1 {
					if scalar {
						continue
					}
					scalar = true
				}
				ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, cfg: cfg, arm64: true})
			}
		}
	}
	checkKernels(t, ks)
}

// TestARM64Space checks that the arm64 space offers NEON in assembly
// only, and that amd64's vectors are not in it.
func TestARM64Space(t *testing.T) {
	sp := Template.Space([]int{256, 256, 256}, neoverse)
	neonAsm, neonGo := 0, 0
	for i := range sp.Size() {
		c := sp.At(i)
		if !sp.Valid(c) {
			continue
		}
		switch {
		case c.Int("vec") == 8 || c.Int("vec") == 16:
			t.Fatalf("%s is valid on arm64", c)
		case c.Int("vec") == 4 && c.Str("micro") == "asm":
			neonAsm++
		case c.Int("vec") == 4:
			neonGo++
		}
	}
	if neonAsm == 0 || neonGo != 0 {
		t.Errorf("arm64 space: %d NEON assembly configs, %d NEON archsimd ones; want some and none", neonAsm, neonGo)
	}
	if _, err := sp.Parse("vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false"); err == nil {
		t.Error("vec=8 parses in the arm64 space")
	}
}

func TestARM64Default(t *testing.T) {
	for _, shape := range [][]int{{1, 1, 1}, {1024, 1024, 1024}} {
		c, err := Template.DefaultConfig(shape, neoverse)
		if err != nil {
			t.Fatal(err)
		}
		if c.Int("vec") != 4 || c.Str("micro") != "asm" {
			t.Errorf("default for %v on arm64 = %s, want a NEON assembly tile", shape, c)
		}
	}
}
