package attention

import (
	"math"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// cpu returns a CPU target with the given cores and ISA.
func cpu(cores int, isa device.ISA) device.Target {
	return device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: cores, ISA: isa}}
}

var (
	avx2   = device.ISA{SSE42: true, AVX2: true, FMA: true}
	avx512 = device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}
)

func TestSpaceConstraints(t *testing.T) {
	shape := []int{1, 8, 1024, 64}
	tests := []struct {
		name   string
		target device.Target
		shape  []int
		config string
		want   string // the violated constraint, or "" for valid
	}{
		{"vec16 on avx512", cpu(2, avx512), shape, "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy", ""},
		{"vec16 without avx512", cpu(2, avx2), shape, "vec=16,br=64,bc=64,exp=poly5,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy", "vec16_needs_avx512"},
		{"vec8 on avx2", cpu(2, avx2), shape, "vec=8,br=16,bc=32,exp=f64,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy", ""},
		{"vec8 without fma", cpu(2, device.ISA{SSE42: true, AVX2: true}), shape, "vec=8,br=16,bc=32,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy", "vec8_needs_avx2_fma"},
		{"vec8 without avx2", cpu(2, device.ISA{}), shape, "vec=8,br=16,bc=32,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy", "vec8_needs_avx2_fma"},
		{"scalar anywhere", cpu(1, device.ISA{}), shape, "vec=1,br=1,bc=1,exp=poly4,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy", ""},
		{"threads on one block", cpu(2, avx512), []int{1, 1, 64, 8}, "vec=16,br=64,bc=64,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy", "threads_at_most_blocks"},
		{"threads on two blocks", cpu(2, avx512), []int{1, 1, 64, 8}, "vec=16,br=32,bc=64,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy", ""},
		{"threads on heads", cpu(4, avx512), []int{2, 2, 1, 8}, "vec=16,br=1,bc=1,exp=poly4,threads=4,layout=rows,mr=1,nv=1,micro=go,convert=copy", ""},
		{"lanes", cpu(2, avx512), shape, "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=2,nv=4,micro=go,convert=copy", ""},
		{"lanes scalar", cpu(1, device.ISA{}), []int{1, 1, 7, 3}, "vec=1,br=4,bc=4,exp=f64,threads=1,layout=lanes,mr=8,nv=1,micro=go,convert=copy", ""},
		{"lanes tile wider than br", cpu(2, avx512), shape, "vec=16,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=2,nv=2,micro=go,convert=copy", "lanes_tile_divides_br"},
		{"lanes tile not dividing br", cpu(2, avx2), shape, "vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=2,nv=4,micro=go,convert=copy", "lanes_tile_divides_br"},
		{"lanes tile over the registers", cpu(2, avx512), shape, "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=4,nv=4,micro=go,convert=copy", "register_budget"},
		{"asm tile", cpu(2, avx512), shape, "vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy", ""},
		{"asm tile over the registers", cpu(2, avx512), shape, "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=8,nv=4,micro=asm,convert=copy", "register_budget"},
		{"go tile over the avx2 registers", cpu(2, avx2), shape, "vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=8,nv=1,micro=go,convert=copy", "register_budget"},
		{"go tile within the avx2 registers", cpu(2, avx2), shape, "vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=1,micro=go,convert=copy", ""},
		{"asm tile over the avx2 registers", cpu(2, avx2), shape, "vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=8,nv=2,micro=asm,convert=copy", "register_budget"},
		{"asm avx2 tile", cpu(2, avx2), shape, "vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=2,micro=asm,convert=copy", ""},
		{"dot without avx512 bf16", cpu(2, avx512), shape, "vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=dot", "dot_needs_avx512_bf16"},
		{"dot with avx512 bf16", cpu(2, device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}), shape, "vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=dot", ""},
		{"asm scalar", cpu(2, avx512), shape, "vec=1,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=2,micro=asm,convert=copy", "asm_needs_lanes_vectors"},
		{"asm rows", cpu(2, avx512), shape, "vec=16,br=16,bc=64,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=asm,convert=copy", "asm_needs_lanes_vectors"},
		{"rows with a tile", cpu(2, avx512), shape, "vec=16,br=64,bc=64,exp=poly5,threads=2,layout=rows,mr=2,nv=1,micro=go,convert=copy", "rows_has_no_tile"},
		{"cuda target", device.Target{Name: "sm_86", GPU: &device.GPU{Arch: "sm_86"}}, shape, "vec=1,br=1,bc=1,exp=poly4,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy", "needs_cpu_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kerneltest.CheckConstraint(t, Template.Space(tt.shape, tt.target), tt.config, tt.want)
		})
	}
}

func TestSpaceKnobs(t *testing.T) {
	tests := []struct {
		shape   []int
		cores   int
		threads []int
		blocks  []int
		size    int64
	}{
		{[]int{1, 8, 1024, 64}, 2, []int{1, 2}, []int{1, 4, 8, 16, 32, 64}, 3 * 6 * 6 * 3 * 2 * 2 * 6 * 3 * 2 * 2},
		{[]int{1, 3, 7, 5}, 2, []int{1, 2}, []int{1, 4}, 3 * 2 * 2 * 3 * 2 * 2 * 6 * 3 * 2 * 2},
		{[]int{1, 1, 1000, 80}, 8, []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 4, 8, 16, 32, 64}, 3 * 6 * 6 * 3 * 8 * 2 * 6 * 3 * 2 * 2},
		{[]int{1, 1, 1, 1}, 1, []int{1}, []int{1}, 3 * 3 * 2 * 6 * 3 * 2 * 2}, // vec × exp × layout × mr × nv × micro × convert
	}
	for _, tt := range tests {
		sp := Template.Space(tt.shape, cpu(tt.cores, avx512))
		if got := sp.Size(); got != tt.size {
			t.Errorf("%v on %d cores: Size() = %d, want %d", tt.shape, tt.cores, got, tt.size)
		}
		for name, want := range map[string][]int{"threads": tt.threads, "br": tt.blocks, "bc": tt.blocks, "vec": {1, 8, 16}} {
			k, ok := sp.Knob(name)
			if !ok {
				t.Fatalf("no knob %s", name)
			}
			var got []int
			for _, v := range k.Values {
				got = append(got, v.Int())
			}
			if !slices.Equal(got, want) {
				t.Errorf("%v on %d cores: %s = %v, want %v", tt.shape, tt.cores, name, got, want)
			}
		}
	}
}

// TestScalarAlwaysValid checks that the plainest config, which any CPU
// runs, is valid for every shape, so that a search always has a point.
func TestScalarAlwaysValid(t *testing.T) {
	for _, shape := range [][]int{{1, 1, 1, 1}, {1, 1, 1, 4096}, {3, 5, 7, 9}, {1, 8, 1024, 64}} {
		for _, target := range []device.Target{cpu(1, device.ISA{}), cpu(16, avx512)} {
			sp := Template.Space(shape, target)
			cfg, err := sp.Parse("vec=1,br=1,bc=1,exp=f64,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy")
			if err != nil {
				t.Fatal(err)
			}
			if err := sp.Check(cfg); err != nil {
				t.Errorf("%v on %s: %v", shape, target.Fingerprint(), err)
			}
		}
	}
}

// TestEveryConfigRenders emits every valid config of a space, on a machine
// without AVX-512 too, and checks that the source parses.
// renderAll says whether the render tests render the valid config of this
// count: every one with AUTOTUNE_EXHAUSTIVE=1, else every seventh (a
// stride prime to every knob's number of values, so that the sample still
// varies every knob), which takes a seventh of the time.
func renderAll(valid int) bool { return exhaustive || valid%7 == 1 }

func TestEveryConfigRenders(t *testing.T) {
	for _, target := range []device.Target{cpu(2, avx2), cpu(3, avx512)} {
		for _, shape := range [][]int{{2, 3, 100, 33}, {1, 1, 5, 64}} {
			sp := Template.Space(shape, target)
			valid := 0
			for i := range sp.Size() {
				cfg := sp.At(i)
				if !sp.Valid(cfg) {
					continue
				}
				valid++
				if cfg.Int("vec") == 16 && !target.CPU.ISA.AVX512 {
					t.Fatalf("%s valid without AVX-512", cfg)
				}
				if !renderAll(valid) {
					continue
				}
				f := golang.NewFile("kernels")
				Template.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64})
				if _, err := golang.Render(f); err != nil {
					t.Fatalf("%s: %v", cfg, err)
				}
			}
			t.Logf("%v on %s: %d of %d points valid", shape, target.Fingerprint(), valid, sp.Size())
		}
	}
}

func TestVersion(t *testing.T) {
	if Template.Version != version() {
		t.Errorf("Version %q is not stable: now %q", Template.Version, version())
	}
	if other := versionOf("attention-0", space); other == Template.Version {
		t.Errorf("Version does not change with the revision: %s", other)
	}
	fewer := func(shape []int, target device.Target) *schedule.Space {
		return schedule.NewSpace(space(shape, target).Knobs()[:4])
	}
	if v := versionOf(revision, fewer); v == Template.Version {
		t.Errorf("Version does not change with the space: %s", v)
	}
}

func TestReference(t *testing.T) {
	tests := []struct {
		name    string
		shape   []int
		q, k, v []float32
		want    []float64
	}{
		{"one key", []int{1, 1, 1, 2}, []float32{1, 2}, []float32{3, -4}, []float32{5, -6}, []float64{5, -6}},
		{"equal scores average", []int{1, 1, 2, 1}, []float32{0.5, 0.5}, []float32{2, 2}, []float32{1, 3}, []float64{2, 2}},
		{
			// scores q·k/√1: row 0 meets 1 and 2, so weights 1:e
			"weights", []int{1, 1, 2, 1}, []float32{1, 1}, []float32{1, 2}, []float32{0, 1},
			[]float64{math.E / (1 + math.E), math.E / (1 + math.E)},
		},
		{
			// scale 1/√4: scores 2·(q·k)/4, heads independent
			"scale and heads", []int{1, 2, 2, 4},
			[]float32{1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0},
			[]float32{1, 1, 1, 1, 0, 0, 0, 0, 1e4, 0, 0, 0, -1e4, 0, 0, 0},
			[]float32{1, 0, 0, 0, 0, 1, 0, 0, 7, 7, 7, 7, -7, -7, -7, -7},
			[]float64{
				math.Exp(2) / (1 + math.Exp(2)), 1 / (1 + math.Exp(2)), 0, 0, 0.5, 0.5, 0, 0,
				7, 7, 7, 7, 7, 7, 7, 7,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float64, len(tt.want))
			Template.Reference(tt.shape, [][]float32{tt.q, tt.k, tt.v}, got)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-12 {
					t.Errorf("got %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
}

func TestCounts(t *testing.T) {
	shape := []int{1, 8, 1024, 64}
	n := 8 * 1024 * 64
	ins, out := Template.Args(shape)
	if !slices.Equal(ins, []int{n, n, n}) || out != n {
		t.Errorf("Args = %v, %d", ins, out)
	}
	if got := Template.Bytes(shape); got != 16*float64(n) {
		t.Errorf("Bytes = %g, want 16 MiB", got)
	}
	if got, want := Template.FLOPs(shape), 4*8*1024*1024*64.0; got != want {
		t.Errorf("FLOPs = %g, want %g", got, want)
	}
	if Template.Op.Name != "attention" {
		t.Errorf("Op = %s", Template.Op.Name)
	}
}

func TestTolerance(t *testing.T) {
	prevS, prevD := 0.0, 0.0
	for _, s := range []int{1, 64, 1000, 100000} {
		rel, abs := Template.Tolerance([]int{1, 1, s, 64}, dtype.F32)
		if abs <= prevS || abs > 5e-3 || rel <= 0 || rel > 1e-6 {
			t.Errorf("Tolerance(S=%d) = %g, %g: want abs growing with S, below 5e-3", s, rel, abs)
		}
		prevS = abs
	}
	for _, d := range []int{1, 64, 128, 1024} {
		_, abs := Template.Tolerance([]int{1, 1, 1024, d}, dtype.F32)
		if abs <= prevD {
			t.Errorf("Tolerance(D=%d) abs = %g: want it growing with D", d, abs)
		}
		prevD = abs
	}
}

func TestShapePanics(t *testing.T) {
	for _, shape := range [][]int{nil, {3}, {1, 1, 1}, {0, 1, 1, 1}, {1, 1, 1, 0}, {1, 2, 3, 4, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Space(%v) did not panic", shape)
				}
			}()
			Template.Space(shape, cpu(1, device.ISA{}))
		}()
	}
}
