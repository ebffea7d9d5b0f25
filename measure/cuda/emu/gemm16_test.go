package emu

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/measure"
)

// gemm16Configs are the grid TestGemm16 runs on each shape where valid:
// 16-byte copies of both operands, of one, of neither; cp.async pipelines
// of one to four stages and copies through registers; warp tiles from
// 16x16 to 64x64; bk 8 (one mma deep, as 16) to 64; blocks grouped by 8
// rows of tiles (raster=8, at shapes of fewer rows: TestGemmRaster has
// more); the smallest tiles, the only ones valid at 1x1x1.
var gemm16Configs = []string{
	"bm=128,bn=128,bk=64,tm=8,tn=16,vec_a=4,vec_b=4,copy=cp_async,stages=4,raster=8",
	"bm=64,bn=128,bk=64,tm=4,tn=16,vec_a=4,vec_b=4,copy=regs,stages=2,raster=1",
	"bm=64,bn=64,bk=64,tm=4,tn=16,vec_a=1,vec_b=4,copy=cp_async,stages=3,raster=1",
	"bm=128,bn=128,bk=32,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1",
	"bm=64,bn=64,bk=16,tm=4,tn=4,vec_a=4,vec_b=1,copy=cp_async,stages=2,raster=1",
	"bm=32,bn=64,bk=32,tm=2,tn=8,vec_a=1,vec_b=4,copy=cp_async,stages=1,raster=1",
	"bm=64,bn=32,bk=8,tm=4,tn=4,vec_a=4,vec_b=4,copy=regs,stages=2,raster=1",
	"bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=1,vec_b=1,copy=regs,stages=1,raster=1",
	"bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=1,vec_b=1,copy=cp_async,stages=2,raster=1",
}

// TestGemm16 checks the tensor-core GEMM kernels of bf16 and f16 (and the
// bias+ReLU epilogue) under emulation on every input set of the dtype, at
// odd shapes: one element, primes in every dimension (odd K: rows of A
// not 16-byte aligned), tails of every tile with aligned rows, a K tail
// within the last 16-deep step, a long K, a block-sized shape, and tails
// of the largest tiles with K five 64-deep slices (a pipeline of four
// stages that wraps around).
func TestGemm16(t *testing.T) {
	tg := target(t, "sm_80")
	shapes := [][]int{{1, 1, 1}, {17, 13, 37}, {100, 70, 33}, {40, 24, 72}, {33, 17, 65}, {8, 16, 2056}, {128, 128, 64}, {129, 136, 264}}
	for _, tmpl := range []kernels.Template{gemm.CUDATemplate, gemm.BiasReLUCUDATemplate} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			c := checker(t, false)
			c.DType, c.Orders = dt, Orders[:2]
			for _, shape := range shapes {
				cfgs := parseValid(tmpl.Space(shape, tg), gemm16Configs)
				if tmpl.Op.Name != gemm.Op.Name {
					// The epilogue differs in the store only: two configs at
					// the shapes with tails, odd and aligned.
					if shape[0] != 17 && shape[0] != 40 {
						continue
					}
					cfgs = cfgs[:min(2, len(cfgs))]
				}
				if len(cfgs) == 0 {
					t.Fatalf("%v: none of the configs is valid", shape)
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

// TestGemm16PlantedBug checks that the checks catch a kernel that rounds
// its accumulators to the dtype after every mma instead of keeping them
// in float32, over a K of 2056.
func TestGemm16PlantedBug(t *testing.T) {
	tg := target(t, "sm_80")
	shape := []int{8, 16, 2056}
	cfgs := parseValid(gemm.CUDATemplate.Space(shape, tg), gemm16Configs[7:8])
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		c := checker(t, false)
		c.DType = dt
		k := gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfgs[0]})
		mma := "at_mma(acc[i][j], af[i], bf[j]);"
		if !strings.Contains(k.Source, mma) {
			t.Fatalf("the kernel has no %q", mma)
		}
		round := "for (int e = 0; e < 4; ++e) acc[i][j][e] = at_T_to_float(at_float_to_T(acc[i][j][e]));"
		k.Source = strings.Replace(k.Source, mma, "{ "+mma+" "+strings.ReplaceAll(round, "_T", "_"+string(dt))+" }", 1)
		o, err := c.EmulateSets(context.Background(), k, "sm_80", measure.Inputs(gemm.Op, shape, dt, 7))
		if err != nil {
			t.Fatal(err)
		}
		if o.OK || !strings.Contains(o.Error, "wrong") {
			t.Errorf("%s: a kernel accumulating in %s: %s; want wrong", dt, dt, o)
		}
		t.Logf("%s: %s", dt, o)
	}
}

// TestGemm16PTX compiles bf16 and f16 GEMM kernels to PTX for each
// architecture CI checks: tensor-core instructions, cp.async and cvt.
func TestGemm16PTX(t *testing.T) {
	c := checker(t, true)
	shape := []int{100, 72, 40}
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
			// Four stages of 64-deep slices where the architecture's
			// shared memory holds them (not sm_86's), and three of 32.
			cfgs := parseValid(gemm.CUDATemplate.Space(shape, target(t, arch)), []string{gemm16Configs[0], gemm16Configs[3]})
			if want := map[string]int{"sm_86": 1}[arch]; len(cfgs) != cmp.Or(want, 2) {
				t.Fatalf("%s: %d of the configs are valid, want %d", arch, len(cfgs), cmp.Or(want, 2))
			}
			var ks []kernels.CUDAKernel
			for _, cfg := range cfgs {
				ks = append(ks, gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg}),
					gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", DType: dt, Config: cfg}))
			}
			for _, k := range ks {
				ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
				if err != nil {
					t.Fatalf("%s %s: %v", dt, arch, err)
				}
				for _, want := range []string{"mma.sync.aligned.m16n8k16.row.col.f32." + string(dt), "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
					"cp.async.cg.shared.global", "cvt.rn." + string(dt) + "x2.f32"} {
					if !strings.Contains(string(ptx), want) {
						t.Errorf("%s %s generic=%v: no %s in the PTX", dt, arch, k.Generic != nil, want)
					}
				}
			}
		}
	}
}

// TestGemmRaster checks the launch order of raster=8 (blocks down the
// columns of groups of eight rows of C's tiles) in float32 and bf16,
// specialised and shape-generic, with 19 rows of tiles (two whole groups
// and one of three) and 3 columns: a tile computed twice and another
// never leaves NaN, the output's poison. Grouping the last group as a
// whole one is planted and caught.
func TestGemmRaster(t *testing.T) {
	tg := target(t, "sm_80")
	shape := []int{19*32 - 5, 70, 33}
	cfgText := "bm=32,bn=32,bk=16,tm=2,tn=4,vec_a=1,vec_b=1,copy=cp_async,stages=2,raster=8"
	for _, dt := range []dtype.DType{dtype.F32, dtype.BF16} {
		cfg := parseValid(gemm.CUDATemplate.SearchSpace(shape, dt, tg), []string{cfgText})
		if len(cfg) != 1 {
			t.Fatalf("%s is not valid at %v", cfgText, shape)
		}
		c := checker(t, false)
		c.DType = dt
		sets := measure.Inputs(gemm.Op, shape, dt, 7)[:1]
		specialised := gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg[0]})
		o, err := c.EmulateSets(context.Background(), specialised, "sm_80", sets)
		if err != nil {
			t.Fatal(err)
		}
		if !o.OK {
			t.Errorf("%s: %s", dt, o)
		}
		generic := gemm.CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", DType: dt, Config: cfg[0]})
		if o, err := c.EmulateAt(context.Background(), generic, shape, "sm_80", sets); err != nil || !o.OK {
			t.Errorf("%s generic: %s %v", dt, o, err)
		}
		whole := "rows = min((int)gridDim.y - first, 8)"
		if !strings.Contains(specialised.Source, whole) {
			t.Fatalf("%s: the kernel has no %q", dt, whole)
		}
		specialised.Source = strings.Replace(specialised.Source, whole, "rows = 8", 1)
		o, err = c.EmulateSets(context.Background(), specialised, "sm_80", sets)
		if err != nil {
			t.Fatal(err)
		}
		if o.OK {
			t.Errorf("%s: a last group taken as whole passed", dt)
		}
		t.Logf("%s, last group taken as whole: %s", dt, o)
	}
}
