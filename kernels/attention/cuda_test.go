package attention

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

// TestCUDAGolden checks the generated CUDA of 1x8x1024x64 with K and V
// double-buffered by cp.async, a tail of rows and keys with D = 5 (scalar
// loads, padded columns), and the causal kernel of the large shape
// (skipped tiles, the diagonal's mask). go test -update rewrites the files.
func TestCUDAGolden(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_golden.sum"), "kernels/attention/cuda.go", cudaRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "64x64_4warps_cp_async", Shape: "1x8x1024x64", Config: "br=64,bc=64,warps=4,tn=4,kv_copy=cp_async"},
		kerneltest.CUDAGolden{Name: "16x16_tails_d5", Shape: "1x2x37x5", Config: "br=16,bc=16,warps=1,tn=4,kv_copy=sync"},
	)
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_golden_causal.sum"), "kernels/attention/cuda.go", cudaCausalRevision, CUDATemplateCausal,
		kerneltest.CUDAGolden{Name: "causal_32x64_2warps", Shape: "1x8x1024x64", Config: "br=32,bc=64,warps=2,tn=4,kv_copy=sync"},
	)
	// 16 bits: 16-byte loads of bf16 (cp_async made the sync copy), and
	// f16 with D = 5, an element at a time.
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_half_golden.sum"), "kernels/attention/cuda.go", cudaRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "64x64_4warps_cp_async_bf16", Shape: "1x8x1024x64", Config: "br=64,bc=64,warps=4,tn=4,kv_copy=cp_async", DType: dtype.BF16},
		kerneltest.CUDAGolden{Name: "16x16_tails_d5_f16", Shape: "1x2x37x5", Config: "br=16,bc=16,warps=1,tn=4,kv_copy=sync", DType: dtype.F16},
	)
	// Tensor cores: bf16 of the large shape, two m16 tiles a warp at D =
	// 128, and f16 causal with tails of
	// rows and keys at D = 128.
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_mma_golden.sum"), "kernels/attention/cudamma.go", cudaMMARevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "mma_64x64_4warps_bf16", Shape: "1x8x1024x64", Config: "br=64,bc=64,warps=4,tn=4,kv_copy=mma", DType: dtype.BF16},
		kerneltest.CUDAGolden{Name: "mma_128x32_4warps_2tiles_bf16", Shape: "1x16x4096x128", Config: "br=128,bc=32,warps=4,tn=4,kv_copy=mma", DType: dtype.BF16},
	)
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_mma_golden_causal.sum"), "kernels/attention/cudamma.go", cudaMMARevision, CUDATemplateCausal,
		kerneltest.CUDAGolden{Name: "mma_causal_32x32_2warps_f16", Shape: "1x2x37x128", Config: "br=32,bc=32,warps=2,tn=2,kv_copy=mma", DType: dtype.F16},
	)
}

// TestCUDAGoldenGeneric is TestCUDAGolden for the shape-generic CUDA of
// both templates.
func TestCUDAGoldenGeneric(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_golden.sum"), "kernels/attention/cuda.go", cudaGenericRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_64x64_4warps_cp_async", Shape: "1x8x1024x64", Config: "br=64,bc=64,warps=4,tn=4,kv_copy=cp_async", Generic: true})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_golden_causal.sum"), "kernels/attention/cuda.go", cudaGenericRevision, CUDATemplateCausal,
		kerneltest.CUDAGolden{Name: "generic_causal_32x64_2warps", Shape: "1x8x1024x64", Config: "br=32,bc=64,warps=2,tn=4,kv_copy=sync", Generic: true})
}

func TestCUDAConstraints(t *testing.T) {
	sm90, sm75 := cudaTarget(t, "sm_90"), cudaTarget(t, "sm_75")
	for _, tt := range []struct {
		target     device.Target
		shape, cfg string
		want       string
	}{
		{sm90, "1x8x1024x64", "br=64,bc=64,warps=4,tn=4,kv_copy=cp_async", ""},
		// 128 keys over 2 per thread is 64 threads a row: not one warp.
		{sm90, "1x8x1024x64", "br=64,bc=128,warps=4,tn=2,kv_copy=sync", "row_in_warp"},
		// 8 warps of 8 threads a row are 32 row groups, for 16 rows.
		{sm90, "1x8x1024x64", "br=16,bc=16,warps=8,tn=2,kv_copy=sync", "rows_per_thread"},
		// 4 row groups of 1 warp, 128 rows: 32 rows a thread, over 8.
		{sm90, "1x8x1024x64", "br=128,bc=32,warps=1,tn=4,kv_copy=sync", "rows_per_thread"},
		{sm90, "1x1x5x64", "br=32,bc=16,warps=1,tn=4,kv_copy=sync", "tile_within_shape"},
		{sm75, "1x8x1024x64", "br=64,bc=64,warps=4,tn=4,kv_copy=cp_async", "cp_async_needs_sm80"},
		// D = 512: Q, K, V and the weights are 4·(64·516 + 128·1032 + 64·132) bytes, 690 KB.
		{sm90, "1x8x1024x512", "br=64,bc=128,warps=8,tn=4,kv_copy=sync", "shared_memory_per_block"},
		// At D = 256, 8 rows of 256/16 outputs are 128 accumulators: with
		// the scores and fragments, 272 registers.
		{sm90, "1x8x1024x256", "br=64,bc=64,warps=4,tn=4,kv_copy=sync", "registers_per_thread"},
		{sm90, "70000x1x64x64", "br=64,bc=64,warps=4,tn=4,kv_copy=sync", "grid_fits"},
	} {
		shape, err := Op.ParseShape(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckConstraint(t, cudaSpace(shape, tt.target), tt.cfg, tt.want)
	}
	kerneltest.CheckConstraint(t, cudaSpace([]int{1, 1, 64, 64}, device.Host()), "br=16,bc=16,warps=1,tn=4,kv_copy=sync", "needs_cuda_target")
}

// TestCUDAGeometry checks, for every valid config of a few odd shapes, that
// the grid covers every query row of every head once with the block the
// kernel was compiled for, that the shared memory holds the tiles the
// source uses, and that the causal kernels bound their key tiles and mask
// only where needed.
func TestCUDAGeometry(t *testing.T) {
	target := cudaTarget(t, "sm_80")
	for _, shape := range [][]int{{1, 1, 1, 1}, {1, 2, 37, 5}, {2, 3, 64, 64}, {1, 8, 1024, 64}} {
		sp := cudaSpace(shape, target)
		n := 0
		for i := range sp.Size() {
			cfg := sp.At(i)
			if !sp.Valid(cfg) {
				continue
			}
			n++
			for _, tmpl := range []kernels.Template{CUDATemplate, CUDATemplateCausal} {
				k := tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, Config: cfg})
				br, threads, s := cfg.Int("br"), 32*cfg.Int("warps"), shape[2]
				if k.Grid[0]*br < s || (k.Grid[0]-1)*br >= s || k.Grid[1] != shape[0]*shape[1] || k.Grid[2] != 1 {
					t.Fatalf("%v %s: grid %v does not cover every row of every head once", shape, cfg, k.Grid)
				}
				if k.Block != [3]int{threads, 1, 1} || !strings.Contains(k.Source, fmt.Sprintf("__launch_bounds__(%d)", threads)) {
					t.Fatalf("%v %s: block %v, want %d threads, and the bound in the source", shape, cfg, k.Block, threads)
				}
				g := newCUDAGeometry(shape, cfg)
				if g.tx*g.ty != threads || g.tm*g.ty != br || g.dn*g.tx < shape[3] || g.dl < shape[3] || g.dl%4 != 0 {
					t.Fatalf("%v %s: geometry %+v does not tile the block", shape, cfg, g)
				}
				if k.SharedBytes != g.smem {
					t.Fatalf("%v %s: %d bytes of shared memory, want %d", shape, cfg, k.SharedBytes, g.smem)
				}
				causal := tmpl.Op.Name == CausalOp.Name
				if strings.Contains(k.Source, "key > q0") != causal || strings.Contains(k.Source, "const int kts = min(") != causal {
					t.Fatalf("%v %s: causal %v, but the source's mask and tile bound disagree", shape, cfg, causal)
				}
				if strings.Contains(k.Source, "key >= S") != (s%cfg.Int("bc") != 0) {
					t.Fatalf("%v %s: the mask of keys past S is there where S %% bc = %d", shape, cfg, s%cfg.Int("bc"))
				}
			}
		}
		if n == 0 {
			t.Errorf("%v: no valid config", shape)
		}
	}
}

func TestCUDATemplatesRegistered(t *testing.T) {
	versions := map[string]bool{Template.Version: true, TemplateCausal.Version: true}
	for _, want := range []kernels.Template{CUDATemplate, CUDATemplateCausal} {
		got, ok := kernels.TemplateFor(want.Op.Name, kernels.CUDA)
		if !ok || got.Version != want.Version || got.CUDA == nil {
			t.Fatalf("the CUDA template of %s is not registered: %v", want.Op.Name, ok)
		}
		versions[want.Version] = true
	}
	if len(versions) != 4 {
		t.Errorf("templates share versions: %v", versions)
	}
}

// TestCUDASearchSpaceAndEstimate: a float32 search leaves out kv_copy=mma
// (its float32 kernel is the cp_async one, under another name), a bf16
// search keeps it, and the estimate ranks every tensor-core config of a
// bf16 search before every CUDA-core one, two m16 tiles a warp first
// where they fit (D = 64), so that a tune's first batch tries them.
func TestCUDASearchSpaceAndEstimate(t *testing.T) {
	sm90 := cudaTarget(t, "sm_90")
	shape := []int{1, 32, 4096, 64}
	valid := func(dt dtype.DType) (mma, other []schedule.Config) {
		sp := CUDATemplate.SearchSpace(shape, dt, sm90)
		for i := range sp.Size() {
			if c := sp.At(i); sp.Valid(c) {
				if c.Str("kv_copy") == "mma" {
					mma = append(mma, c)
				} else {
					other = append(other, c)
				}
			}
		}
		return mma, other
	}
	if mma, other := valid(dtype.F32); len(mma) != 0 || len(other) == 0 {
		t.Errorf("float32 search: %d mma configs, %d others; want none and some", len(mma), len(other))
	}
	mma, other := valid(dtype.BF16)
	if len(mma) == 0 || len(other) == 0 {
		t.Fatalf("bf16 search: %d mma configs, %d others; want some of each", len(mma), len(other))
	}
	est := func(c schedule.Config) float64 { return CUDATemplate.Estimate(shape, sm90, c) }
	worstMMA, bestOther, best := 0.0, math.Inf(1), mma[0]
	for _, c := range mma {
		worstMMA = max(worstMMA, est(c))
		if est(c) < est(best) {
			best = c
		}
	}
	for _, c := range other {
		bestOther = min(bestOther, est(c))
	}
	if worstMMA >= bestOther {
		t.Errorf("the estimate ranks a CUDA-core config (%g) before a tensor-core one (%g)", bestOther, worstMMA)
	}
	if mmaTiles(best) != 2 {
		t.Errorf("the estimate's best, %s, gives a warp %d m16 tiles, want 2", best, mmaTiles(best))
	}
}
