package softmax

import (
	"math"
	"slices"
	"strings"
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
	tests := []struct {
		name   string
		target device.Target
		shape  []int
		config string
		want   string // the violated constraint, or "" for valid
	}{
		{"vec16 on avx512", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached", ""},
		{"vec16 without avx512", cpu(2, avx2), []int{64, 64}, "vec=16,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "vec16_needs_avx512"},
		{"vec8 on avx2", cpu(2, avx2), []int{64, 64}, "vec=8,unroll=1,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", ""},
		{"vec8 without fma", cpu(2, device.ISA{SSE42: true, AVX2: true}), []int{64, 64}, "vec=8,unroll=1,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "vec8_needs_avx2_fma"},
		{"vec8 without avx2", cpu(2, device.ISA{}), []int{64, 64}, "vec=8,unroll=1,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "vec8_needs_avx2_fma"},
		{"scalar anywhere", cpu(1, device.ISA{}), []int{64, 64}, "vec=1,unroll=8,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", ""},
		{"chunks without threads", cpu(2, avx512), []int{64, 64}, "vec=1,unroll=1,algo=online,exp=poly4,threads=1,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached", "rows_per_chunk_needs_threads"},
		{"more threads than chunks", cpu(4, avx512), []int{64, 64}, "vec=1,unroll=1,algo=online,exp=poly4,threads=4,rows_per_chunk=64,code=go,prefetch=false,convert=block,store=cached", "threads_at_most_chunks"},
		{"threads on one row", cpu(2, avx512), []int{1, 100000}, "vec=16,unroll=1,algo=online,exp=poly4,threads=2,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "threads_at_most_chunks"},
		{"asm on avx512", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=asm,prefetch=true,convert=block,store=cached", ""},
		{"asm without avx512", cpu(2, avx2), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "vec16_needs_avx512"},
		{"asm on avx2", cpu(2, avx2), []int{64, 64}, "vec=8,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=asm,prefetch=true,convert=block,store=cached", ""},
		{"asm on 8 lanes on avx512", cpu(2, avx512), []int{64, 64}, "vec=8,unroll=1,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", ""},
		{"asm on 8 lanes unrolled by 4", cpu(2, avx512), []int{64, 64}, "vec=8,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "asm_vec8_unroll_at_most_2"},
		{"asm without fma", cpu(2, device.ISA{SSE42: true, AVX2: true}), []int{64, 64}, "vec=8,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "vec8_needs_avx2_fma"},
		{"asm scalar", cpu(2, avx512), []int{64, 64}, "vec=1,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "asm_needs_vectors"},
		{"asm online", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "asm_needs_threepass"},
		{"asm with math.Exp", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "asm_needs_poly_exp"},
		{"asm unrolled by 8", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=8,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "asm_unroll_at_most_4"},
		{"prefetch in Go", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=true,convert=block,store=cached", "prefetch_needs_asm"},
		{"poly3 in asm", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly3,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", ""},
		{"poly3 in Go", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly3,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "poly3_needs_amd64_asm"},
		{"stream converting in registers", cpu(2, avx2), []int{64, 64}, "vec=8,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=reg,store=stream", ""},
		{"stream around float32 rows", cpu(2, avx512), []int{64, 64}, "vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=stream", "stream_needs_convert_reg"},
		{"cuda target", device.Target{Name: "sm_86", GPU: &device.GPU{Arch: "sm_86"}}, []int{64, 64}, "vec=1,unroll=1,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", "needs_cpu_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kerneltest.CheckConstraint(t, Template.Space(tt.shape, tt.target), tt.config, tt.want)
		})
	}
}

// TestSearchSpaceDType checks that a float32 search leaves out the
// degree-3 exp, whose error is below a 16-bit result's rounding only,
// and streamed stores (a float32 search pins convert=block), and that a
// bf16 search offers both.
func TestSearchSpaceDType(t *testing.T) {
	target, shape := cpu(2, avx512), []int{64, 64}
	for _, tt := range []struct {
		dt     dtype.DType
		config string
		want   string
	}{
		{dtype.F32, "vec=16,unroll=4,algo=threepass,exp=poly3,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", "poly3_needs_16bit"},
		{dtype.F32, "vec=16,unroll=4,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", ""},
		{dtype.BF16, "vec=16,unroll=4,algo=threepass,exp=poly3,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=reg,store=stream", ""},
	} {
		sp := Template.SearchSpace(shape, tt.dt, target)
		kerneltest.CheckConstraint(t, sp, tt.config, tt.want)
		if tt.dt == dtype.F32 {
			kerneltest.CheckConstraint(t, sp, strings.Replace(tt.config, "store=cached", "store=stream", 1), "stream_needs_convert_reg")
		}
	}
}

func TestSpaceKnobs(t *testing.T) {
	tests := []struct {
		shape   []int
		cores   int
		threads []int
		chunks  []int
		size    int64
	}{
		{[]int{4096, 1024}, 2, []int{1, 2}, []int{1, 4, 16, 64}, 4 * 4 * 2 * 3 * 2 * 4 * 2 * 2 * 3 * 2},
		{[]int{3, 17}, 2, []int{1, 2}, []int{1}, 4 * 4 * 2 * 3 * 2 * 1 * 2 * 2 * 3 * 2},
		{[]int{20, 5}, 8, []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{1, 4, 16}, 4 * 4 * 2 * 3 * 8 * 3 * 2 * 2 * 3 * 2},
		{[]int{1, 1}, 1, []int{1}, []int{1}, 4 * 4 * 2 * 3 * 2 * 2 * 3 * 2},
	}
	for _, tt := range tests {
		sp := Template.Space(tt.shape, cpu(tt.cores, avx512))
		if got := sp.Size(); got != tt.size {
			t.Errorf("%v on %d cores: Size() = %d, want %d", tt.shape, tt.cores, got, tt.size)
		}
		for name, want := range map[string][]int{"threads": tt.threads, "rows_per_chunk": tt.chunks, "vec": {1, 8, 16}, "unroll": {1, 2, 4, 8}} {
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

// TestEveryConfigRenders emits every valid config of a space, on a machine
// without AVX-512 too, and checks that the source parses.
func TestEveryConfigRenders(t *testing.T) {
	for _, target := range []device.Target{cpu(2, avx2), cpu(3, avx512)} {
		shape := []int{100, 33}
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
			f := golang.NewFile("kernels")
			asm := Template.Go.EmitGo(f, kernels.Kernel{Name: "K", Shape: shape, Config: cfg, Arch: kernels.AMD64})
			if _, err := golang.Render(f); err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
			if (asm != nil) != (cfg.Str("code") == "asm") || Template.Go.Asm(cfg) != (asm != nil) {
				t.Fatalf("%s: %d bytes of assembly", cfg, len(asm))
			}
		}
		t.Logf("%s: %d of %d points valid", target.Fingerprint(), valid, sp.Size())
	}
}

func TestVersion(t *testing.T) {
	if Template.Version != version() {
		t.Errorf("Version %q is not stable: now %q", Template.Version, version())
	}
	other := versionOf("softmax-0", space)
	if other == Template.Version {
		t.Errorf("Version does not change with the revision: %s", other)
	}
	fewer := func(shape []int, target device.Target) *schedule.Space {
		sp := space(shape, target)
		return schedule.NewSpace(sp.Knobs()[:5])
	}
	if v := versionOf(revision, fewer); v == Template.Version {
		t.Errorf("Version does not change with the space: %s", v)
	}
}

func TestReference(t *testing.T) {
	inf := float32(math.Inf(-1))
	tests := []struct {
		name  string
		shape []int
		in    []float32
		want  []float64
	}{
		{"one", []int{1, 1}, []float32{-3}, []float64{1}},
		{"two equal", []int{1, 2}, []float32{5, 5}, []float64{0.5, 0.5}},
		{"rows are independent", []int{2, 2}, []float32{0, 1, 1e4, 1e4}, []float64{1 / (1 + math.E), math.E / (1 + math.E), 0.5, 0.5}},
		{"-Inf gives 0", []int{1, 3}, []float32{inf, 2, 2}, []float64{0, 0.5, 0.5}},
		{"all -Inf gives NaN", []int{1, 2}, []float32{inf, inf}, []float64{math.NaN(), math.NaN()}},
		{"no overflow", []int{1, 2}, []float32{math.MaxFloat32, math.MaxFloat32}, []float64{0.5, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]float64, len(tt.want))
			Template.Reference(tt.shape, [][]float32{tt.in}, got)
			for i := range got {
				if math.IsNaN(tt.want[i]) != math.IsNaN(got[i]) || math.Abs(got[i]-tt.want[i]) > 1e-15 {
					t.Errorf("got %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
}

func TestCounts(t *testing.T) {
	shape := []int{4096, 1024}
	ins, out := Template.Args(shape)
	if !slices.Equal(ins, []int{4096 * 1024}) || out != 4096*1024 {
		t.Errorf("Args = %v, %d", ins, out)
	}
	if got := Template.Bytes(shape); got != 32<<20 {
		t.Errorf("Bytes = %g, want 32 MiB", got)
	}
	if got := Template.FLOPs(shape); got != 5*4096*1024 {
		t.Errorf("FLOPs = %g, want 5 per element", got)
	}
	if Template.Op.Name != "softmax" {
		t.Errorf("Op = %s", Template.Op.Name)
	}
}

func TestTolerance(t *testing.T) {
	prev := 0.0
	for _, cols := range []int{1, 17, 1023, 100000} {
		rel, abs := Template.Tolerance([]int{7, cols}, dtype.F32)
		if rel <= prev || rel > 1e-4 || abs <= 0 || abs > 1e-30 {
			t.Errorf("Tolerance(7x%d) = %g, %g: want rel growing with cols, below 1e-4, abs tiny", cols, rel, abs)
		}
		prev = rel
	}
}

func TestShapePanics(t *testing.T) {
	for _, shape := range [][]int{nil, {3}, {0, 4}, {4, 0}, {1, 2, 3}} {
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
