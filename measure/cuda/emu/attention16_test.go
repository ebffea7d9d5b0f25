package emu

import (
	"context"
	"fmt"
	"os"
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

// attentionMMATiles are the tiles (br, bc, warps) of the tensor-core
// configs TestAttentionMMA runs: one warp and eight, one m16 tile of rows
// a warp and two (br = 32·warps), key tiles of 16 to 128; each takes the
// one tn the space allows it (mmaConfigs).
var attentionMMATiles = [][3]int{{16, 16, 1}, {64, 32, 2}, {64, 32, 4}, {32, 64, 2}, {128, 128, 8}, {128, 64, 4}}

// mmaConfigs returns the config texts of kv_copy=mma for tiles, one per
// tn: parseValid keeps the valid one.
func mmaConfigs(tiles [][3]int) []string {
	var out []string
	for _, t := range tiles {
		for _, tn := range []int{2, 4, 8} {
			out = append(out, fmt.Sprintf("br=%d,bc=%d,warps=%d,tn=%d,kv_copy=mma", t[0], t[1], t[2], tn))
		}
	}
	return out
}

// attentionMMAShapes are sequences of 1, primes and lengths past a
// multiple of the tiles, an odd batch×heads, at head dims 16, 64 and 128.
var attentionMMAShapes = [][]int{{1, 1, 1, 64}, {1, 3, 17, 64}, {1, 1, 131, 64}, {3, 1, 37, 128}, {1, 1, 129, 128}, {1, 1, 23, 16}}

// TestAttentionMMA checks the tensor-core attention kernels, causal and
// not, of bf16 and f16 under emulation (whose ldmatrix and mma hand each
// lane what the PTX ISA's fragment layouts say) on every input set of
// the dtype, f16's with scores that saturate, at attentionMMAShapes: the
// first three tiles by default, all six with AUTOTUNE_EXHAUSTIVE=1 (about
// four minutes on two loaded cores).
func TestAttentionMMA(t *testing.T) {
	tg := target(t, "sm_80")
	tiles := attentionMMATiles[:3]
	if os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1" {
		tiles = attentionMMATiles
	}
	for _, tmpl := range []kernels.Template{attention.CUDATemplate, attention.CUDATemplateCausal} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			c := checker(t, false)
			c.DType, c.Orders = dt, Orders[:2]
			for _, shape := range attentionMMAShapes {
				cfgs := parseValid(tmpl.Space(shape, tg), mmaConfigs(tiles))
				if len(cfgs) == 0 {
					t.Fatalf("%s %v: no config valid", tmpl.Op.Name, shape)
				}
				sets := measure.Inputs(tmpl.Op, shape, dt, 7)
				for _, cfg := range cfgs {
					k := tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
					if !strings.Contains(k.Source, "at_mma(") {
						t.Fatalf("%s %s %v %s: not a tensor-core kernel", tmpl.Op.Name, dt, shape, cfg)
					}
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

// TestAttentionMMAPlantedBug checks that emulation catches a tensor-core
// kernel whose weights' A fragment takes its rows g+8 from the wrong C
// registers (the keys 8 further on, as if the C→A mapping were off by a
// fragment), one whose quad reduction of the row maximum is left out, and
// one whose warp's second m16 tile multiplies the first tile's rows of Q,
// and one that waits for all but two groups of copies, not one, before
// P·V (the emulator's tiles read too early are NaN).
func TestAttentionMMAPlantedBug(t *testing.T) {
	shape := []int{1, 1, 37, 64}
	sp := attention.CUDATemplate.Space(shape, target(t, "sm_80"))
	cfg, err := sp.Parse("br=64,bc=32,warps=2,tn=4,kv_copy=mma") // two m16 tiles a warp
	if err != nil || sp.Check(cfg) != nil {
		t.Fatalf("config: %v %v", err, sp.Check(cfg))
	}
	dt := dtype.BF16
	c := checker(t, false)
	c.DType, c.Orders = dt, Orders[:1]
	sets := measure.Inputs(attention.Op, shape, dt, 7)[:1]
	good := attention.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
	for _, plant := range []struct{ what, old, new string }{
		{"C→A off by a fragment", "(sc[i][2 * kk][2], sc[i][2 * kk][2 + 1])", "(sc[i][2 * kk + 1][2], sc[i][2 * kk + 1][2 + 1])"},
		{"second m-tile on the first tile's rows", "qw + 16 * i * LDK + 16 * kk", "qw + 16 * kk"},
		{"V's tile read before its copies land", "cp_async_wait<1>();\n\t\t// Every warp is done with P·V", "cp_async_wait<2>();\n\t\t// Every warp is done with P·V"},
		{"no quad maximum", "mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));", ""},
	} {
		k := good
		if !strings.Contains(k.Source, plant.old) {
			t.Fatalf("%s: %q not in the kernel", plant.what, plant.old)
		}
		k.Source = strings.Replace(k.Source, plant.old, plant.new, 1)
		o, err := c.EmulateSets(context.Background(), k, "sm_80", sets)
		if err != nil {
			t.Fatal(err)
		}
		if o.OK || !strings.Contains(o.Error, "wrong") {
			t.Errorf("%s: %s; want wrong", plant.what, o)
		}
		t.Logf("%s: %s", plant.what, o)
	}
}

// TestAttentionMMAPTX compiles tensor-core attention kernels, causal,
// to PTX for each architecture CI checks: mma.sync m16n8k16 in the dtype,
// ldmatrix plain and transposed, cp.async, the weights narrowed in pairs;
// at D = 64 one m16 tile a warp and two, at D = 128 two (one warp of 32
// rows also fits sm_86's shared memory).
func TestAttentionMMAPTX(t *testing.T) {
	c := checker(t, true)
	testAttentionMMAPTX(t, c, []int{1, 2, 129, 64}, attentionMMATiles[1:3])
	testAttentionMMAPTX(t, c, []int{1, 2, 129, 128}, [][3]int{{32, 32, 1}, {64, 32, 2}})
}

func testAttentionMMAPTX(t *testing.T, c *Checker, shape []int, tiles [][3]int) {
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
			sp := attention.CUDATemplateCausal.Space(shape, target(t, arch))
			cfgs := parseValid(sp, mmaConfigs(tiles))
			if len(cfgs) == 0 {
				t.Fatalf("%s: no tensor-core config valid", arch)
			}
			for _, cfg := range cfgs {
				k := attention.CUDATemplateCausal.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
				ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
				if err != nil {
					t.Fatalf("%s %s %s: %v", dt, arch, cfg, err)
				}
				for _, want := range []string{"mma.sync.aligned.m16n8k16.row.col.f32." + string(dt), "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "cp.async.cg.shared.global", "cvt.rn." + string(dt) + "x2.f32"} {
					if !strings.Contains(string(ptx), want) {
						t.Errorf("%s %s %s: no %s in the PTX", dt, arch, cfg, want)
					}
				}
			}
		}
	}
}
