package softmax

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// goldens are the configs whose generated code is checked in: the fast path
// and one of each kind of code the emitter writes (tails, online, AVX2,
// exp in float64, scalar, the assembly with and without a partial vector,
// on AVX-512 and on AVX2).
var goldens = []kerneltest.Golden{
	{Name: "threepass_vec16", Shape: "4096x1024", Config: "vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "online_vec16_tail", Shape: "3x17", Config: "vec=16,unroll=2,algo=online,exp=poly4,threads=2,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "online_vec8_f64", Shape: "5x100", Config: "vec=8,unroll=4,algo=online,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "threepass_scalar", Shape: "3x17", Config: "vec=1,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "online_scalar_f64", Shape: "7x9", Config: "vec=1,unroll=1,algo=online,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "asm_vec16", Shape: "4096x1024", Config: "vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=asm,prefetch=true,convert=block,store=cached"},
	{Name: "asm_tail", Shape: "3x50", Config: "vec=16,unroll=4,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached"},
	{Name: "asm_vec8_tail", Shape: "5x100", Config: "vec=8,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=1,code=asm,prefetch=true,convert=block,store=cached"},
}

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them. It also refuses golden
// files that changed while revision did not (see kerneltest.CheckGolden);
// testdata/golden.sum records the revision.
func TestGolden(t *testing.T) {
	kerneltest.CheckGolden(t, cpu(2, avx512), filepath.Join("testdata", "golden.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &Template, Revision: revision, FuncPrefix: "Softmax", Goldens: goldens})
}

// halfGoldens are the configs whose bf16 and f16 code is checked in, with
// tails in every row: blocks of rows converted around the archsimd rows
// (convert=block, code=go) and around the assembly rows, the conversions
// in the assembly's registers (convert=reg) on AVX-512 and on AVX2, with
// VCVTNEPS2BF16 (convert=cvtne), streamed (store=stream) with the
// degree-3 exp (poly3), and scalar rows with Go's conversions. halfGenericGoldens are the
// shape-generic forms of the conversions in registers and of the archsimd
// rows, halfPlainGoldens the plain form (kernels.AMD64Plain) of the
// former, whose assembly is reg_asm_tail's.
var (
	halfGoldens = []kerneltest.Golden{
		{Name: "block_online_vec16_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=2,algo=online,exp=poly4,threads=2,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
		{Name: "block_asm_vec8_tail", Shape: "5x100", DType: dtype.F16, Config: "vec=8,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=1,code=asm,prefetch=true,convert=block,store=cached"},
		{Name: "reg_asm_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=reg,store=cached"},
		{Name: "cvtne_asm_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=cvtne,store=cached"},
		{Name: "reg_asm_vec8_tail", Shape: "5x100", DType: dtype.F16, Config: "vec=8,unroll=2,algo=threepass,exp=poly4,threads=2,rows_per_chunk=1,code=asm,prefetch=true,convert=reg,store=cached"},
		{Name: "block_scalar", Shape: "3x17", DType: dtype.F16, Config: "vec=1,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"},
		{Name: "cvtne_stream_poly3_tail", Shape: "3x50", DType: dtype.BF16, Config: "vec=16,unroll=4,algo=threepass,exp=poly3,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=cvtne,store=stream"},
		{Name: "reg_stream_vec8_tail", Shape: "5x100", DType: dtype.F16, Config: "vec=8,unroll=2,algo=threepass,exp=poly3,threads=2,rows_per_chunk=1,code=asm,prefetch=true,convert=reg,store=stream"},
	}
	halfGenericGoldens = []kerneltest.Golden{
		{Name: "generic_reg_asm", Shape: "64x100", DType: dtype.BF16, Config: "vec=16,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=reg,store=cached"},
		{Name: "generic_reg_stream_poly3", Shape: "64x100", DType: dtype.F16, Config: "vec=16,unroll=2,algo=threepass,exp=poly3,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=reg,store=stream"},
		{Name: "generic_block_online_vec16", Shape: "64x100", DType: dtype.F16, Config: "vec=16,unroll=2,algo=online,exp=poly4,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached"},
	}
	halfPlainGoldens = []kerneltest.Golden{halfGoldens[2]}
)

// TestGoldenHalf is TestGolden for the 16-bit code, specialised and
// shape-generic and plain, with testdata/golden_half.sum: a line for
// revision, one for genericRevision and one for revision's plain form.
func TestGoldenHalf(t *testing.T) {
	bf16 := avx512
	bf16.AVX512BF16 = true // for convert=cvtne
	kerneltest.CheckGolden(t, cpu(2, bf16), filepath.Join("testdata", "golden_half.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &Template, Revision: revision, FuncPrefix: "Softmax", Goldens: halfGoldens},
		kerneltest.GoldenSet{Template: &Template, Revision: genericRevision, FuncPrefix: "SoftmaxGeneric", Goldens: halfGenericGoldens, Generic: true},
		kerneltest.GoldenSet{Template: &Template, Revision: revision, FilePrefix: "plain_", FuncPrefix: "Softmax", Goldens: halfPlainGoldens, Plain: true})
}

// genericGoldens are the configs whose shape-generic code is checked in,
// under the name of the shape they are valid for.
var genericGoldens = []kerneltest.Golden{
	{Name: "generic_online_vec16", Shape: "64x100", Config: "vec=16,unroll=2,algo=online,exp=poly4,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached"},
	{Name: "generic_asm", Shape: "64x100", Config: "vec=16,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=block,store=cached"},
	{Name: "generic_asm_vec8", Shape: "64x100", Config: "vec=8,unroll=2,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached"},
}

// TestGoldenGeneric is TestGolden for the shape-generic emitter, with
// testdata/golden_generic.sum.
func TestGoldenGeneric(t *testing.T) {
	kerneltest.CheckGolden(t, cpu(2, avx512), filepath.Join("testdata", "golden_generic.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &Template, Revision: genericRevision, FuncPrefix: "SoftmaxGeneric", Goldens: genericGoldens, Generic: true})
}

// TestPlainForm checks that the plain forms of code=asm configs
// (kernels.AMD64Plain), specialised and generic, with and without
// goroutines, in float32 and 16 bits, do not import archsimd, so that
// they build without GOEXPERIMENT=simd; TestKernels, TestGenericKernels
// and TestHalfKernels check what they compute.
func TestPlainForm(t *testing.T) {
	for _, g := range []kerneltest.Golden{goldens[5], goldens[6], goldens[7], genericGoldens[1], genericGoldens[2],
		halfGoldens[1], halfGoldens[2], halfGoldens[3], halfGenericGoldens[0]} {
		shape, err := Op.ParseShape(g.Shape)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Template.Space(shape, cpu(2, avx512)).Parse(g.Config)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(g.Name, "generic") {
			shape = nil
		}
		f := jen.NewFile("k")
		Template.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, DType: g.DType, Config: cfg, Arch: kernels.AMD64Plain})
		src := f.GoString()
		if strings.Contains(src, golang.ArchSIMD) {
			t.Errorf("the plain form of %s %s %s imports %s", g.Shape, g.DType, g.Config, golang.ArchSIMD)
		}
		if !strings.Contains(src, "func KAsm(") {
			t.Errorf("the plain form of %s %s %s does not declare its assembly:\n%s", g.Shape, g.DType, g.Config, src)
		}
	}
}
