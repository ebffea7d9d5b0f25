package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// halfShapes are the shapes of the 16-bit test: one element, tails of
// every tile and block in M, N and K, and a K long enough for f16's large
// inputs to sum far from its range's edges.
var halfShapes = [][]int{{1, 1, 1}, {7, 13, 5}, {67, 33, 129}, {17, 1, 1031}}

// TestHalfKernels checks GEMM's and its epilogues' kernels of bf16 and f16
// (float32 kernels on float32 copies, kernels/halfcopy): every fifth
// config of the short grid on halfShapes, the plain forms of assembly, and
// generic kernels of a few configs on the same shapes, on the input sets
// of each dtype rounded to it, against the float64 reference with the
// tolerance of a 16-bit output. A sample is enough: the float32 tests
// sweep every config, and a 16-bit kernel wraps the same float32 code.
func TestHalfKernels(t *testing.T) {
	host := device.Host()
	for _, tmpl := range []*kernels.Template{&Template, &BiasTemplate, &BiasReLUTemplate} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				var specs []kerneltest.Spec
				n := 0
				for _, shape := range halfShapes {
					for _, cfg := range grid(t, shape, host, true) {
						if n++; n%5 != 0 {
							continue
						}
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape})
						if tmpl.Go.Asm(cfg) {
							specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
						}
					}
				}
				for i, cfg := range genericConfigs(t, tmpl) {
					if i%7 != 0 {
						continue
					}
					for _, shape := range halfShapes {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true})
					}
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}

// packedShapes are the shapes of the packed 16-bit forms' test: one
// element, primes, K odd in a slice of its own (K%kc odd), and tails of
// every tile and block.
var packedShapes = [][]int{{1, 1, 1}, {7, 13, 5}, {31, 47, 37}, {67, 33, 129}, {17, 1, 1031}, {53, 71, 200}}

// packedSchedules are the configs of the test, less convert: tiles of
// both widths, one and two goroutines, split by rows and by columns,
// runs fixed and dealt.
var packedSchedules = []string{
	"vec=16,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=true",
	"vec=16,mr=6,nr_vecs=1,kc=64,mc=48,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=n,chunks=2,pack_a=true",
	"vec=16,mr=12,nr_vecs=2,kc=128,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true",
	"vec=8,mr=6,nr_vecs=2,kc=256,mc=96,nc=512,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=4,pack_a=true",
}

// packedSpecs returns the specs of the packed forms of tmpl in dt on
// this host: convert=pack (and dot for bf16 where the CPU has
// AVX512-BF16) of packedSchedules on packedShapes, in both forms.
func packedSpecs(t *testing.T, tmpl *kernels.Template, dt dtype.DType) []kerneltest.Spec {
	host := device.Host()
	converts := []string{"pack"}
	if host.CPU.ISA.AVX512BF16 {
		converts = append(converts, "dot") // for f16, the pack form
	}
	var specs []kerneltest.Spec
	for _, shape := range packedShapes {
		sp := tmpl.Space(shape, host)
		for _, s := range packedSchedules {
			for _, conv := range converts {
				cfg, err := sp.Parse(s + ",convert=" + conv)
				if err != nil {
					t.Fatal(err)
				}
				if !sp.Valid(cfg) {
					continue
				}
				specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape}, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
			}
		}
	}
	return specs
}

// TestPackedHalfKernels checks the 16-bit forms that convert while
// packing (packhalf.go), of GEMM and its epilogues, against the float64
// reference on every input set of the dtype.
func TestPackedHalfKernels(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the packed 16-bit forms are amd64 assembly")
	}
	for _, tmpl := range []*kernels.Template{&Template, &BiasTemplate, &BiasReLUTemplate} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				specs := packedSpecs(t, tmpl, dt)
				if len(specs) == 0 {
					t.Skip("no packed config runs here")
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}

// TestPlantedPairOrder checks that the reference check catches bf16 pairs
// packed in the wrong order for VDPBF16PS: B's high half first, so that
// a[2t] meets b[2t+1].
func TestPlantedPairOrder(t *testing.T) {
	host := device.Host()
	if runtime.GOARCH != "amd64" || !host.CPU.ISA.AVX512BF16 {
		t.Skip("needs AVX512-BF16")
	}
	swapPairs = true
	defer func() { swapPairs = false }()
	// 13 columns are a strip narrower than a tile's 32, packed in Go; 64
	// are two full strips, whose steps of two rows (K even: all of them)
	// the assembly packs.
	for _, shape := range [][]int{{7, 13, 5}, {5, 64, 8}} {
		sp := Template.Space(shape, host)
		cfg, err := sp.Parse(packedSchedules[0] + ",convert=dot")
		if err != nil {
			t.Fatal(err)
		}
		r := &kerneltest.ErrorCounter{TB: t}
		kerneltest.CheckDType(r, &Template, dtype.BF16, []kerneltest.Spec{{Config: cfg, Shape: shape}})
		if r.Errors == 0 {
			t.Errorf("%v: a kernel with B's pairs swapped passed the reference check", shape)
		}
	}
}

// TestSearchSpaceOfFloat32 checks that a float32 search sees one value of
// convert (every value is the same float32 kernel) and a 16-bit one all of
// them, each still valid in the template's full space.
func TestSearchSpaceOfFloat32(t *testing.T) {
	tmpl := Template
	target := cpu(2, device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true})
	shape := []int{64, 64, 64}
	full := tmpl.Space(shape, target)
	for _, c := range []struct {
		dt   dtype.DType
		want []string
	}{{dtype.F32, converts[:1]}, {"", converts[:1]}, {dtype.BF16, converts}, {dtype.F16, converts}} {
		sp := tmpl.SearchSpace(shape, c.dt, target)
		k, _ := sp.Knob(kernels.ConvertKnob)
		got := fmt.Sprint(k.Values)
		if want := fmt.Sprint(schedule.Enum(kernels.ConvertKnob, c.want...).Values); got != want {
			t.Errorf("%q: convert takes %s, want %s", c.dt, got, want)
		}
		if cfg, err := sp.Sample(rand.New(rand.NewPCG(1, 2))); err != nil || !full.Valid(cfg) {
			t.Errorf("%q: sampled %s (%v), not valid in the full space", c.dt, cfg, err)
		}
	}
}

// TestSearchSpaceHasNoCopies checks that every config a 16-bit search can
// propose for a value of convert other than copy runs that value's form
// (packed), not the copying form under another name, and that an f16
// search proposes no convert=dot (the pack form for f16).
func TestSearchSpaceHasNoCopies(t *testing.T) {
	target := cpu(2, device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true})
	r := rand.New(rand.NewPCG(3, 4))
	for _, shape := range [][]int{{1024, 1024, 1024}, {64, 64, 64}, {1, 7, 3}} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			sp := Template.SearchSpace(shape, dt, target)
			seen := map[string]int{}
			for range 200 {
				cfg, err := sp.Sample(r)
				if err != nil {
					t.Fatalf("%v %s: %v", shape, dt, err)
				}
				conv := cfg.Str(kernels.ConvertKnob)
				seen[conv]++
				if conv != "copy" && !packed(kernels.Kernel{Name: "K", Shape: shape, DType: dt, Config: cfg}) {
					t.Errorf("%v %s: %s runs the copying form", shape, dt, cfg)
				}
				if conv == "dot" && (dt != dtype.BF16 || cfg.Int("vec") != 16) {
					t.Errorf("%v %s: %s has no dot form", shape, dt, cfg)
				}
			}
			if seen["copy"] == 0 || seen["pack"] == 0 || (dt == dtype.BF16) != (seen["dot"] > 0) {
				t.Errorf("%v %s: values drawn %v", shape, dt, seen)
			}
		}
	}
}

// TestEstimateOfDot checks that the estimate, which a bf16 search's first
// batch is ranked by, expects a convert=dot config to run faster than the
// same config converting while packing: VDPBF16PS does twice the
// multiply-adds of an FMA.
func TestEstimateOfDot(t *testing.T) {
	target := cpu(2, device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true})
	shape := []int{1024, 1024, 1024}
	sp := Template.Space(shape, target)
	var ns [2]float64
	for i, conv := range []string{"pack", "dot"} {
		cfg, err := sp.Parse("vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=true,convert=" + conv)
		if err != nil {
			t.Fatal(err)
		}
		ns[i] = estimate(shape, target, cfg)
	}
	if ns[1] >= 0.7*ns[0] {
		t.Errorf("estimated %.0f ns with dot, %.0f ns with pack: want dot well below", ns[1], ns[0])
	}
}
