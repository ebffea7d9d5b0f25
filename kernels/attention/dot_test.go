package attention

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// dotShapes are the shapes of the VDPBF16PS form's test. Its 16-lane
// tiles need blocks of 16 query rows, so S ≥ 16: S prime and a block's
// tail in S (blocks of an odd number of keys, whose last pair of values
// and weights is zero in its high half), D odd (the last pair of D's
// high half zero), 1, small, 64 (v's pairs interleaved in assembly
// only) and 21 (in assembly, then in Go).
var dotShapes = [][]int{{1, 1, 16, 3}, {1, 2, 17, 5}, {2, 1, 37, 7}, {1, 3, 37, 64}, {1, 1, 19, 1}, {1, 2, 23, 21}}

// dotSchedules are the configs of the test, less convert: tiles of one
// and two vectors, a block of keys with a rest (bc mod mr), single-key
// tiles, blocks of one key (a pair each), the assembly softmax (poly4,
// poly5) and the Go one (f64), one and two goroutines.
var dotSchedules = []string{
	"vec=16,br=16,bc=16,exp=poly5,threads=1,layout=lanes,mr=6,nv=1,micro=asm",
	"vec=16,br=32,bc=32,exp=poly4,threads=2,layout=lanes,mr=12,nv=2,micro=asm",
	"vec=16,br=16,bc=4,exp=f64,threads=2,layout=lanes,mr=4,nv=1,micro=asm",
	"vec=16,br=32,bc=8,exp=poly5,threads=1,layout=lanes,mr=1,nv=2,micro=asm",
	"vec=16,br=16,bc=1,exp=poly4,threads=2,layout=lanes,mr=1,nv=1,micro=asm",
}

// dotSpecs returns the specs of convert=dot of tmpl on this host:
// dotSchedules on dotShapes, in both forms (archsimd Go and plain Go
// around the assembly).
func dotSpecs(t *testing.T, tmpl *kernels.Template) []kerneltest.Spec {
	host := device.Host()
	var specs []kerneltest.Spec
	for _, shape := range dotShapes {
		sp := tmpl.Space(shape, host)
		for _, s := range dotSchedules {
			cfg, err := sp.Parse(s + ",convert=dot")
			if err != nil || !sp.Valid(cfg) {
				continue // a block this shape does not offer
			}
			specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape}, kerneltest.Spec{Config: cfg, Shape: shape, Plain: true})
		}
	}
	return specs
}

// TestDotKernels checks the VDPBF16PS form (dot.go) of both templates in
// bf16, and the copying form f16 runs for convert=dot, against the
// float64 reference on every input set of the dtype, output poisoned.
func TestDotKernels(t *testing.T) {
	if runtime.GOARCH != "amd64" || !device.Host().CPU.ISA.AVX512BF16 {
		t.Skip("needs AVX512-BF16")
	}
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			t.Run(fmt.Sprintf("%s/%s", tmpl.Op.Name, dt), func(t *testing.T) {
				specs := dotSpecs(t, tmpl)
				if len(specs) == 0 {
					t.Fatal("no convert=dot config is valid on the test shapes")
				}
				kerneltest.CheckDType(t, tmpl, dt, specs)
			})
		}
	}
}

// TestDotPlantedPairOrder checks that the reference check catches bf16
// pairs packed in the wrong order for VDPBF16PS, high half first: k's
// pairs of D, so that q[2t] meets k[2t+1], and v's pairs of keys, so
// that the weight of key 2t meets v's row 2t+1.
func TestDotPlantedPairOrder(t *testing.T) {
	host := device.Host()
	if runtime.GOARCH != "amd64" || !host.CPU.ISA.AVX512BF16 {
		t.Skip("needs AVX512-BF16")
	}
	shape := dotShapes[3]
	cfg, err := Template.Space(shape, host).Parse(dotSchedules[0] + ",convert=dot")
	if err != nil {
		t.Fatal(err)
	}
	for _, plant := range []struct {
		name string
		swap *bool
	}{{"k", &swapPairs}, {"v", &swapValuePairs}} {
		t.Run(plant.name, func(t *testing.T) {
			*plant.swap = true
			defer func() { *plant.swap = false }()
			r := &kerneltest.ErrorCounter{TB: t}
			kerneltest.CheckDType(r, &Template, dtype.BF16, []kerneltest.Spec{{Config: cfg, Shape: shape}})
			if r.Errors == 0 {
				t.Errorf("a kernel with %s's pairs swapped passed the reference check", plant.name)
			}
		})
	}
}

// TestSearchSpaceHasNoCopies checks that every convert=dot config a bf16
// search can propose is the VDPBF16PS form (dotForm), not the copying
// form under a second name, and that an f16 search proposes none.
func TestSearchSpaceHasNoCopies(t *testing.T) {
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20,
		ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: true}}}
	r := rand.New(rand.NewPCG(5, 6))
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		for _, shape := range [][]int{{1, 8, 1024, 64}, {2, 3, 17, 5}} {
			for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
				sp := tmpl.SearchSpace(shape, dt, target)
				dots := 0
				for range 300 {
					cfg, err := sp.Sample(r)
					if err != nil {
						t.Fatalf("%s %v %s: %v", tmpl.Op.Name, shape, dt, err)
					}
					if cfg.Str(kernels.ConvertKnob) != kernels.ConvertDot {
						continue
					}
					dots++
					if !dotForm(kernels.Kernel{Name: "K", Shape: shape, DType: dt, Config: cfg}) {
						t.Errorf("%s %v %s: %s is not the dot form", tmpl.Op.Name, shape, dt, cfg)
					}
				}
				if (dt == dtype.BF16) != (dots > 0) {
					t.Errorf("%s %v %s: %d of 300 draws were convert=dot", tmpl.Op.Name, shape, dt, dots)
				}
			}
		}
	}
}
