package softmax

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

func cudaTarget(t *testing.T, arch string) device.Target {
	t.Helper()
	target, err := device.Lookup(arch)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// TestCUDAGolden checks the generated CUDA of a warp per row holding its
// vectors in registers, a block per row re-reading a row with a tail (1023
// columns: every row but the first starts off a float4 boundary), and two
// warps per row with the row in shared memory, rows_per_block not dividing
// the rows; and in bf16, 16-byte loads of 8 elements with a tail, and in
// f16 rows shorter than a vector kept in shared memory. go test -update
// rewrites the files.
func TestCUDAGolden(t *testing.T) {
	kerneltest.CheckCUDAGolden(t, cudaTarget(t, "sm_90"), "testdata/cuda_golden.sum", "kernels/softmax/cuda.go",
		cudaRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "warp_vec4_regs", Shape: "4096x1024", Config: "tpr=32,rows_per_block=4,vec=4,keep=regs,algo=online,exp=fast"},
		kerneltest.CUDAGolden{Name: "block_threepass_tails", Shape: "33x1023", Config: "tpr=256,rows_per_block=1,vec=4,keep=global,algo=threepass,exp=precise"},
		kerneltest.CUDAGolden{Name: "warps_smem_vec2", Shape: "5x1023", Config: "tpr=64,rows_per_block=2,vec=2,keep=smem,algo=online,exp=fast"},
		kerneltest.CUDAGolden{Name: "bf16_vec8_regs_tails", Shape: "33x1023", DType: dtype.BF16, Config: "tpr=32,rows_per_block=2,vec=4,keep=regs,algo=threepass,exp=precise"},
		kerneltest.CUDAGolden{Name: "f16_short_smem", Shape: "7x3", DType: dtype.F16, Config: "tpr=32,rows_per_block=4,vec=2,keep=smem,algo=online,exp=fast"},
	)
}

// TestCUDAGoldenGeneric is TestCUDAGolden for the shape-generic CUDA: a
// warp per row with keep=regs (which the generic kernel re-reads from
// global memory), and rows in shared memory sized on the host, in f32
// and bf16.
func TestCUDAGoldenGeneric(t *testing.T) {
	kerneltest.CheckCUDAGolden(t, cudaTarget(t, "sm_90"), "testdata/cuda_generic_golden.sum", "kernels/softmax/cuda.go",
		cudaGenericRevision, CUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_warp_vec4_regs", Shape: "4096x1024", Config: "tpr=32,rows_per_block=4,vec=4,keep=regs,algo=online,exp=fast", Generic: true},
		kerneltest.CUDAGolden{Name: "generic_warps_smem_vec2", Shape: "5x1023", Config: "tpr=64,rows_per_block=2,vec=2,keep=smem,algo=online,exp=fast", Generic: true},
		kerneltest.CUDAGolden{Name: "generic_bf16_smem_vec4", Shape: "4096x1024", DType: dtype.BF16, Config: "tpr=128,rows_per_block=1,vec=4,keep=smem,algo=threepass,exp=precise", Generic: true},
	)
}

func TestCUDAConstraints(t *testing.T) {
	sm86 := cudaTarget(t, "sm_86")
	for _, tt := range []struct {
		shape, config, want string
	}{
		{"4096x1024", "tpr=32,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast", ""},
		{"4096x1024", "tpr=256,rows_per_block=8,vec=1,keep=global,algo=online,exp=fast", "threads_per_block"},
		{"4096x1024", "tpr=512,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast", "threads_at_most_vectors"},
		{"3x3", "tpr=32,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast", "vec_at_most_cols"},
		{"64x65536", "tpr=1024,rows_per_block=1,vec=4,keep=regs,algo=online,exp=fast", ""},
		{"64x100000", "tpr=1024,rows_per_block=1,vec=4,keep=regs,algo=online,exp=fast", "regs_fit"},
		// 8 rows of 2000 floats are 64 KB of shared memory, over 48 KB.
		{"64x2000", "tpr=32,rows_per_block=8,vec=4,keep=smem,algo=online,exp=fast", "shared_memory_per_block"},
		{"64x2000", "tpr=32,rows_per_block=4,vec=4,keep=smem,algo=online,exp=fast", ""},
	} {
		shape, err := Op.ParseShape(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckConstraint(t, cudaSpace(shape, sm86), tt.config, tt.want)
	}
	// On the CPU every point is invalid.
	kerneltest.CheckConstraint(t, cudaSpace([]int{8, 8}, device.Host()), "tpr=32,rows_per_block=1,vec=1,keep=global,algo=online,exp=fast", "needs_cuda_target")
}

// TestCUDAGeometry checks, for every valid config of a few odd shapes, that
// the launch covers every row exactly once with the block the kernel was
// compiled for and declares the shared memory its source uses.
func TestCUDAGeometry(t *testing.T) {
	target := cudaTarget(t, "sm_80")
	for _, shape := range [][]int{{1, 1}, {7, 13}, {33, 1023}, {4096, 1024}} {
		sp := cudaSpace(shape, target)
		n := 0
		for i := range sp.Size() {
			cfg := sp.At(i)
			if !sp.Valid(cfg) {
				continue
			}
			n++
			k := emitCUDA("k", shape, dtype.F32, cfg)
			tpr, rpb := cfg.Int("tpr"), cfg.Int("rows_per_block")
			if k.Block != [3]int{tpr * rpb, 1, 1} || k.Grid[0]*rpb < shape[0] || (k.Grid[0]-1)*rpb >= shape[0] {
				t.Fatalf("%v %s: grid %v block %v do not cover %d rows once", shape, cfg, k.Grid, k.Block, shape[0])
			}
			if !strings.Contains(k.Source, "__launch_bounds__("+itoa(tpr*rpb)+")") {
				t.Fatalf("%v %s: source not bounded to the block of %d threads", shape, cfg, tpr*rpb)
			}
			usesDyn := strings.Contains(k.Source, "extern __shared__")
			if usesDyn != (k.SharedBytes > 0) || (cfg.Str("keep") == "smem") != usesDyn {
				t.Fatalf("%v %s: dynamic shared memory %d bytes, source uses it: %v", shape, cfg, k.SharedBytes, usesDyn)
			}
			if k.Entry != "k" || !strings.Contains(k.Source, `extern "C" __global__`) || !strings.Contains(k.Source, cudaTemplateVersion) {
				t.Fatalf("%v %s: entry %q, or no extern \"C\" kernel, or no version in the header", shape, cfg, k.Entry)
			}
		}
		if n == 0 {
			t.Errorf("%v: no valid config", shape)
		}
	}
}

func itoa(n int) string { return kernels.FormatShape([]int{n}) }

func TestCUDATemplateRegistered(t *testing.T) {
	tmpl, ok := kernels.TemplateFor("softmax", kernels.CUDA)
	if !ok || tmpl.Version != CUDATemplate.Version || tmpl.CUDA == nil {
		t.Fatalf("the CUDA template of softmax is not registered: %v", ok)
	}
	if CUDATemplate.Version == Template.Version {
		t.Error("the CUDA and CPU templates share a version")
	}
}
