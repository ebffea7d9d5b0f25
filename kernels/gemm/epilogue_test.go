package gemm

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// gemmVersion is Template.Version since the 16-bit forms' last slice of
// K stores full tiles rounded into C (gemm-8-12b1d38319f3 since the dot
// form packs B's strips in one call each, gemm-7-cef5bc6457fa since the space offers
// convert=pack and convert=dot only with their packed forms' knobs,
// gemm-7-01ef33480da3
// since the convert=dot form packs A by rows and B with assembly, gemm-6-1381bfdb5886
// since the convert knob, gemm-5-bc2d3a4738db
// since the knobs chunks and pack_a, gemm-4-e6c1c2df8a23 since its goroutines clear the vector registers'
// upper halves, gemm-3-c1402c0ab47f with the split knob,
// gemm-2-febe3fdda508 with the assembly micro-kernel, gemm-1-d75c9de47a2f
// before): a change to the epilogue templates must not change plain GEMM's
// tuning records.
const gemmVersion = "gemm-9-0810b1c5b68e"

// TestEarlierVersions checks that the templates' revisions before the
// chunks knob have the versions their records in tune/lab/testdata carry,
// so that those landscapes still replay.
func TestEarlierVersions(t *testing.T) {
	for _, tt := range []struct {
		tmpl *kernels.Template
		want string
	}{
		{&Template, "gemm-4-e6c1c2df8a23"},
		{&BiasTemplate, "gemm-bias-4-9455ec63a3f9"},
		{&BiasReLUTemplate, "gemm-bias-relu-4-e36356c6375a"},
	} {
		e, ok := tt.tmpl.Revision(tt.want)
		if !ok || e.Op.Name != tt.tmpl.Op.Name {
			t.Errorf("%s: no earlier revision %s (have %d)", tt.tmpl.Op.Name, tt.want, len(tt.tmpl.Earlier))
			continue
		}
		shape, target := []int{256, 256, 256}, cpu(2, avx512)
		if _, has := e.Space(shape, target).Knob("chunks"); has {
			t.Errorf("%s: revision %s has the chunks knob", tt.tmpl.Op.Name, tt.want)
		}
		if err := e.Space(shape, target).Check(e.Default(shape, target)); err != nil {
			t.Errorf("%s: revision %s: default: %v", tt.tmpl.Op.Name, tt.want, err)
		}
	}
}

func TestEpilogueVersions(t *testing.T) {
	if Template.Version != gemmVersion {
		t.Errorf("Template.Version = %q, want %q: plain GEMM's code or space changed", Template.Version, gemmVersion)
	}
	versions := map[string]string{}
	for _, tt := range []struct {
		tmpl *kernels.Template
		rev  string
	}{{&Template, revision}, {&BiasTemplate, biasRevision}, {&BiasReLUTemplate, biasReLURevision}} {
		if v := versionOf(tt.rev, space); tt.tmpl.Version != v {
			t.Errorf("%s: Version %q, want %q", tt.tmpl.Op.Name, tt.tmpl.Version, v)
		}
		if other, ok := versions[tt.tmpl.Version]; ok {
			t.Errorf("%s and %s share Version %q", other, tt.tmpl.Op.Name, tt.tmpl.Version)
		}
		versions[tt.tmpl.Version] = tt.tmpl.Op.Name
	}
}

func TestEpilogueOps(t *testing.T) {
	for _, tt := range []struct {
		tmpl *kernels.Template
		name string
	}{{&BiasTemplate, "gemm_bias"}, {&BiasReLUTemplate, "gemm_bias_relu"}} {
		op := tt.tmpl.Op
		if op.Name != tt.name || !slices.Equal(op.Dims, []string{"M", "N", "K"}) || op.Example != "1024x1024x1024" || op.Summary == "" {
			t.Errorf("Op = %+v", op)
		}
		if shape, err := op.ParseShape(op.Example); err != nil || !slices.Equal(shape, []int{1024, 1024, 1024}) {
			t.Errorf("%s: ParseShape(%s) = %v, %v", op.Name, op.Example, shape, err)
		}
		// The same knobs and constraints as Template's.
		shape, target := []int{1023, 517, 259}, cpu(4, avx512)
		a, b := tt.tmpl.Space(shape, target), Template.Space(shape, target)
		if a.Size() != b.Size() || !slices.Equal(a.Constraints(), b.Constraints()) {
			t.Errorf("%s: space differs from gemm's", op.Name)
		}
	}
}

func TestEpilogueCounts(t *testing.T) {
	shape := []int{3, 5, 7}
	for _, tt := range []struct {
		tmpl  *kernels.Template
		flops float64
	}{{&BiasTemplate, 2*3*5*7 + 3*5}, {&BiasReLUTemplate, 2*3*5*7 + 2*3*5}} {
		ins, out := tt.tmpl.Args(shape)
		if !slices.Equal(ins, []int{3 * 7, 7 * 5, 5}) || out != 3*5 {
			t.Errorf("%s: Args = %v, %d", tt.tmpl.Op.Name, ins, out)
		}
		if got := tt.tmpl.FLOPs(shape); got != tt.flops {
			t.Errorf("%s: FLOPs = %g, want %g", tt.tmpl.Op.Name, got, tt.flops)
		}
		if got := tt.tmpl.Bytes(shape); got != 4*(3*7+7*5+5+3*5) {
			t.Errorf("%s: Bytes = %g, want 4·(MK+KN+N+MN)", tt.tmpl.Op.Name, got)
		}
		for _, s := range [][]int{{7, 9, 1}, {7, 9, 1024}} {
			r1, a1 := tt.tmpl.Tolerance(s, dtype.F32)
			r2, a2 := Template.Tolerance(s, dtype.F32)
			if r1 != r2 || a1 != a2 {
				t.Errorf("%s: Tolerance(%v) = %g, %g, want gemm's %g, %g", tt.tmpl.Op.Name, s, r1, a1, r2, a2)
			}
		}
	}
}

func TestEpilogueReference(t *testing.T) {
	shape := []int{2, 2, 3}
	a, b := []float32{1, 2, 3, 4, 5, 6}, []float32{7, 8, 9, 10, 11, -12} // a·b = 58 -8; 139 10
	bias := []float32{-100, 0.5}
	for _, tt := range []struct {
		tmpl *kernels.Template
		want []float64
	}{
		{&BiasTemplate, []float64{-42, -7.5, 39, 10.5}},
		{&BiasReLUTemplate, []float64{0, 0, 39, 10.5}},
	} {
		got := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
		tt.tmpl.Reference(shape, [][]float32{a, b, bias}, got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.tmpl.Op.Name, got, tt.want)
		}
	}
}

// The epilogue's baselines are Template's (naive, gonum, and with their
// tags openblas, libxsmm and onednn's), each followed by a loop over c but
// oneDNN's, which fuse the epilogue (TestOneDNN); TestKernels checks them
// against the reference.
func TestEpilogueBaselines(t *testing.T) {
	for _, tt := range []struct {
		tmpl *kernels.Template
		loop string
	}{{&BiasTemplate, "ci[j] = ci[j] + x"}, {&BiasReLUTemplate, "ci[j] = max(ci[j]+x, 0)"}} {
		var names []string
		for i, b := range tt.tmpl.Baselines {
			names = append(names, b.Name)
			if !slices.Equal(b.Requires, Template.Baselines[i].Requires) || b.Cgo != Template.Baselines[i].Cgo {
				t.Errorf("%s %s: requires %v, cgo %v", tt.tmpl.Op.Name, b.Name, b.Requires, b.Cgo)
			}
			f := jen.NewFile("p")
			b.EmitGo(f, "Kernel", []int{3, 5, 7})
			src := f.GoString()
			if strings.HasPrefix(b.Name, "onednn") {
				continue // fused in the primitive: TestOneDNN, TestOneDNNHalf
			}
			if !strings.Contains(src, "func Kernel(c, a, b, bias []float32)") || !strings.Contains(src, tt.loop) {
				t.Errorf("%s %s: no kernel with bias, or no %q:\n%s", tt.tmpl.Op.Name, b.Name, tt.loop, src)
			}
		}
		var want []string
		for _, b := range Template.Baselines {
			want = append(want, b.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: baselines %v, want %v", tt.tmpl.Op.Name, names, want)
		}
		if tt.tmpl.Baselines[0].Skipped([]int{4096, 4096, 4096}) == "" {
			t.Errorf("%s: naive not skipped for 4096³", tt.tmpl.Op.Name)
		}
	}
}

// TestEpilogueRenders emits every valid config of a small space with each
// epilogue and checks that the source parses and applies the epilogue
// only on the last slice of K.
func TestEpilogueRenders(t *testing.T) {
	shape, target := []int{30, 40, 70}, cpu(2, avx512)
	for _, tmpl := range []*kernels.Template{&BiasTemplate, &BiasReLUTemplate} {
		sp := tmpl.Space(shape, target)
		valid := 0
		for i := range sp.Size() {
			cfg := sp.At(i)
			if !sp.Valid(cfg) || cfg.Int("threads") != 1 || cfg.Int("unroll") != 1 {
				continue
			}
			valid++
			f := golang.NewFile("kernels")
			asmSrc := tmpl.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64})
			src, err := golang.Render(f)
			if err != nil {
				t.Fatalf("%s %s: %v", tmpl.Op.Name, cfg, err)
			}
			if cfg.Str("micro") == "asm" {
				// The full tile's epilogue is in its assembly, picked on the last slice.
				asm := string(asmSrc)
				if !strings.Contains(string(src), "pc+depth == k:") || !strings.Contains(asm, "VADDPS") {
					t.Fatalf("%s %s: no epilogue on the last slice:\n%s\n%s", tmpl.Op.Name, cfg, src, asm)
				}
				if relu := strings.Contains(asm, "VMAXPS"); relu != (tmpl == &BiasReLUTemplate) {
					t.Fatalf("%s %s: ReLU %v", tmpl.Op.Name, cfg, relu)
				}
				continue
			}
			if !strings.Contains(string(src), "pc == 0, pc+depth == k)") || !strings.Contains(string(src), "if last {") {
				t.Fatalf("%s %s: no epilogue on the last slice:\n%s", tmpl.Op.Name, cfg, src)
			}
			if relu := strings.Contains(string(src), "max(") || strings.Contains(string(src), ".Max("); relu != (tmpl == &BiasReLUTemplate) {
				t.Fatalf("%s %s: ReLU %v", tmpl.Op.Name, cfg, relu)
			}
		}
		if valid == 0 {
			t.Errorf("%s: no valid point", tmpl.Op.Name)
		}
	}
}
