package emu

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/measure"
)

// attention16Configs are the configs TestAttention16 runs on each shape
// where valid: both copies (cp_async is the sync copy in 16 bits), one
// warp and eight, and outputs stored 4, 2 and 1 at a time.
var attention16Configs = []string{
	"br=16,bc=16,warps=1,tn=4,kv_copy=sync",
	"br=64,bc=32,warps=4,tn=4,kv_copy=cp_async",
	"br=32,bc=64,warps=8,tn=2,kv_copy=sync",
	"br=16,bc=128,warps=2,tn=8,kv_copy=cp_async",
}

// attention16Shapes are sequences of 1, 17 and 129 at the head dims the
// targets use (64, 128), and an odd head dim (7), whose loads are one
// element.
var attention16Shapes = [][]int{{1, 1, 1, 64}, {1, 2, 17, 64}, {1, 1, 129, 64}, {1, 1, 17, 128}, {1, 1, 129, 128}, {2, 1, 13, 7}}

// TestAttention16 checks the CUDA attention kernels, causal and not, of
// bf16 and f16 under emulation on every input set of the dtype (f16's
// include scores that saturate) at attention16Shapes.
func TestAttention16(t *testing.T) {
	tg := target(t, "sm_80")
	for _, tmpl := range []kernels.Template{attention.CUDATemplate, attention.CUDATemplateCausal} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			c := checker(t, false)
			c.DType, c.Orders = dt, Orders[:2]
			for _, shape := range attention16Shapes {
				sp := tmpl.Space(shape, tg)
				cfgs := parseValid(sp, attention16Configs)
				if len(cfgs) == 0 {
					t.Fatalf("%s %v: no config valid", tmpl.Op.Name, shape)
				}
				sets := measure.Inputs(tmpl.Op, shape, dt, 7)
				for _, cfg := range cfgs {
					k := tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
					o, err := c.EmulateSets(context.Background(), k, "sm_80", sets)
					if err != nil {
						t.Fatal(err)
					}
					if !o.OK {
						t.Errorf("%s %s %v %s: %s", tmpl.Op.Name, dt, shape, cfg, o)
					}
				}
			}
		}
	}
}

// TestAttention16PTX compiles bf16 and f16 attention kernels to PTX for
// each architecture CI checks: 16-byte loads of 8 elements converted by
// cvt, the output rounded by the pair form.
func TestAttention16PTX(t *testing.T) {
	c := checker(t, true)
	shape := []int{1, 2, 129, 128}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
			sp := attention.CUDATemplateCausal.Space(shape, target(t, arch))
			for _, cfg := range parseValid(sp, attention16Configs[1:2]) {
				k := attention.CUDATemplateCausal.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
				ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
				if err != nil {
					t.Fatalf("%s %s %s: %v", dt, arch, cfg, err)
				}
				for _, want := range []string{"ld.global.nc.v4.u32", "cvt.rn." + string(dt) + "x2.f32"} {
					if !strings.Contains(string(ptx), want) {
						t.Errorf("%s %s %s: no %s in the PTX", dt, arch, cfg, want)
					}
				}
			}
		}
	}
}

// sixteenBitAcc makes P·V's accumulation a 16-bit one: rounded to the
// dtype after each multiply-add.
var sixteenBitAcc = regexp.MustCompile(`acc\[i\]\[u\] = fmaf\((.*)\);`)

// TestAttention16PlantedBug checks that the checks catch a kernel that
// accumulates P·V in the dtype rather than in float32, over 512 keys.
func TestAttention16PlantedBug(t *testing.T) {
	shape := []int{1, 1, 512, 64}
	sp := attention.CUDATemplate.Space(shape, target(t, "sm_80"))
	cfg, err := sp.Parse("br=64,bc=64,warps=4,tn=4,kv_copy=sync")
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		c := checker(t, false)
		c.DType, c.Orders = dt, Orders[:1]
		sets := measure.Inputs(attention.Op, shape, dt, 7)[:1]
		k := attention.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
		n := len(sixteenBitAcc.FindAllString(k.Source, -1))
		k.Source = sixteenBitAcc.ReplaceAllString(k.Source, "acc[i][u] = at_"+string(dt)+"_to_float(at_float_to_"+string(dt)+"(fmaf($1)));")
		o, err := c.EmulateSets(context.Background(), k, "sm_80", sets)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || o.OK || !strings.Contains(o.Error, "wrong") {
			t.Errorf("%s: a kernel accumulating in %s (%d replaced): %s; want wrong", dt, dt, n, o)
		}
		t.Logf("%s: %s", dt, o)
	}
}
