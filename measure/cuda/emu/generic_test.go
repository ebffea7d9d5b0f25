package emu

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/norm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// genericCase is a CUDA template whose shape-generic kernels, of configs
// valid at tuned, run at shapes.
type genericCase struct {
	tmpl    kernels.Template
	dt      dtype.DType
	tuned   []int
	configs []string // besides the default and sampled ones; invalid ones are left out
	shapes  [][]int
}

var (
	softmaxGeneric = []string{
		"tpr=64,rows_per_block=2,vec=2,keep=smem,algo=online,exp=fast",
		"tpr=32,rows_per_block=4,vec=4,keep=regs,algo=online,exp=fast",
		"tpr=256,rows_per_block=1,vec=4,keep=smem,algo=threepass,exp=precise",
	}
	normGeneric = []string{
		"tpr=32,rows_per_block=4,vec=4", "tpr=256,rows_per_block=1,vec=4",
		"tpr=32,rows_per_block=4,vec=4,algo=onepass", "tpr=256,rows_per_block=1,vec=4,algo=twopass",
	}
	gemmGeneric = []string{
		"bm=64,bn=64,bk=16,tm=4,tn=4,vec_a=4,vec_b=4,copy=cp_async,stages=3,raster=1",
		"bm=64,bn=64,bk=8,tm=4,tn=4,vec_a=4,vec_b=1,copy=regs,stages=2,raster=1",
		"bm=32,bn=64,bk=8,tm=2,tn=4,vec_a=1,vec_b=4,copy=regs,stages=1,raster=1",
	}
	attentionGeneric = []string{
		"br=64,bc=32,warps=4,tn=4,kv_copy=cp_async",
		"br=16,bc=64,warps=2,tn=2,kv_copy=cp_async",
	}
	gemmShapes      = [][]int{{1, 1, 1}, {7, 13, 5}, {33, 65, 31}, {64, 36, 20}}
	gemm16Shapes    = [][]int{{1, 1, 1}, {7, 13, 5}, {33, 65, 31}, {64, 40, 24}}
	attentionShapes = [][]int{{1, 1, 1, 1}, {1, 2, 13, 7}, {2, 1, 37, 64}, {1, 1, 70, 12}, {1, 1, 5, 128}, {1, 1, 3, 129}}
)

var genericCases = []genericCase{
	{softmax.CUDATemplate, dtype.F32, []int{4096, 1024}, softmaxGeneric, [][]int{{1, 1}, {3, 7}, {13, 97}, {5, 1023}, {2, 4099}}},
	{softmax.CUDATemplate, dtype.BF16, []int{4096, 1024}, softmaxGeneric, [][]int{{1, 1}, {3, 7}, {5, 1023}}},
	{softmax.CUDATemplate, dtype.F16, []int{4096, 1024}, softmaxGeneric, [][]int{{1, 3}, {13, 97}, {2, 4099}}},
	{norm.RMSCUDATemplate, dtype.F32, []int{4096, 4096}, normGeneric, [][]int{{1, 1}, {7, 13}, {5, 48}, {3, 4099}, {9, 1024}}},
	{norm.LayerCUDATemplate, dtype.F32, []int{4096, 4096}, normGeneric, [][]int{{1, 1}, {7, 13}, {5, 48}, {3, 4099}, {9, 1024}}},
	{norm.RMSCUDATemplate, dtype.BF16, []int{4096, 4096}, normGeneric, [][]int{{1, 1}, {7, 13}, {5, 48}, {3, 1030}}},
	{norm.LayerCUDATemplate, dtype.F16, []int{4096, 4096}, normGeneric, [][]int{{1, 2}, {7, 13}, {5, 48}, {3, 1030}}},
	{gemm.CUDATemplate, dtype.F32, []int{2048, 2048, 2048}, gemmGeneric, gemmShapes},
	{gemm.BiasCUDATemplate, dtype.F32, []int{2048, 2048, 2048}, gemmGeneric[:2], gemmShapes},
	{gemm.BiasReLUCUDATemplate, dtype.F32, []int{2048, 2048, 2048}, gemmGeneric[:1], gemmShapes},
	{gemm.CUDATemplate, dtype.BF16, []int{4096, 4096, 4096}, gemm16Configs[:3], gemm16Shapes},
	{gemm.BiasReLUCUDATemplate, dtype.F16, []int{4096, 4096, 4096}, gemm16Configs[1:2], gemm16Shapes},
	{attention.CUDATemplate, dtype.F32, []int{1, 8, 1024, 64}, attentionGeneric, attentionShapes},
	{attention.CUDATemplateCausal, dtype.F32, []int{1, 8, 1024, 64}, attentionGeneric, attentionShapes},
	{attention.CUDATemplate, dtype.BF16, []int{1, 8, 1024, 64}, attentionGeneric, attentionShapes[:3]},
	{attention.CUDATemplateCausal, dtype.F16, []int{1, 8, 1024, 64}, attentionGeneric, attentionShapes[1:4]},
}

// TestGeneric runs the shape-generic kernels of every CUDA template under
// emulation: the default config at the tuned shape, the case's configs
// and two sampled ones,
// each built once and run at odd shapes (one element, primes, tails past
// every tile) on every input set of the op, against the float64
// reference. A shape a kernel does not serve (CUDALaunch.Serves) must say
// why and is left out; every kernel must serve some shapes. The first
// config of each case is also compiled to PTX.
func TestGeneric(t *testing.T) {
	tg := target(t, "sm_80")
	r := rand.New(rand.NewPCG(11, 12))
	for _, gc := range genericCases {
		name := gc.tmpl.Op.Name + "/" + string(gc.dt)
		t.Run(name, func(t *testing.T) {
			c := checker(t, true)
			c.DType, c.Orders = gc.dt, Orders[:2]
			def, err := gc.tmpl.DefaultConfig(gc.tuned, tg)
			if err != nil {
				t.Fatal(err)
			}
			sp := gc.tmpl.Space(gc.tuned, tg)
			cfgs := append([]schedule.Config{def}, parseValid(sp, gc.configs)...)
			cfgs = append(cfgs, sample(t, sp, r, 2)[1:]...)
			t.Logf("%d configs", len(cfgs))
			for i, cfg := range cfgs {
				k := gc.tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", DType: gc.dt, Config: cfg})
				if k.Generic == nil {
					t.Fatalf("%s: no launch description", cfg)
				}
				// At the tuned shape the generic kernel launches as the
				// specialised one does, with at least its shared memory.
				spec := gc.tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: gc.tuned, DType: gc.dt, Config: cfg})
				if grid, shared, err := k.Generic.At(gc.tuned); err != nil || grid != spec.Grid || k.Generic.Block != spec.Block || shared < spec.SharedBytes {
					t.Errorf("%s at %v: generic launch %v %v %d (%v), specialised %v %v %d",
						cfg, gc.tuned, grid, k.Generic.Block, shared, err, spec.Grid, spec.Block, spec.SharedBytes)
				}
				if i == 0 {
					if o, err := c.PTX(context.Background(), k, "sm_80"); err != nil || !o.OK {
						t.Fatalf("%s: PTX: %v %s", cfg, err, o)
					}
				}
				served := 0
				runGeneric(t, c, k, gc, func(shape []int, o Outcome) {
					served++
					if !o.OK {
						t.Errorf("%s at %v: %s", cfg, shape, o)
					}
				})
				if served == 0 {
					t.Errorf("%s serves none of %v", cfg, gc.shapes)
				}
			}
		})
	}
}

// runGeneric builds k once and runs it at each shape of gc it serves, on
// every input set, calling report with the first failing outcome or OK.
func runGeneric(t *testing.T, c *Checker, k kernels.CUDAKernel, gc genericCase, report func([]int, Outcome)) {
	t.Helper()
	dir := t.TempDir()
	lib, err := Build(context.Background(), c.CXX, k, "sm_80", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, shape := range gc.shapes {
		if why := k.Generic.Serves(shape); why != "" {
			if _, _, err := k.Generic.At(shape); err == nil || !strings.Contains(err.Error(), why) {
				t.Errorf("At(%v) = %v, want the error %q", shape, err, why)
			}
			continue
		}
		l, err := launchAt(k, shape)
		if err != nil {
			t.Fatal(err)
		}
		o := Outcome{OK: true}
		for _, set := range measure.Inputs(gc.tmpl.Op, shape, gc.dt, 7) {
			if o, err = c.emulateSet(context.Background(), l, lib, dir, set); err != nil {
				t.Fatal(err)
			}
			if !o.OK {
				o.Error = "input set " + set.Name + ": " + o.Error
				break
			}
		}
		for i := range c.Orders {
			os.Remove(filepath.Join(dir, outputFile(i)))
		}
		report(shape, o)
	}
}
