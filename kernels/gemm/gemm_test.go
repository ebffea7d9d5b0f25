package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// cpu returns a CPU target with the given cores and ISA, and the caches of
// the machine the numbers in the package doc come from.
func cpu(cores int, isa device.ISA) device.Target {
	return device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: cores, ISA: isa,
		L1D: 48 << 10, L2: 1280 << 10, L3: 48 << 20}}
}

var (
	avx2   = device.ISA{SSE42: true, AVX2: true, FMA: true}
	avx512 = device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}
)

func TestSpaceConstraints(t *testing.T) {
	const sched = "kc=256,mc=96,nc=1024,pack_b=true,unroll=1"
	noCache := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, ISA: avx512}}
	big := []int{1024, 1024, 1024}
	tests := []struct {
		name   string
		target device.Target
		shape  []int
		config string
		want   string // the violated constraint, or "" for valid
	}{
		{"4x32 on avx512", cpu(2, avx512), big, "vec=16,mr=4,nr_vecs=2," + sched + ",threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"8x16 on avx512", cpu(2, avx512), big, "vec=16,mr=8,nr_vecs=1," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"6x32 spills", cpu(2, avx512), big, "vec=16,mr=6,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "register_budget"},
		{"8x16 of vec8 spills", cpu(2, avx2), big, "vec=8,mr=8,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "register_budget"},
		{"scalar 6x2 spills", cpu(1, device.ISA{}), big, "vec=1,mr=6,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "register_budget"},
		{"vec16 without avx512", cpu(2, avx2), big, "vec=16,mr=4,nr_vecs=1," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "vec16_needs_avx512"},
		{"vec8 on avx2", cpu(2, avx2), big, "vec=8,mr=4,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"vec8 without fma", cpu(2, device.ISA{SSE42: true, AVX2: true}), big, "vec=8,mr=4,nr_vecs=1," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "vec8_needs_avx2_fma"},
		{"scalar anywhere", cpu(1, device.ISA{}), big, "vec=1,mr=4,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"scalar without caches", device.Target{Name: "cpu", CPU: &device.CPU{Cores: 1}}, []int{1, 1, 1},
			"vec=1,mr=1,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"A block past L2", cpu(1, avx512), big, "vec=16,mr=4,nr_vecs=2,kc=512,mc=768,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "a_block_fits_l2"},
		{"A block within the fallback L2", noCache, big, "vec=16,mr=4,nr_vecs=2,kc=256,mc=192,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"A block past the fallback L2", noCache, big, "vec=16,mr=4,nr_vecs=2,kc=256,mc=384,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "a_block_fits_l2"},
		{"B panel past the fallback L2", noCache, big, "vec=16,mr=4,nr_vecs=2,kc=128,mc=24,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "b_panel_fits_cache"},
		{"B panels past L3", cpu(8, avx512), []int{4096, 4096, 4096}, "vec=16,mr=4,nr_vecs=2,kc=512,mc=24,nc=4096,pack_b=true,unroll=1,threads=8,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "b_panel_fits_cache"},
		{"kc past K", cpu(2, avx512), []int{64, 64, 33}, "vec=16,mr=4,nr_vecs=2,kc=128,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "kc_within_k"},
		{"kc covering K", cpu(2, avx512), []int{64, 64, 33}, "vec=16,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"mc past M", cpu(2, avx512), []int{17, 64, 64}, "vec=16,mr=4,nr_vecs=2,kc=64,mc=48,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "mc_within_m"},
		{"nc past N", cpu(2, avx512), []int{64, 200, 64}, "vec=16,mr=4,nr_vecs=2,kc=64,mc=24,nc=512,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "nc_within_n"},
		{"threads on one row", cpu(2, avx512), []int{1, 4096, 1}, "vec=16,mr=1,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "threads_at_most_tiles"},
		{"a goroutine without rows", cpu(4, avx512), []int{10, 64, 64}, "vec=16,mr=2,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=4,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "threads_at_most_tiles"},
		{"asm 12x32", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"go 12x32 spills", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "register_budget"},
		{"asm 8x16 of vec8", cpu(2, avx2), big, "vec=8,mr=6,nr_vecs=2," + sched + ",threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy", ""},
		{"asm 8x16 of vec8 over the avx2 registers", cpu(2, avx2), big, "vec=8,mr=8,nr_vecs=2," + sched + ",threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy", "register_budget"},
		{"asm scalar", cpu(2, avx512), big, "vec=1,mr=4,nr_vecs=1," + sched + ",threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy", "asm_needs_vectors"},
		{"asm unrolled", cpu(2, avx512), big, "vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=2,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy", "asm_needs_vectors"},
		{"split columns", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy", ""},
		{"split one goroutine", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=1,micro=asm,split=n,chunks=1,pack_a=false,convert=copy", "split_needs_threads"},
		{"split columns of a vector", cpu(2, avx512), []int{1024, 16, 1024}, "vec=16,mr=4,nr_vecs=1,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=go,split=n,chunks=1,pack_a=false,convert=copy", "threads_at_most_tiles"},
		{"split columns of a row", cpu(2, avx512), []int{1, 4096, 4096}, "vec=16,mr=4,nr_vecs=1,kc=256,mc=24,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy", ""},
		{"runs from a counter", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=asm,split=m,chunks=8,pack_a=false,convert=copy", ""},
		{"columns from a counter", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=asm,split=n,chunks=4,pack_a=false,convert=copy", ""},
		{"chunks on one goroutine", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=1,micro=asm,split=m,chunks=2,pack_a=false,convert=copy", "chunks_need_threads"},
		{"a run without rows", cpu(2, avx512), []int{100, 64, 64}, "vec=16,mr=12,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=go,split=m,chunks=8,pack_a=false,convert=copy", "runs_at_most_tiles"},
		{"a run without columns", cpu(2, avx512), []int{64, 100, 64}, "vec=16,mr=4,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=go,split=n,chunks=4,pack_a=false,convert=copy", "runs_at_most_tiles"},
		{"A packed", cpu(2, avx512), big, "vec=16,mr=12,nr_vecs=2," + sched + ",threads=2,micro=asm,split=m,chunks=1,pack_a=true,convert=copy", ""},
		{"A packed for archsimd tiles", cpu(2, avx512), big, "vec=16,mr=4,nr_vecs=2," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=true,convert=copy", "pack_a_needs_asm"},
		{"cuda target", device.Target{Name: "sm_86", GPU: &device.GPU{Arch: "sm_86"}}, big, "vec=1,mr=1,nr_vecs=1," + sched + ",threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy", "needs_cpu_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kerneltest.CheckConstraint(t, Template.Space(tt.shape, tt.target), tt.config, tt.want)
		})
	}
}

// TestRegisterBudget checks the tiles the budget admits for archsimd Go at
// each width against the ones measured: 4×32 fits, 6×32 spilled. 12×16
// (14 registers) is at the limit.
func TestRegisterBudget(t *testing.T) {
	var admitted []string
	for _, mr := range mrs {
		for _, nv := range nrVecs {
			if registers(mr, nv) <= registerBudget {
				admitted = append(admitted, fmtTile(mr, nv))
			}
		}
	}
	want := []string{"1x1", "1x2", "2x1", "2x2", "4x1", "4x2", "6x1", "8x1", "12x1"}
	if !slices.Equal(admitted, want) {
		t.Errorf("tiles (mr x nr_vecs) within the budget: %v, want %v", admitted, want)
	}
}

func fmtTile(mr, nv int) string { return fmt.Sprintf("%dx%d", mr, nv) }

// TestScalarAlwaysValid checks that every workload has a valid point on a
// CPU with no vector extensions and no cache sizes, so the tuner always
// finds something to measure.
func TestScalarAlwaysValid(t *testing.T) {
	bare := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 1}}
	for _, shape := range append(testShapes, []int{8192, 8192, 8192}, []int{3, 100000, 2}) {
		sp := Template.Space(shape, bare)
		cfg, err := sp.Parse("vec=1,mr=1,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy")
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Errorf("%v: %v", shape, err)
		}
	}
}

// TestEveryConfigRenders emits every valid config of a space, on a machine
// without AVX-512 too, and checks that the source parses.
func TestEveryConfigRenders(t *testing.T) {
	for _, tt := range []struct {
		target device.Target
		shape  []int
	}{
		{cpu(2, avx2), []int{100, 33, 70}},
		{cpu(3, avx512), []int{30, 40, 70}},
	} {
		sp := Template.Space(tt.shape, tt.target)
		valid := 0
		for i := range sp.Size() {
			cfg := sp.At(i)
			if !sp.Valid(cfg) {
				continue
			}
			valid++
			if cfg.Int("vec") == 16 && !tt.target.CPU.ISA.AVX512 {
				t.Fatalf("%s valid without AVX-512", cfg)
			}
			f := golang.NewFile("kernels")
			Template.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: tt.shape, Config: cfg, Arch: kernels.AMD64})
			if _, err := golang.Render(f); err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
		}
		if valid == 0 {
			t.Errorf("%v on %s: no valid point", tt.shape, tt.target.Fingerprint())
		}
		t.Logf("%v on %s: %d of %d points valid", tt.shape, tt.target.Fingerprint(), valid, sp.Size())
	}
}

func TestVersion(t *testing.T) {
	if Template.Version != version() {
		t.Errorf("Version %q is not stable: now %q", Template.Version, version())
	}
	if other := versionOf("gemm-0", space); other == Template.Version {
		t.Errorf("Version does not change with the revision: %s", other)
	}
	fewer := func(shape []int, target device.Target) *schedule.Space {
		return schedule.NewSpace(space(shape, target).Knobs()[:5])
	}
	if v := versionOf(revision, fewer); v == Template.Version {
		t.Errorf("Version does not change with the space: %s", v)
	}
}

func TestReference(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		a, b  []float32
		want  []float64
	}{
		{"one", []int{1, 1, 1}, []float32{3}, []float32{-2}, []float64{-6}},
		{"dot", []int{1, 1, 3}, []float32{1, 2, 3}, []float32{4, 5, 6}, []float64{32}},
		{"outer", []int{2, 2, 1}, []float32{1, 2}, []float32{3, 4}, []float64{3, 4, 6, 8}},
		{"2x3 by 3x2", []int{2, 2, 3}, []float32{1, 2, 3, 4, 5, 6}, []float32{7, 8, 9, 10, 11, 12}, []float64{58, 64, 139, 154}},
		{"no float32 rounding", []int{1, 1, 2}, []float32{1 << 24, 1}, []float32{1, 1}, []float64{1<<24 + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float64, len(tt.want))
			for i := range got {
				got[i] = math.NaN() // the reference must overwrite its output
			}
			Template.Reference(tt.shape, [][]float32{tt.a, tt.b}, got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	shape := []int{3, 5, 7}
	ins, out := Template.Args(shape)
	if !slices.Equal(ins, []int{3 * 7, 7 * 5}) || out != 3*5 {
		t.Errorf("Args = %v, %d", ins, out)
	}
	if got := Template.FLOPs(shape); got != 2*3*5*7 {
		t.Errorf("FLOPs = %g, want 2·M·N·K", got)
	}
	if got := Template.Bytes(shape); got != 4*(3*7+7*5+3*5) {
		t.Errorf("Bytes = %g, want 4·(MK+KN+MN)", got)
	}
	if Template.Op.Name != "gemm" {
		t.Errorf("Op = %s", Template.Op.Name)
	}
}

func TestTolerance(t *testing.T) {
	prevRel, prevAbs := 0.0, 0.0
	for _, k := range []int{1, 33, 259, 1024, 100000} {
		rel, abs := Template.Tolerance([]int{7, 9, k}, dtype.F32)
		if rel <= prevRel || abs <= prevAbs || rel > 1e-3 {
			t.Errorf("Tolerance(7x9x%d) = %g, %g: want both growing with K, rel below 1e-3", k, rel, abs)
		}
		// A product left out, or counted twice, moves an output by at least
		// 0.125² with the inputs the harness draws: the tolerance must see it
		// for the shapes the tests check, at outputs of a few times the
		// typical size for random signs, 5.5·√K.
		if k <= 1024 && abs+rel*inputBound*inputBound*math.Sqrt(float64(k)) >= 0.125*0.125 {
			t.Errorf("Tolerance(7x9x%d) = %g, %g: too loose to see one product", k, rel, abs)
		}
		prevRel, prevAbs = rel, abs
	}
}

func TestShapePanics(t *testing.T) {
	for _, shape := range [][]int{nil, {3}, {3, 4}, {0, 4, 4}, {4, 0, 4}, {4, 4, 0}, {1, 2, 3, 4}} {
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

// TestReferenceShared: the reference shares its rows among goroutines and
// gets exactly what one loop over them gets, rows off the split included.
func TestReferenceShared(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	m, n, k := 131, 130, 129 // 2^21 multiply-adds and more: shared three ways
	r := rand.New(rand.NewPCG(5, 6))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	want := make([]float64, m*n)
	for i := range m {
		for p := range k {
			for j := range n {
				want[i*n+j] += float64(a[i*k+p]) * float64(b[p*n+j])
			}
		}
	}
	got := make([]float64, m*n)
	for i := range got {
		got[i] = math.NaN()
	}
	Template.Reference([]int{m, n, k}, [][]float32{a, b}, got)
	if !slices.Equal(got, want) {
		t.Error("the shared reference differs from one loop over the rows")
	}
}
