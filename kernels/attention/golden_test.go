package attention

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// goldens are the configs of Template whose generated code is checked in.
// The rows layout: the fast path with threads; 8 lanes with partial vectors
// in D and in blocks of keys (tail masks) and a partial block of queries;
// scalar code with exp in float64. The lanes layout: the fast path; its
// assembly tiles' declarations and calls, with partial blocks of queries
// and keys and a D that the tile does not divide; scalar code likewise.
var goldens = []kerneltest.Golden{
	{Name: "vec16_64x64", Shape: "1x8x1024x64", Config: "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
	{Name: "vec8_tails", Shape: "1x3x7x5", Config: "vec=8,br=4,bc=4,exp=poly4,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
	{Name: "scalar_f64", Shape: "1x1x9x3", Config: "vec=1,br=4,bc=8,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
	{Name: "lanes_vec16", Shape: "1x8x1024x64", Config: "vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=4,nv=2,micro=go,convert=copy"},
	{Name: "lanes_asm", Shape: "1x2x100x20", Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy"},
	{Name: "lanes_scalar", Shape: "1x1x9x3", Config: "vec=1,br=4,bc=8,exp=f64,threads=1,layout=lanes,mr=2,nv=2,micro=go,convert=copy"},
}

// causalGoldens are TemplateCausal's: key blocks below, across and beyond
// the diagonal, a partial last block, tail masks and the snake-wise
// dealing of units to threads, in both layouts.
var causalGoldens = []kerneltest.Golden{
	{Name: "causal_vec8", Shape: "1x2x10x5", Config: "vec=8,br=4,bc=4,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
	{Name: "causal_lanes_vec8", Shape: "1x2x20x5", Config: "vec=8,br=8,bc=4,exp=poly4,threads=2,layout=lanes,mr=2,nv=1,micro=go,convert=copy"},
}

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them. It also refuses golden
// files that changed while their revision did not (see
// kerneltest.CheckGolden); testdata/golden.sum has a line for each
// template, Template's first.
func TestGolden(t *testing.T) {
	kerneltest.CheckGolden(t, cpu(2, avx512), filepath.Join("testdata", "golden.sum"), "attention.go",
		kerneltest.GoldenSet{Template: &Template, Revision: revision, FuncPrefix: "Attention", Goldens: goldens},
		kerneltest.GoldenSet{Template: &TemplateCausal, Revision: causalRevision, FuncPrefix: "AttentionCausal", Goldens: causalGoldens})
}

// The configs whose bf16 and f16 code is checked in, for each template:
// the copying form (kernels/halfcopy) around the rows layout's 8 lanes,
// around the lanes layout's assembly tiles (Template) or its archsimd
// tiles (TemplateCausal), and around scalar code (Template); VDPBF16PS on
// pairs of an odd D (convert=dot), with partial blocks of queries and
// keys. halfGenericGoldens is the shape-generic kernel of a dot config,
// which copies.
var (
	halfGoldens = []kerneltest.Golden{
		{Name: "copy_vec8_tails", Shape: "1x3x7x5", DType: dtype.BF16, Config: "vec=8,br=4,bc=4,exp=poly4,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
		{Name: "copy_lanes_asm", Shape: "1x2x100x20", DType: dtype.F16, Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy"},
		{Name: "copy_scalar_f64", Shape: "1x1x9x3", DType: dtype.F16, Config: "vec=1,br=4,bc=8,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
		{Name: "dot_lanes_asm_odd_d", Shape: "1x2x100x21", DType: dtype.BF16, Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=dot"},
	}
	causalHalfGoldens = []kerneltest.Golden{
		{Name: "causal_copy_vec8", Shape: "1x2x10x5", DType: dtype.BF16, Config: "vec=8,br=4,bc=4,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
		{Name: "causal_copy_lanes_vec8", Shape: "1x2x20x5", DType: dtype.F16, Config: "vec=8,br=8,bc=4,exp=poly4,threads=2,layout=lanes,mr=2,nv=1,micro=go,convert=copy"},
		{Name: "causal_dot_lanes_asm_odd_d", Shape: "1x2x50x21", DType: dtype.BF16, Config: "vec=16,br=16,bc=16,exp=poly5,threads=2,layout=lanes,mr=4,nv=1,micro=asm,convert=dot"},
	}
	halfGenericGoldens = []kerneltest.Golden{
		{Name: "generic_dot_lanes_asm", Shape: "1x2x64x64", DType: dtype.BF16, Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=dot"},
	}
)

// avx512BF16 is the ISA of the 16-bit goldens: convert=dot needs VDPBF16PS.
var avx512BF16 = device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}

// TestGoldenHalf is TestGolden for the 16-bit code, on a CPU with
// AVX512-BF16, with testdata/golden_half.sum: a line for each template's
// revision, and for Template's generic revision.
func TestGoldenHalf(t *testing.T) {
	kerneltest.CheckGolden(t, cpu(2, avx512BF16), filepath.Join("testdata", "golden_half.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &Template, Revision: revision, FuncPrefix: "Attention", Goldens: halfGoldens},
		kerneltest.GoldenSet{Template: &TemplateCausal, Revision: causalRevision, FuncPrefix: "AttentionCausal", Goldens: causalHalfGoldens},
		kerneltest.GoldenSet{Template: &Template, Revision: genericRevision, FuncPrefix: "AttentionGeneric", Goldens: halfGenericGoldens, Generic: true})
}

// genericGoldens are the configs whose shape-generic code is checked in,
// one per template, under the name of the shape they are valid for: the
// lanes layout with assembly tiles (D at run time in the tiles), and the
// causal rows layout with 8 lanes (run-time tails in D and in key blocks).
var genericGoldens = []kerneltest.Golden{
	{Name: "generic_lanes_asm", Shape: "1x2x64x64", Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy"},
	{Name: "generic_causal_vec8", Shape: "1x2x64x64", Config: "vec=8,br=8,bc=16,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy"},
}

// TestGoldenGeneric is TestGolden for the shape-generic kernels, with
// testdata/golden_generic.sum.
func TestGoldenGeneric(t *testing.T) {
	kerneltest.CheckGolden(t, cpu(2, avx512), filepath.Join("testdata", "golden_generic.sum"), "cpu.go",
		kerneltest.GoldenSet{Template: &Template, Revision: genericRevision, FuncPrefix: "AttentionGeneric", Goldens: genericGoldens[:1], Generic: true},
		kerneltest.GoldenSet{Template: &TemplateCausal, Revision: causalGenericRevision, FuncPrefix: "AttentionCausalGeneric", Goldens: genericGoldens[1:], Generic: true})
}

// plainGoldens are the configs whose plain form (kernels.AMD64Plain) is
// checked in: the lanes layout's specialised assembly golden above, a
// shape-generic causal one at 8 lanes, and the bf16 dot form of
// dot_lanes_asm_odd_d. Their assembly is that of the archsimd forms and
// not checked in twice.
var plainGoldens = []struct {
	causal, generic bool
	golden          kerneltest.Golden
}{
	{false, false, kerneltest.Golden{Name: "plain_lanes_asm", Shape: "1x2x100x20",
		Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy"}},
	{true, true, kerneltest.Golden{Name: "plain_generic_causal_asm_vec8", Shape: "1x2x64x64",
		Config: "vec=8,br=16,bc=16,exp=poly4,threads=2,layout=lanes,mr=4,nv=2,micro=asm,convert=copy"}},
	{false, false, kerneltest.Golden{Name: "plain_dot_lanes_asm_odd_d", Shape: "1x2x100x21", DType: dtype.BF16,
		Config: "vec=16,br=32,bc=16,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=dot"}},
}

// TestGoldenPlain is TestGolden for the plain forms of micro=asm configs,
// with testdata/golden_plain.sum, and checks that their Go does not import
// archsimd.
func TestGoldenPlain(t *testing.T) {
	var sets []kerneltest.GoldenSet
	for _, g := range plainGoldens {
		sets = append(sets, kerneltest.GoldenSet{Template: tmplOf(g.causal), Revision: plainRevision, FuncPrefix: "AttentionPlain",
			Goldens: []kerneltest.Golden{g.golden}, Generic: g.generic, Plain: true})
	}
	kerneltest.CheckGolden(t, cpu(2, avx512BF16), filepath.Join("testdata", "golden_plain.sum"), "cpu.go", sets...)
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
