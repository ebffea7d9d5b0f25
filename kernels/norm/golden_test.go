package norm

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// refCPU is a fixed CPU with AVX-512 and 2 cores, so that the golden
// configs are valid whatever the host.
var refCPU = device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: 2,
	ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}}}

// The configs whose generated code is checked in: the fast path of each
// op, a partial vector, AVX2, scalar code, both LayerNorm algorithms, and
// RMSNorm's assembly, with its plain form.
var (
	rmsGoldens = []kerneltest.Golden{
		{Name: "rms_vec16", Shape: "4096x4096", Config: "vec=16,unroll=4,threads=2,rows_per_chunk=16,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "rms_vec8_tail", Shape: "3x17", Config: "vec=8,unroll=2,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "rms_scalar", Shape: "7x13", Config: "vec=1,unroll=2,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "rms_asm_stream", Shape: "4096x4096", Config: "vec=16,unroll=4,threads=2,rows_per_chunk=16,code=asm,store=stream,prefetch=true,convert=block"},
		{Name: "rms_asm8_stream", Shape: "5x100", Config: "vec=8,unroll=4,threads=1,rows_per_chunk=1,code=asm,store=stream,prefetch=true,convert=block"},
		{Name: "rms_asm_tail", Shape: "3x17", Config: "vec=16,unroll=2,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block"},
	}
	// rmsPlainGoldens are the plain forms of the assembly goldens.
	rmsPlainGoldens = []kerneltest.Golden{
		{Name: "rms_asm_stream", Shape: "4096x4096", Config: "vec=16,unroll=4,threads=2,rows_per_chunk=16,code=asm,store=stream,prefetch=true,convert=block"},
	}
	layerGoldens = []kerneltest.Golden{
		{Name: "layer_twopass_vec16", Shape: "4096x4096", Config: "vec=16,unroll=4,algo=twopass,threads=2,rows_per_chunk=16,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "layer_onepass_vec8_tail", Shape: "5x100", Config: "vec=8,unroll=4,algo=onepass,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "layer_scalar", Shape: "7x13", Config: "vec=1,unroll=1,algo=twopass,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "layer_asm_stream", Shape: "4096x4096", Config: "vec=16,unroll=4,algo=twopass,threads=2,rows_per_chunk=16,code=asm,store=stream,prefetch=true,convert=block"},
		{Name: "layer_asm8_onepass_tail", Shape: "5x100", Config: "vec=8,unroll=2,algo=onepass,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block"},
		{Name: "layer_asm_onepass_tail", Shape: "3x17", Config: "vec=16,unroll=2,algo=onepass,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block"},
	}
	// layerPlainGoldens are the plain forms of LayerNorm's assembly goldens.
	layerPlainGoldens = []kerneltest.Golden{
		{Name: "layer_asm_stream", Shape: "4096x4096", Config: "vec=16,unroll=4,algo=twopass,threads=2,rows_per_chunk=16,code=asm,store=stream,prefetch=true,convert=block"},
	}
	genericGoldens = []kerneltest.Golden{
		{Name: "generic_rms_vec16", Shape: "64x100", Config: "vec=16,unroll=2,threads=2,rows_per_chunk=4,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "generic_rms_asm_stream", Shape: "64x100", Config: "vec=16,unroll=2,threads=2,rows_per_chunk=4,code=asm,store=stream,prefetch=true,convert=block"},
	}
	genericLayerGoldens = []kerneltest.Golden{
		{Name: "generic_layer_vec8", Shape: "64x100", Config: "vec=8,unroll=2,algo=onepass,threads=2,rows_per_chunk=4,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "generic_layer_asm", Shape: "64x100", Config: "vec=16,unroll=2,algo=twopass,threads=2,rows_per_chunk=4,code=asm,store=cached,prefetch=true,convert=block"},
	}
)

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them, and refuses code that
// changed while revision did not (kerneltest.CheckGolden).
func TestGolden(t *testing.T) {
	kerneltest.CheckGolden(t, refCPU, filepath.Join("testdata", "golden.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsRevision, FuncPrefix: "RMSNorm", Goldens: rmsGoldens},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: revision, FuncPrefix: "LayerNorm", Goldens: layerGoldens},
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsRevision, FilePrefix: "plain_", FuncPrefix: "RMSNorm", Goldens: rmsPlainGoldens, Plain: true},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: revision, FilePrefix: "plain_", FuncPrefix: "LayerNorm", Goldens: layerPlainGoldens, Plain: true})
}

// The configs whose bf16 and f16 code is checked in, with tails in every
// row, for each op: blocks of rows converted around the archsimd rows
// (convert=block, code=go) and around the assembly rows, and the
// conversions in the assembly's registers (convert=reg) on AVX-512 and on
// AVX2, with both LayerNorm algorithms, and streamed on AVX-512
// (store=stream); the shape-generic form of
// convert=reg; and the plain forms (kernels.AMD64Plain) of RMSNorm's and
// LayerNorm's convert=reg on AVX-512, whose assembly is checked in with
// their archsimd forms.
var (
	rmsHalfGoldens = []kerneltest.Golden{
		{Name: "rms_block_vec16_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=2,threads=2,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "rms_block_asm8_stream", Shape: "5x100", DType: dtype.F16, Config: "vec=8,unroll=4,threads=1,rows_per_chunk=1,code=asm,store=stream,prefetch=true,convert=block"},
		{Name: "rms_reg_asm_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,threads=2,rows_per_chunk=1,code=asm,store=cached,prefetch=true,convert=reg"},
		{Name: "rms_reg_asm8_tail", Shape: "5x100", DType: dtype.F16, Config: "vec=8,unroll=2,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=reg"},
		{Name: "rms_cvtne_asm_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=2,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=cvtne"},
		{Name: "rms_cvtne_asm_stream", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,threads=1,rows_per_chunk=1,code=asm,store=stream,prefetch=true,convert=cvtne"},
	}
	layerHalfGoldens = []kerneltest.Golden{
		{Name: "layer_block_twopass_vec8_tail", Shape: "5x100", DType: dtype.BF16, Config: "vec=8,unroll=2,algo=twopass,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block"},
		{Name: "layer_block_asm_onepass_tail", Shape: "3x50", DType: dtype.F16, Config: "vec=16,unroll=2,algo=onepass,threads=2,rows_per_chunk=1,code=asm,store=stream,prefetch=false,convert=block"},
		{Name: "layer_reg_asm_twopass_tail", Shape: "3x50", DType: dtype.F16, Config: "vec=16,unroll=4,algo=twopass,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=true,convert=reg"},
		{Name: "layer_reg_asm8_onepass_tail", Shape: "5x100", DType: dtype.BF16, Config: "vec=8,unroll=2,algo=onepass,threads=2,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=reg"},
		{Name: "layer_cvtne_asm_onepass_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,algo=onepass,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=cvtne"},
		{Name: "layer_reg_asm_onepass_stream", Shape: "3x50", DType: dtype.F16, Config: "vec=16,unroll=2,algo=onepass,threads=1,rows_per_chunk=1,code=asm,store=stream,prefetch=false,convert=reg"},
	}
	halfGenericGoldens = []kerneltest.Golden{
		{Name: "generic_rms_reg_asm", Shape: "64x100", DType: dtype.F16, Config: "vec=16,unroll=2,threads=2,rows_per_chunk=4,code=asm,store=cached,prefetch=true,convert=reg"},
	}
	halfGenericLayerGoldens = []kerneltest.Golden{
		{Name: "generic_layer_reg_asm", Shape: "64x100", DType: dtype.BF16, Config: "vec=16,unroll=2,algo=twopass,threads=2,rows_per_chunk=4,code=asm,store=cached,prefetch=false,convert=reg"},
	}
	rmsHalfPlainGoldens   = []kerneltest.Golden{rmsHalfGoldens[2]}
	layerHalfPlainGoldens = []kerneltest.Golden{layerHalfGoldens[2]}
)

// TestGoldenHalf is TestGolden for the 16-bit code, specialised and
// shape-generic and plain, with testdata/golden_half.sum: lines for each
// op's revision, generic revision and revision of the plain form.
func TestGoldenHalf(t *testing.T) {
	kerneltest.CheckGolden(t, refCPU, filepath.Join("testdata", "golden_half.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsRevision, FuncPrefix: "RMSNorm", Goldens: rmsHalfGoldens},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: revision, FuncPrefix: "LayerNorm", Goldens: layerHalfGoldens},
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsGenericRevision, FuncPrefix: "RMSNormGeneric", Goldens: halfGenericGoldens, Generic: true},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: genericRevision, FuncPrefix: "LayerNormGeneric", Goldens: halfGenericLayerGoldens, Generic: true},
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsRevision, FilePrefix: "plain_", FuncPrefix: "RMSNorm", Goldens: rmsHalfPlainGoldens, Plain: true},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: revision, FilePrefix: "plain_", FuncPrefix: "LayerNorm", Goldens: layerHalfPlainGoldens, Plain: true})
}

// TestGoldenGeneric is TestGolden for the shape-generic code.
func TestGoldenGeneric(t *testing.T) {
	kerneltest.CheckGolden(t, refCPU, filepath.Join("testdata", "golden_generic.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &RMSTemplate, Revision: rmsGenericRevision, FuncPrefix: "RMSNormGeneric", Goldens: genericGoldens, Generic: true},
		kerneltest.GoldenSet{Template: &LayerTemplate, Revision: genericRevision, FuncPrefix: "LayerNormGeneric", Goldens: genericLayerGoldens, Generic: true})
}

// TestCUDAGolden checks the generated CUDA of a warp per row with float4
// loads and several rows a block, and of a block of 8 warps per row.
func TestCUDAGolden(t *testing.T) {
	sm90, err := device.Lookup("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_golden.sum"), "cuda.go", cudaRevision, RMSCUDATemplate,
		kerneltest.CUDAGolden{Name: "rms_warp_vec4", Shape: "4096x4096", Config: "tpr=32,rows_per_block=4,vec=4"})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_layer_golden.sum"), "cuda.go", cudaRevision, LayerCUDATemplate,
		kerneltest.CUDAGolden{Name: "layer_block_twopass", Shape: "4096x4096", Config: "tpr=256,rows_per_block=1,vec=4,algo=twopass"})
	// 16 bits: 8 bf16 a 16-byte load, and f16 rows of 13 an element at a time.
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_half_golden.sum"), "cuda.go", cudaRevision, RMSCUDATemplate,
		kerneltest.CUDAGolden{Name: "rms_warp_vec4_bf16", Shape: "4096x4096", Config: "tpr=32,rows_per_block=4,vec=4", DType: dtype.BF16})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_half_layer_golden.sum"), "cuda.go", cudaRevision, LayerCUDATemplate,
		kerneltest.CUDAGolden{Name: "layer_scalar_f16", Shape: "7x13", Config: "tpr=32,rows_per_block=4,vec=1,algo=onepass", DType: dtype.F16})
}

// TestCUDAGoldenGeneric is TestCUDAGolden for the shape-generic CUDA:
// rows that vec does not divide swept a float at a time.
func TestCUDAGoldenGeneric(t *testing.T) {
	sm90, err := device.Lookup("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_golden.sum"), "cuda.go", cudaGenericRevision, RMSCUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_rms_warp_vec4", Shape: "4096x4096", Config: "tpr=32,rows_per_block=4,vec=4", Generic: true})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_layer_golden.sum"), "cuda.go", cudaGenericRevision, LayerCUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_layer_block_twopass", Shape: "4096x4096", Config: "tpr=256,rows_per_block=1,vec=4,algo=twopass", Generic: true})
	kerneltest.CheckCUDAGolden(t, sm90, filepath.Join("testdata", "cuda_generic_half_layer_golden.sum"), "cuda.go", cudaGenericRevision, LayerCUDATemplate,
		kerneltest.CUDAGolden{Name: "generic_layer_warp_vec2_bf16", Shape: "4096x4096", Config: "tpr=32,rows_per_block=4,vec=2,algo=twopass", DType: dtype.BF16, Generic: true})
}

// TestPlainForm checks that the plain forms of the code=asm configs
// (kernels.AMD64Plain) of both ops, specialised and generic, of 8 and 16
// lanes, with and without goroutines, in float32 and 16 bits, do not
// import archsimd, so that
// they build without GOEXPERIMENT=simd; TestKernels and
// TestGenericKernels check what they compute.
func TestPlainForm(t *testing.T) {
	sets := []struct {
		tmpl    *kernels.Template
		goldens []kerneltest.Golden
	}{
		{&RMSTemplate, slices.Concat(rmsGoldens, genericGoldens, rmsHalfGoldens, halfGenericGoldens)},
		{&LayerTemplate, slices.Concat(layerGoldens, genericLayerGoldens, layerHalfGoldens, halfGenericLayerGoldens)},
	}
	for _, set := range sets {
		for _, g := range set.goldens {
			shape, err := set.tmpl.Op.ParseShape(g.Shape)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := set.tmpl.Space(shape, refCPU).Parse(g.Config)
			if err != nil {
				t.Fatal(err)
			}
			if !set.tmpl.Go.Asm(cfg) {
				continue
			}
			if strings.HasPrefix(g.Name, "generic") {
				shape = nil
			}
			f := jen.NewFile("k")
			set.tmpl.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, DType: g.DType, Config: cfg, Arch: kernels.AMD64Plain})
			src := f.GoString()
			if strings.Contains(src, golang.ArchSIMD) {
				t.Errorf("the plain form of %s %s %s imports %s", g.Shape, g.DType, g.Config, golang.ArchSIMD)
			}
			if !strings.Contains(src, "func KAsm(") {
				t.Errorf("the plain form of %s %s %s does not declare its assembly:\n%s", g.Shape, g.DType, g.Config, src)
			}
		}
	}
}
