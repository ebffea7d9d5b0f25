package attention

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
)

// TestCausalOp checks TemplateCausal's op, that the registry has it, and
// that --causal selects it from attention and keeps it.
func TestCausalOp(t *testing.T) {
	op := TemplateCausal.Op
	if op.Name != "attention_causal" || !slices.Equal(op.Dims, []string{"B", "H", "S", "D"}) {
		t.Errorf("Op = %+v", op)
	}
	if shape, err := op.ParseShape(op.Example); err != nil || !slices.Equal(shape, []int{1, 8, 1024, 64}) {
		t.Errorf("ParseShape(%q) = %v, %v", op.Example, shape, err)
	}
	registered, err := kernels.Lookup("attention_causal")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"attention", "attention_causal"} {
		if got, err := kernels.Resolve(name, "causal"); err != nil || got.Name != "attention_causal" {
			t.Errorf("Resolve(%s, causal) = %s, %v", name, got.Name, err)
		}
	}
	if tmpl, ok := kernels.TemplateFor("attention_causal", kernels.CPU); !ok || tmpl.Version != TemplateCausal.Version {
		t.Errorf("TemplateFor(attention_causal, cpu) = %s, %v", tmpl.Version, ok)
	}
	if registered.Name != op.Name || !slices.Equal(registered.Dims, op.Dims) ||
		registered.Example != op.Example || registered.Summary != op.Summary {
		t.Errorf("kernels.Lookup(attention_causal) = %+v, TemplateCausal.Op = %+v", registered, op)
	}
}

func TestCausalVersion(t *testing.T) {
	if TemplateCausal.Version != causalVersion() {
		t.Errorf("Version %q is not stable: now %q", TemplateCausal.Version, causalVersion())
	}
	if TemplateCausal.Version == Template.Version {
		t.Errorf("TemplateCausal.Version = Template.Version = %s", Template.Version)
	}
	if !strings.HasPrefix(TemplateCausal.Version, causalRevision+"-") {
		t.Errorf("Version %q does not start with %q", TemplateCausal.Version, causalRevision)
	}
	if other := versionOf("attention-causal-0", space); other == TemplateCausal.Version {
		t.Errorf("Version does not change with the revision: %s", other)
	}
}

// TestCausalSpace checks that TemplateCausal offers Template's space.
func TestCausalSpace(t *testing.T) {
	for _, shape := range [][]int{{1, 8, 1024, 64}, {1, 3, 7, 5}, {1, 1, 1, 1}} {
		target := cpu(3, avx2)
		a, b := Template.Space(shape, target), TemplateCausal.Space(shape, target)
		if a.Size() != b.Size() || !slices.Equal(a.Constraints(), b.Constraints()) {
			t.Errorf("%v: causal space %d points %v, want %d %v", shape, b.Size(), b.Constraints(), a.Size(), a.Constraints())
		}
		cfg, err := b.Parse("vec=1,br=1,bc=1,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Check(cfg); err != nil {
			t.Errorf("%v: %v", shape, err)
		}
	}
}

func TestCausalCounts(t *testing.T) {
	shape := []int{1, 8, 1024, 64}
	if got, want := TemplateCausal.FLOPs(shape), 2*8*64*1024*1025.0; got != want {
		t.Errorf("FLOPs = %g, want %g", got, want)
	}
	if r := TemplateCausal.FLOPs(shape) / Template.FLOPs(shape); r < 0.5 || r > 0.501 {
		t.Errorf("causal/non-causal FLOPs = %g, want about 1/2", r)
	}
	if got, want := TemplateCausal.FLOPs([]int{1, 1, 1, 1}), 4.0; got != want {
		t.Errorf("FLOPs(1x1x1x1) = %g, want %g (one score, one product)", got, want)
	}
	if TemplateCausal.Bytes(shape) != Template.Bytes(shape) {
		t.Errorf("Bytes = %g, want %g", TemplateCausal.Bytes(shape), Template.Bytes(shape))
	}
	ins, out := TemplateCausal.Args(shape)
	if n := 8 * 1024 * 64; !slices.Equal(ins, []int{n, n, n}) || out != n {
		t.Errorf("Args = %v, %d", ins, out)
	}
}

func TestCausalReference(t *testing.T) {
	e := math.E
	tests := []struct {
		name    string
		shape   []int
		q, k, v []float32
		want    []float64
	}{
		// Row 0 sees key 0 alone; row 1 sees both, scores 1 and 2.
		{"two rows", []int{1, 1, 2, 1}, []float32{1, 1}, []float32{1, 2}, []float32{0, 1},
			[]float64{0, e / (1 + e)}},
		// Row 0 sees key 0 alone, however large the masked scores; row 2
		// averages three equal scores; heads independent.
		{
			"mask and heads", []int{1, 2, 3, 1},
			[]float32{1, 1, 1, 1, 1, 1},
			[]float32{0, 1e4, 1e4, 0, 0, 0},
			[]float32{3, 5, 7, 3, 6, 9},
			[]float64{3, 5, 6, 3, 4.5, 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float64, len(tt.want))
			TemplateCausal.Reference(tt.shape, [][]float32{tt.q, tt.k, tt.v}, got)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Errorf("got %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
	// The last row of a causal head is the non-causal one.
	shape := []int{1, 1, 5, 3}
	ins := input(shape, "random", rand.New(rand.NewPCG(3, 4)))
	causal, full := make([]float64, 15), make([]float64, 15)
	TemplateCausal.Reference(shape, ins, causal)
	Template.Reference(shape, ins, full)
	if !slices.Equal(causal[12:], full[12:]) || slices.Equal(causal[:3], full[:3]) {
		t.Errorf("causal %v, non-causal %v: want the last rows equal and the first ones not", causal, full)
	}
}

// TestCausalRenders emits every valid causal config of a few spaces and
// checks that the source parses and skips key blocks: no unmasked call
// where every block crosses the diagonal.
func TestCausalRenders(t *testing.T) {
	for _, target := range []device.Target{cpu(2, avx2), cpu(3, avx512)} {
		for _, shape := range [][]int{{2, 3, 100, 33}, {1, 1, 5, 64}} {
			sp := TemplateCausal.Space(shape, target)
			valid := 0
			for i := range sp.Size() {
				cfg := sp.At(i)
				if !sp.Valid(cfg) {
					continue
				}
				if valid++; !renderAll(valid) {
					continue
				}
				f := golang.NewFile("kernels")
				TemplateCausal.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64})
				src, err := golang.Render(f)
				if err != nil {
					t.Fatalf("%s: %v", cfg, err)
				}
				masked := "KKeysMasked" // the rows layout's masked keys function
				if cfg.Str("layout") == "lanes" {
					masked = "KMask("
				}
				if !strings.Contains(string(src), masked) || !strings.Contains(string(src), ", causal (") {
					t.Fatalf("%s: no masking function, or not documented causal:\n%s", cfg, src)
				}
			}
		}
	}
}
