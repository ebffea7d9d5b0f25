package gemm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// goldens are the configs whose generated code is checked in: the fast
// AVX-512 path with packing and goroutines taking runs of rows from a
// counter (chunks=4), AVX2 with B in place and tails in every dimension,
// scalar code, the assembly micro-kernel's calls with tails and A packed,
// and goroutines splitting the columns of a single row.
var goldens = []kerneltest.Golden{
	{Name: "vec16_4x32_packed", Shape: "1024x1024x1024", Config: "vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=4,pack_a=false,convert=copy"},
	{Name: "vec8_8x8_inplace_tails", Shape: "17x20x33", Config: "vec=8,mr=8,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=4,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
	{Name: "scalar_2x2", Shape: "5x3x7", Config: "vec=1,mr=2,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
	{Name: "asm_12x32_tails", Shape: "100x70x300", Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=copy"},
	{Name: "asm_split_n", Shape: "1x100x64", Config: "vec=16,mr=4,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy"},
}

// epilogueGoldens are the golden configs of the epilogue templates, one
// each: AVX2 with B packed, two threads and tails in M, N and K, so that the
// bias is loaded whole and with LoadSlicePart, and scalar code is left to
// the grid test.
var epilogueGoldens = []kerneltest.Golden{
	{Name: "vec8_4x16_packed_tails", Shape: "17x20x70", Config: "vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
	{Name: "asm_6x16_tails", Shape: "17x20x70", Config: "vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy"},
}

// goldenSets are the templates whose code is checked in, each with the
// file recording which revision its golden files belong to, with a digest
// of them: each epilogue template has a file of its own, so that
// Template's never changes with theirs.
var goldenSets = []struct {
	sum string
	set kerneltest.GoldenSet
}{
	{"golden.sum", kerneltest.GoldenSet{Template: &Template, Revision: revision, FuncPrefix: "Gemm", Goldens: goldens}},
	{"golden_bias.sum", kerneltest.GoldenSet{Template: &BiasTemplate, Revision: biasRevision,
		FilePrefix: "bias_", FuncPrefix: "GemmBias", Goldens: epilogueGoldens}},
	{"golden_bias_relu.sum", kerneltest.GoldenSet{Template: &BiasReLUTemplate, Revision: biasReLURevision,
		FilePrefix: "bias_relu_", FuncPrefix: "GemmBiasReLU", Goldens: epilogueGoldens}},
}

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them. It also refuses golden
// files that changed while their template's revision did not (see
// kerneltest.CheckGolden).
func TestGolden(t *testing.T) {
	for _, g := range goldenSets {
		t.Run(g.set.Template.Op.Name, func(t *testing.T) {
			kerneltest.CheckGolden(t, cpu(2, avx512), filepath.Join("testdata", g.sum), "gemm.go, epilogue.go", g.set)
		})
	}
}

// avx512BF16 is the ISA of the 16-bit goldens: convert=dot needs VDPBF16PS.
var avx512BF16 = device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}

// halfGoldens are the configs whose bf16 and f16 code is checked in, with
// tails in M, N and K: the copying form (kernels/halfcopy) around AVX2
// tiles and around scalar code; the tiles converting while packing
// (convert=pack) on AVX-512 and AVX2; VDPBF16PS on bf16 pairs
// (convert=dot), a K slice of odd depth among them. halfGenericGoldens
// are the shape-generic kernel of a pack config, which copies.
// epilogueHalfGoldens are the epilogue templates': their bias decoded
// with the copying form and in both packed forms.
var (
	halfGoldens = []kerneltest.Golden{
		{Name: "copy_vec8_8x8_inplace_tails", Shape: "17x20x33", DType: dtype.BF16, Config: "vec=8,mr=8,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=4,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
		{Name: "copy_scalar_2x2", Shape: "5x3x7", DType: dtype.F16, Config: "vec=1,mr=2,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
		{Name: "pack_asm_12x32_tails", Shape: "100x70x300", DType: dtype.BF16, Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=pack"},
		{Name: "pack_asm_6x16_tails", Shape: "17x20x70", DType: dtype.F16, Config: "vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=pack"},
		{Name: "dot_asm_12x32_odd_k", Shape: "100x70x71", DType: dtype.BF16, Config: "vec=16,mr=12,nr_vecs=2,kc=64,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=dot"},
	}
	halfGenericGoldens = []kerneltest.Golden{
		{Name: "generic_pack_asm", Shape: "200x300x300", DType: dtype.F16, Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=512,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=pack"},
	}
	epilogueHalfGoldens = []kerneltest.Golden{
		{Name: "copy_vec8_4x16_packed_tails", Shape: "17x20x70", DType: dtype.F16, Config: "vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy"},
		{Name: "pack_asm_6x16_tails", Shape: "17x20x70", DType: dtype.BF16, Config: "vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=pack"},
		{Name: "dot_asm_6x32_odd_k", Shape: "17x40x71", DType: dtype.BF16, Config: "vec=16,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=dot"},
	}
)

// TestGoldenHalf is TestGolden for the 16-bit code, with a sum file of
// its own per template, testdata/golden_half*.sum: a line for the
// template's revision, and for Template's generic revision.
func TestGoldenHalf(t *testing.T) {
	target := cpu(2, avx512BF16)
	sets := []struct {
		sum  string
		sets []kerneltest.GoldenSet
	}{
		{"golden_half.sum", []kerneltest.GoldenSet{
			{Template: &Template, Revision: revision, FuncPrefix: "Gemm", Goldens: halfGoldens},
			{Template: &Template, Revision: genericRevision, FuncPrefix: "GemmGeneric", Goldens: halfGenericGoldens, Generic: true}}},
		{"golden_half_bias.sum", []kerneltest.GoldenSet{{Template: &BiasTemplate, Revision: biasRevision,
			FilePrefix: "bias_", FuncPrefix: "GemmBias", Goldens: epilogueHalfGoldens}}},
		{"golden_half_bias_relu.sum", []kerneltest.GoldenSet{{Template: &BiasReLUTemplate, Revision: biasReLURevision,
			FilePrefix: "bias_relu_", FuncPrefix: "GemmBiasReLU", Goldens: epilogueHalfGoldens}}},
	}
	for _, s := range sets {
		t.Run(s.sets[0].Template.Op.Name, func(t *testing.T) {
			kerneltest.CheckGolden(t, target, filepath.Join("testdata", s.sum), "cpu.go, epilogue.go", s.sets...)
		})
	}
}

// genericGoldens are the configs whose shape-generic code is checked in,
// one per template, under the name of the shape they are valid for: the
// assembly tile with B in place (every stride at run time) and goroutines
// taking runs of columns from a counter; for the epilogues, archsimd tiles
// with B packed, and the assembly tile with A and B packed.
var genericGoldens = []struct {
	sum    string
	tmpl   *kernels.Template
	rev    string
	prefix string
	golden kerneltest.Golden
}{
	{"golden_generic.sum", &Template, genericRevision, "", kerneltest.Golden{Name: "generic_asm_inplace", Shape: "200x300x300",
		Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=512,pack_b=false,unroll=1,threads=2,micro=asm,split=n,chunks=2,pack_a=false,convert=copy"}},
	{"golden_generic_bias.sum", &BiasTemplate, genericRevision, "bias_", kerneltest.Golden{Name: "generic_vec8_packed", Shape: "200x300x300",
		Config: "vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy"}},
	{"golden_generic_bias_relu.sum", &BiasReLUTemplate, genericRevision, "bias_relu_", kerneltest.Golden{Name: "generic_asm_6x16", Shape: "200x300x300",
		Config: "vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=3,micro=asm,split=m,chunks=1,pack_a=true,convert=copy"}},
}

// TestGoldenGeneric is TestGolden for the shape-generic kernels.
func TestGoldenGeneric(t *testing.T) {
	for _, g := range genericGoldens {
		t.Run(g.tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckGolden(t, cpu(4, avx512), filepath.Join("testdata", g.sum), "cpu.go, epilogue.go",
				kerneltest.GoldenSet{Template: g.tmpl, Revision: g.rev, FilePrefix: g.prefix, FuncPrefix: "GemmGeneric",
					Goldens: []kerneltest.Golden{g.golden}, Generic: true})
		})
	}
}

// plainGoldens are the configs whose plain form (kernels.AMD64Plain) is
// checked in, specialised with tails in M, N and K and generic, for plain
// GEMM and with ReLU's epilogue, and the f16 copying form around the
// first. Their assembly is that of the goldens above (the f16 conversions'
// those of the 16-bit goldens) and not checked in twice. The packed
// 16-bit forms have no archsimd form: their goldens above are plain.
var plainGoldens = []struct {
	tmpl    *kernels.Template
	generic bool
	golden  kerneltest.Golden
}{
	{&Template, false, kerneltest.Golden{Name: "plain_asm_12x32_tails", Shape: "100x70x300",
		Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=copy"}},
	{&Template, true, kerneltest.Golden{Name: "plain_generic_asm_inplace", Shape: "200x300x300",
		Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=512,pack_b=false,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy"}},
	{&BiasReLUTemplate, false, kerneltest.Golden{Name: "bias_relu_plain_asm_6x16_tails", Shape: "17x20x70",
		Config: "vec=8,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy"}},
	{&Template, false, kerneltest.Golden{Name: "plain_copy_asm_12x32_tails", Shape: "100x70x300", DType: dtype.F16,
		Config: "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=copy"}},
}

// TestGoldenPlain is TestGolden for the plain forms of micro=asm configs,
// under plainRevision, and checks that their Go does not import archsimd.
func TestGoldenPlain(t *testing.T) {
	var sets []kerneltest.GoldenSet
	for _, g := range plainGoldens {
		prefix := "GemmPlain"
		if g.generic {
			prefix = "GemmPlainGeneric"
		}
		sets = append(sets, kerneltest.GoldenSet{Template: g.tmpl, Revision: plainRevision, FuncPrefix: prefix,
			Goldens: []kerneltest.Golden{g.golden}, Generic: g.generic, Plain: true})
	}
	kerneltest.CheckGolden(t, cpu(4, avx512), filepath.Join("testdata", "golden_plain.sum"), "cpu.go", sets...)
	for _, g := range plainGoldens {
		src, err := os.ReadFile(g.golden.Path(""))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte(golang.ArchSIMD)) {
			t.Errorf("the plain form %s imports %s", g.golden.Name, golang.ArchSIMD)
		}
	}
}
