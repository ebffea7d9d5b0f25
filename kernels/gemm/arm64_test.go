package gemm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// neoverse is an arm64 target: two cores of NEON, with the caches of a
// Neoverse N1.
var neoverse = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Neoverse-N1", Cores: 2,
	ISA: device.ISA{ASIMD: true, FP16: true}, L1D: 64 << 10, L2: 1 << 20, L3: 32 << 20}}

// arm64Schedules are the schedules of the NEON configs TestARM64Kernels
// checks, of the assembly schedules of schedules: B packed and in place,
// A packed and in place, split over rows and columns; -short keeps the
// first, AUTOTUNE_EXHAUSTIVE=1 adds the others. Under emulation a kernel
// runs some hundred times slower than natively.
func arm64Schedules() []string {
	var asm []string
	for _, s := range schedules {
		if strings.Contains(s, "micro=asm") {
			asm = append(asm, s)
		}
	}
	switch {
	case exhaustive:
		return asm
	case testing.Short():
		return asm[:1]
	}
	return []string{asm[0], asm[2]}
}

// arm64Shapes are testShapes with the large one, which has tails in M, N
// and K over several blocks of each, shrunk to fewer blocks: under
// emulation its hundred-odd kernels took minutes.
var arm64Shapes = [][]int{{1, 1, 1}, {131, 263, 70}, {1, 4096, 1}, {17, 1, 33}, {64, 64, 1}}

// TestARM64Kernels is TestKernels for arm64: NEON configs of the grid of
// the arm64 space at arm64Schedules, and its first scalar config (the
// same Go as on amd64, which TestKernels checks at length), of gemm and
// its epilogues, on arm64Shapes, built for arm64 and run natively or under emulation,
// skipped where neither can run.
func TestARM64Kernels(t *testing.T) {
	scheds := arm64Schedules()
	var ks []genKernel
	for _, shape := range arm64Shapes {
		for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
			scalar := false
			for _, cfg := range grid(t, shape, neoverse, false) {
				keep := false
				if cfg.Int("vec") == 1 {
					keep, scalar = !scalar, true
				}
				for _, s := range scheds {
					keep = keep || strings.HasSuffix(cfg.String(), ","+s)
				}
				if keep {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, cfg: cfg, arm64: true})
				}
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
	if _, err := sp.Parse("vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy"); err == nil {
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
