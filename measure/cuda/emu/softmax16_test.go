package emu

import (
	"context"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// softmax16Configs are the grid TestSoftmax16 runs on each shape where
// valid: every load width (2, 4 and 8 elements), every place a row is
// kept, both algorithms and both exps, a warp or several per row, one
// row or several per block.
var softmax16Configs = []string{
	"tpr=32,rows_per_block=1,vec=1,keep=global,algo=threepass,exp=precise",
	"tpr=32,rows_per_block=4,vec=4,keep=regs,algo=online,exp=fast",
	"tpr=64,rows_per_block=2,vec=2,keep=smem,algo=online,exp=precise",
	"tpr=256,rows_per_block=1,vec=4,keep=smem,algo=threepass,exp=fast",
	"tpr=128,rows_per_block=1,vec=2,keep=global,algo=online,exp=fast",
	"tpr=32,rows_per_block=2,vec=4,keep=regs,algo=threepass,exp=precise",
}

// TestSoftmax16 checks the CUDA softmax kernels of bf16 and f16 under
// emulation on every input set of the dtype (f16's include logits near
// 65504 and subnormal logits) and odd shapes: one element, rows shorter
// than a vector, primes, rows off a vector boundary, a long row. With
// AUTOTUNE_EXHAUSTIVE=1 each shape also runs four sampled configs.
func TestSoftmax16(t *testing.T) {
	tg := target(t, "sm_80")
	r := rand.New(rand.NewPCG(5, 6))
	shapes := [][]int{{1, 1}, {3, 7}, {13, 97}, {5, 1023}, {2, 4099}, {1, 20011}}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		c := checker(t, false)
		c.DType, c.Orders = dt, Orders[:2]
		for _, shape := range shapes {
			sp := softmax.CUDATemplate.Space(shape, tg)
			cfgs := parseValid(sp, softmax16Configs)
			if os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1" {
				cfgs = append(cfgs, sample(t, sp, r, 4)...)
			}
			sets := measure.Inputs(softmax.Op, shape, dt, 7)
			for _, cfg := range cfgs {
				k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
				o, err := c.EmulateSets(context.Background(), k, "sm_80", sets)
				if err != nil {
					t.Fatal(err)
				}
				if !o.OK {
					t.Errorf("%s %v %s: %s", dt, shape, cfg, o)
				}
			}
		}
	}
}

// TestSoftmax16PTX compiles bf16 and f16 softmax kernels to PTX for each
// architecture CI checks: their conversions are cvt instructions there,
// the pair forms for the vectors.
func TestSoftmax16PTX(t *testing.T) {
	c := checker(t, true)
	shape := []int{33, 1023}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
			sp := softmax.CUDATemplate.Space(shape, target(t, arch))
			for _, cfg := range parseValid(sp, softmax16Configs[:3]) {
				k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
				ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
				if err != nil {
					t.Fatalf("%s %s %s: %v", dt, arch, cfg, err)
				}
				for _, want := range []string{"cvt.rn." + string(dt) + ".f32", "cvt.rn." + string(dt) + "x2.f32"} {
					if !strings.Contains(string(ptx), want) {
						t.Errorf("%s %s %s: no %s in the PTX", dt, arch, cfg, want)
					}
				}
			}
		}
	}
}

// TestSoftmax16PTXShortRows compiles to PTX the keep=regs kernels of rows
// shorter than a thread's vectors, where the emitted register array once
// had size 0: g++ (the emulator) accepted it and NVRTC rejected it on a
// GPU, so the PTX check must reject it too.
func TestSoftmax16PTXShortRows(t *testing.T) {
	c := checker(t, true)
	for _, shape := range [][]int{{1, 1}, {3, 7}} {
		sp := softmax.CUDATemplate.Space(shape, target(t, "sm_90"))
		for _, cfg := range parseValid(sp, []string{
			"tpr=32,rows_per_block=1,vec=1,keep=regs,algo=threepass,exp=fast",
			"tpr=32,rows_per_block=2,vec=4,keep=regs,algo=online,exp=precise",
		}) {
			k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dtype.BF16, Config: cfg})
			if _, err := PTX(context.Background(), c.Clang, k, "sm_90", t.TempDir()); err != nil {
				t.Errorf("%v %s: %v", shape, cfg, err)
			}
		}
	}
}

// sixteenBitSum makes the three-pass kernel's sum a 16-bit one: rounded
// to the dtype after each addition.
var sixteenBitSum = regexp.MustCompile(`s \+= (.*);`)

// TestSoftmax16PlantedBug checks that the checks catch a kernel that
// keeps its statistics in the dtype rather than in float32: summing e^(x-m)
// in bf16 or f16 over a row of 1023 loses the small terms.
func TestSoftmax16PlantedBug(t *testing.T) {
	tg := target(t, "sm_80")
	shape := []int{5, 1023}
	sp := softmax.CUDATemplate.Space(shape, tg)
	cfg, err := sp.Parse("tpr=32,rows_per_block=1,vec=2,keep=global,algo=threepass,exp=precise")
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		c := checker(t, false)
		c.DType = dt
		k := softmax.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
		ok, err := c.EmulateSets(context.Background(), k, "sm_80", measure.Inputs(softmax.Op, shape, dt, 7))
		if err != nil || !ok.OK {
			t.Fatalf("%s: the kernel before the bug: %s %v", dt, ok, err)
		}
		n := len(sixteenBitSum.FindAllString(k.Source, -1))
		k.Source = sixteenBitSum.ReplaceAllString(k.Source, "s = at_"+string(dt)+"_to_float(at_float_to_"+string(dt)+"(s + $1));")
		o, err := c.EmulateSets(context.Background(), k, "sm_80", measure.Inputs(softmax.Op, shape, dt, 7))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || o.OK || !strings.Contains(o.Error, "wrong") {
			t.Errorf("%s: a kernel summing in %s (%d sums replaced): %s; want wrong", dt, dt, n, o)
		}
		t.Logf("%s: %s", dt, o)
	}
}

// parseValid returns the configs of texts that are valid in sp.
func parseValid(sp *schedule.Space, texts []string) []schedule.Config {
	var out []schedule.Config
	for _, text := range texts {
		if cfg, err := sp.Parse(text); err == nil && sp.Valid(cfg) {
			out = append(out, cfg)
		}
	}
	return out
}
