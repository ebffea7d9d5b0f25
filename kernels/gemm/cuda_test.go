package gemm

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

func cudaTarget(t *testing.T, arch string) device.Target {
	t.Helper()
	target, err := device.Lookup(arch)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// TestCUDAGolden checks the generated CUDA of the 2048³ workhorse (128×128
// tiles, 8×8 per thread, float4 loads, double buffering through
// registers), a cp.async pipeline of three stages with tails in every
// dimension and scalar loads (N and K odd), and, for the epilogues, a
// single-buffered cp.async tile with the bias stored a float4 at a time and
// a tail in M. go test -update rewrites the files.
func TestCUDAGolden(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	for _, tt := range []struct {
		sum     string
		tmpl    kernels.Template
		goldens []kerneltest.CUDAGolden
	}{
		{"cuda_golden.sum", CUDATemplate, []kerneltest.CUDAGolden{
			{Name: "128x128x8_8x8_regs2", Shape: "2048x2048x2048", Config: "bm=128,bn=128,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=regs,stages=2,raster=1"},
			{Name: "64x32x16_cp_async3_tails", Shape: "100x37x51", Config: "bm=64,bn=32,bk=16,tm=4,tn=4,vec_a=1,vec_b=1,copy=cp_async,stages=3,raster=1"},
		}},
		{"cuda_golden_bias.sum", BiasCUDATemplate, []kerneltest.CUDAGolden{
			{Name: "bias_64x64x8_cp_async1", Shape: "100x64x64", Config: "bm=64,bn=64,bk=8,tm=4,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=1,raster=1"},
		}},
		{"cuda_golden_bias_relu.sum", BiasReLUCUDATemplate, []kerneltest.CUDAGolden{
			{Name: "bias_relu_32x32x8_regs1_tails", Shape: "33x17x9", Config: "bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=1,vec_b=1,copy=regs,stages=1,raster=1"},
		}},
	} {
		t.Run(tt.tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", tt.sum), "kernels/gemm/cuda.go", cudaRevision, tt.tmpl, tt.goldens...)
		})
	}
}

// TestCUDAGoldenGeneric is TestCUDAGolden for the shape-generic CUDA:
// float4 loads of A and B with a cp.async pipeline, and the bias and ReLU
// epilogue stored a float at a time.
func TestCUDAGoldenGeneric(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_golden.sum"), "kernels/gemm/cuda.go", cudaGenericRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_64x64x16_cp_async3", Shape: "2048x2048x2048", Config: "bm=64,bn=64,bk=16,tm=4,tn=4,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1", Generic: true})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_golden_bias_relu.sum"), "kernels/gemm/cuda.go", cudaGenericRevision, BiasReLUCUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_bias_relu_32x32x8_regs2", Shape: "2048x2048x2048", Config: "bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=1,vec_b=1,copy=regs,stages=2,raster=1", Generic: true})
}

// TestCUDAHalfGolden checks the generated CUDA of the tensor-core
// kernels: 4096³'s 128×128×32 tiles of eight 64×32 warp tiles in a
// cp.async pipeline of three stages in bf16; 8192³'s 128×256×64 tiles of
// eight 64×64 warp tiles, four stages, blocks grouped by eight rows of
// tiles; f16 with odd N and K (copies
// and stores an element at a time, tails everywhere) and the bias+ReLU
// epilogue; and the shape-generic form, which picks 16-byte copies and
// paired stores at run time.
func TestCUDAHalfGolden(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_half_golden.sum"), "kernels/gemm/cudahalf.go", cudaHalfRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "bf16_128x128x32_cp_async3", Shape: "4096x4096x4096", DType: dtype.BF16, Config: "bm=128,bn=128,bk=32,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1"},
		kerneltest.CUDAGolden{Name: "bf16_128x256x64_cp_async4_raster8", Shape: "8192x8192x8192", DType: dtype.BF16, Config: "bm=128,bn=256,bk=64,tm=8,tn=16,vec_a=4,vec_b=4,copy=cp_async,stages=4,raster=8"},
		kerneltest.CUDAGolden{Name: "bf16_generic_64x64x16_cp_async2", Shape: "4096x4096x4096", DType: dtype.BF16, Config: "bm=64,bn=64,bk=16,tm=4,tn=4,vec_a=4,vec_b=4,copy=cp_async,stages=2,raster=1", Generic: true})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_half_golden_bias_relu.sum"), "kernels/gemm/cudahalf.go", cudaHalfRevision, BiasReLUCUDATemplate,
		kerneltest.CUDAGolden{Name: "bias_relu_f16_64x32x16_regs2_tails", Shape: "100x37x51", DType: dtype.F16, Config: "bm=64,bn=32,bk=16,tm=4,tn=4,vec_a=1,vec_b=1,copy=regs,stages=2,raster=1"})
}

// TestCUDAHalfGeometry checks, for every valid config of a few shapes on
// sm_80, sm_86 and sm_90, that the tensor-core kernel launches the
// float32 kernel's block and grid, that its shared memory fits the
// target where a bf16 search would explore it, that the estimate does not
// rule such a config out (+Inf), and
// that its warps tile the block tile with warp tiles of tm·tn elements a
// thread.
func TestCUDAHalfGeometry(t *testing.T) {
	for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
		target := cudaTarget(t, arch)
		for _, shape := range [][]int{{33, 17, 9}, {4096, 4096, 4096}} {
			sp := cudaSpace(shape, target)
			search := CUDATemplate.SearchSpace(shape, dtype.BF16, target)
			for i := range sp.Size() {
				cfg := sp.At(i)
				if !sp.Valid(cfg) {
					continue
				}
				k := CUDATemplate.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dtype.BF16, Config: cfg})
				f32 := newCUDAGeometry(shape, cfg)
				if grid := [3]int{ceilDiv(shape[1], f32.bn), ceilDiv(shape[0], f32.bm), 1}; k.Grid != grid || k.Block != [3]int{f32.threads, 1, 1} {
					t.Fatalf("%s %v %s: launch %v %v, the float32 kernel's %v %d", arch, shape, cfg, k.Grid, k.Block, grid, f32.threads)
				}
				if est := CUDATemplate.Estimate(shape, target, cfg); search.Valid(cfg) && math.IsInf(est, 1) {
					t.Fatalf("%s %v %s: a bf16 search explores it, its estimate is +Inf (resident blocks from the float32 kernel's shared memory?)", arch, shape, cfg)
				}
				if fits := k.SharedBytes <= target.GPU.SharedMemPerBlockOptin; fits != search.Valid(cfg) {
					t.Fatalf("%s %v %s: %d bytes of shared memory of the %d of %s; a bf16 search explores it: %v", arch, shape, cfg, k.SharedBytes, target.GPU.SharedMemPerBlockOptin, arch, search.Valid(cfg))
				}
				g := newHalfGeometry(shape, dtype.BF16, cfg)
				if warps := (g.bm / g.wm) * (g.bn / g.wn); warps*32 != g.threads || g.wm*g.wn != 32*cfg.Int("tm")*cfg.Int("tn") || g.wm%16 != 0 || g.wn%16 != 0 {
					t.Fatalf("%s %v %s: warp tile %dx%d for %d threads", arch, shape, cfg, g.wm, g.wn, g.threads)
				}
			}
		}
	}
}

func TestCUDAConstraints(t *testing.T) {
	sm90, sm75 := cudaTarget(t, "sm_90"), cudaTarget(t, "sm_75")
	const fast = "bm=128,bn=128,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=regs,stages=2,raster=1"
	for _, tt := range []struct {
		target     device.Target
		shape, cfg string
		want       string
	}{
		{sm90, "2048x2048x2048", fast, ""},
		{sm90, "2048x2048x2048", "bm=128,bn=128,bk=32,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1", ""},
		// 4×4 threads of 8×8 outputs are half a warp.
		{sm90, "2048x2048x2048", "bm=32,bn=32,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=regs,stages=1,raster=1", "whole_warps"},
		{sm90, "2048x2048x2048", "bm=256,bn=256,bk=8,tm=2,tn=4,vec_a=4,vec_b=4,copy=regs,stages=1,raster=1", "threads_per_block"},
		// Two stages of 256×72 + 64×136 16-bit elements (the 16-bit
		// kernel's, the smaller) are 106 KB, over sm_75's 64 KB (and
		// under sm_90's 227 KB).
		{sm75, "2048x2048x2048", "bm=256,bn=128,bk=64,tm=8,tn=16,vec_a=4,vec_b=4,copy=regs,stages=2,raster=1", "shared_memory_per_block"},
		{sm75, "2048x2048x2048", "bm=128,bn=128,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=2,raster=1", "cp_async_needs_sm80"},
		// 8×8 accumulators with 512 threads: 64+32+8+28 = 132 registers,
		// over 65536/512 = 128.
		{sm90, "2048x2048x2048", "bm=256,bn=128,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=regs,stages=1,raster=1", "registers_per_thread"},
		{sm90, "2048x2048x2048", "bm=128,bn=128,bk=8,tm=8,tn=8,vec_a=4,vec_b=4,copy=regs,stages=3,raster=1", "regs_copy_two_stages"},
		{sm90, "100x37x51", "bm=64,bn=32,bk=16,tm=4,tn=4,vec_a=4,vec_b=1,copy=regs,stages=1,raster=1", "vec_a_aligned"},
		{sm90, "100x37x52", "bm=64,bn=32,bk=16,tm=4,tn=4,vec_a=4,vec_b=4,copy=regs,stages=1,raster=1", "vec_b_aligned"},
		{sm90, "20x37x52", "bm=64,bn=32,bk=16,tm=4,tn=4,vec_a=4,vec_b=1,copy=regs,stages=1,raster=1", "tile_within_shape"},
		{sm90, "3000000x32x8", "bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=4,vec_b=4,copy=regs,stages=1,raster=1", "grid_fits"},
	} {
		shape, err := Op.ParseShape(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckConstraint(t, cudaSpace(shape, tt.target), tt.cfg, tt.want)
	}
	kerneltest.CheckConstraint(t, cudaSpace([]int{64, 64, 64}, device.Host()), "bm=32,bn=32,bk=8,tm=2,tn=4,vec_a=1,vec_b=1,copy=regs,stages=1,raster=1", "needs_cuda_target")

	// Four stages of 128×72 + 64×136 16-bit elements are 140 KB, under
	// sm_90's 227 KB; of 128×68 + 64×128 floats, 264 KB, over it: a
	// float32 search leaves the config out, a bf16 one keeps it.
	shape := []int{2048, 2048, 2048}
	big := "bm=128,bn=128,bk=64,tm=8,tn=16,vec_a=4,vec_b=4,copy=cp_async,stages=4,raster=1"
	kerneltest.CheckConstraint(t, CUDATemplate.SearchSpace(shape, dtype.F32, sm90), big, "shared_memory_per_block_f32")
	kerneltest.CheckConstraint(t, CUDATemplate.SearchSpace(shape, dtype.BF16, sm90), big, "")
	kerneltest.CheckConstraint(t, BiasReLUCUDATemplate.SearchSpace(shape, dtype.F16, sm90), big, "")
}

// TestCUDAGeometry checks, for every valid config of a few odd shapes, that
// the grid covers C exactly once, the block is the one the kernel was
// compiled for, the shared memory holds every stage's tiles, and the
// source declares the bounds checks the shape needs and only those.
func TestCUDAGeometry(t *testing.T) {
	target := cudaTarget(t, "sm_80")
	for _, shape := range [][]int{{1, 1, 1}, {7, 13, 5}, {33, 17, 9}, {64, 64, 64}, {2048, 2048, 2048}} {
		sp := cudaSpace(shape, target)
		n := 0
		for i := range sp.Size() {
			cfg := sp.At(i)
			if !sp.Valid(cfg) {
				continue
			}
			n++
			for _, tmpl := range []kernels.Template{CUDATemplate, BiasReLUCUDATemplate} {
				k := tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, Config: cfg})
				bm, bn, bk := cfg.Int("bm"), cfg.Int("bn"), cfg.Int("bk")
				threads := bm / cfg.Int("tm") * (bn / cfg.Int("tn"))
				m, nn, kk := shape[0], shape[1], shape[2]
				if k.Grid[0]*bn < nn || (k.Grid[0]-1)*bn >= nn || k.Grid[1]*bm < m || (k.Grid[1]-1)*bm >= m || k.Grid[2] != 1 {
					t.Fatalf("%v %s: grid %v does not cover C once with %dx%d tiles", shape, cfg, k.Grid, bm, bn)
				}
				if k.Block != [3]int{threads, 1, 1} || !strings.Contains(k.Source, fmt.Sprintf("__launch_bounds__(%d)", threads)) {
					t.Fatalf("%v %s: block %v, want %d threads, and the bound in the source", shape, cfg, k.Block, threads)
				}
				if want := 4 * cfg.Int("stages") * (bm*(bk+4) + bk*bn); k.SharedBytes != want {
					t.Fatalf("%v %s: %d bytes of shared memory, want %d", shape, cfg, k.SharedBytes, want)
				}
				for _, check := range []struct {
					expr string
					need bool
				}{
					{"m0 + r < M", m%bm != 0}, {"k0 + cc < K", kk%bk != 0}, {"n0 + cc < N", nn%bn != 0}, {"r >= M", m%bm != 0},
				} {
					if strings.Contains(k.Source, check.expr) != check.need {
						t.Fatalf("%v %s: source has the check %q: %v, want %v", shape, cfg, check.expr, !check.need, check.need)
					}
				}
				if tmpl.Op.Name == BiasReLUOp.Name && !strings.Contains(k.Source, "bias") {
					t.Fatalf("%v %s: the epilogue's kernel never reads the bias", shape, cfg)
				}
			}
		}
		if n == 0 {
			t.Errorf("%v: no valid config", shape)
		}
	}
}

func TestCUDATemplatesRegistered(t *testing.T) {
	versions := map[string]bool{}
	for _, want := range []kernels.Template{CUDATemplate, BiasCUDATemplate, BiasReLUCUDATemplate} {
		got, ok := kernels.TemplateFor(want.Op.Name, kernels.CUDA)
		if !ok || got.Version != want.Version || got.CUDA == nil {
			t.Fatalf("the CUDA template of %s is not registered: %v", want.Op.Name, ok)
		}
		versions[want.Version] = true
	}
	versions[Template.Version] = true
	if len(versions) != 4 {
		t.Errorf("the CUDA templates and the CPU one share versions: %v", versions)
	}
}

// TestCUDAEstimateRanksWinners: the winners of real tunes on an H100
// (sm_90; docs/benchmarks.md), float32 2048³ after 2026-11-24's tune and
// bf16 4096³ after 85 trials on 2026-11-27, rank within the best 2% of
// the configs a search of their dtype explores, by the estimate that
// orders a tune's first batch. Both tunes ran in revision 2's space, so
// the configs compared are those of its knob values (no bk=64, tn=16,
// stages=4 or raster=8), whose times no GPU has measured yet.
func TestCUDAEstimateRanksWinners(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	for _, w := range []struct {
		shape  []int
		dt     dtype.DType
		winner string
	}{
		{[]int{2048, 2048, 2048}, dtype.F32, "bm=64,bn=128,bk=32,tm=8,tn=4,vec_a=4,vec_b=4,copy=cp_async,stages=2,raster=1"},
		{[]int{4096, 4096, 4096}, dtype.BF16, "bm=128,bn=128,bk=32,tm=8,tn=8,vec_a=4,vec_b=4,copy=cp_async,stages=2,raster=1"},
	} {
		sp := CUDATemplate.SearchSpace(w.shape, w.dt, sm90)
		winner, err := sp.Parse(w.winner)
		if err != nil || sp.Check(winner) != nil {
			t.Fatalf("%s: %v %v", w.winner, err, sp.Check(winner))
		}
		est := func(c schedule.Config) float64 { return CUDATemplate.Estimate(w.shape, sm90, c) }
		valid, better := 0, 0
		for i := range sp.Size() {
			if c := sp.At(i); sp.Valid(c) && c.Int("bk") <= 32 && c.Int("tn") <= 8 && c.Int("stages") <= 3 && c.Int("raster") == 1 {
				valid++
				if est(c) < est(winner) {
					better++
				}
			}
		}
		if better > valid/50 {
			t.Errorf("%v %s: %d of %d configs estimated faster than the winner %s, want at most 2%%", w.shape, w.dt, better, valid, w.winner)
		}
	}
}
