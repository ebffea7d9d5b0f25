package attention

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// neoverse is an arm64 target: two cores of NEON.
var neoverse = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Neoverse-N1", Cores: 2,
	ISA: device.ISA{ASIMD: true, FP16: true}}}

// arm64Shapes are the shapes of TestARM64Kernels: one element (S = 1,
// where only the scalar and generic kernels run: a NEON block holds 4
// query rows at least); S and D odd and shorter than a tile; primes that
// end in a partial key block and a partial vector of query lanes; D of
// 64, and of 17, a tail of every tile of D.
var arm64Shapes = [][]int{{1, 1, 1, 1}, {1, 2, 5, 3}, {2, 1, 7, 16}, {1, 3, 13, 9}, {1, 1, 37, 64}, {1, 2, 64, 17}}

// arm64Schedules are the NEON schedules of TestARM64Kernels: every exp,
// one and two goroutines, tiles of 1 to 12 keys and 1 to 4 vectors of
// query lanes (the largest 32 registers hold), blocks smaller and larger
// than the tiles.
var arm64Schedules = []string{
	"br=8,bc=8,exp=poly5,threads=1,mr=6,nv=2",
	"br=4,bc=16,exp=poly4,threads=2,mr=12,nv=1",
	"br=16,bc=4,exp=f64,threads=1,mr=4,nv=4",
	"br=32,bc=32,exp=poly5,threads=2,mr=12,nv=2",
	"br=4,bc=1,exp=poly5,threads=1,mr=1,nv=1",
	"br=16,bc=64,exp=poly4,threads=1,mr=6,nv=4",
}

// arm64Configs returns the NEON configs of arm64Schedules valid at shape
// on neoverse (the space offers blocks up to S only), and a scalar config
// (the same Go as on amd64).
func arm64Configs(t *testing.T, shape []int) []schedule.Config {
	sp := Template.Space(shape, neoverse)
	texts := []string{"vec=1,br=1,bc=1,exp=poly5,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy"}
	for _, s := range arm64Schedules {
		texts = append(texts, "vec=4,layout=lanes,micro=asm,convert=copy,"+s)
	}
	var out []schedule.Config
	for _, text := range texts {
		if _, err := Template.Space(genericTuned, neoverse).Parse(text); err != nil {
			t.Fatal(err)
		}
		cfg, err := sp.Parse(text)
		if err != nil {
			continue // blocks longer than S, which the space does not offer
		}
		if sp.Valid(cfg) {
			out = append(out, cfg)
		}
	}
	return out
}

// TestARM64Kernels checks both templates' arm64 kernels, built for arm64
// and run natively or under emulation (skipped where neither can run):
// the NEON configs of arm64Configs on arm64Shapes, specialised, and
// those valid at genericTuned shape-generic on every shape, against the
// float64 reference on every input set with the output poisoned.
func TestARM64Kernels(t *testing.T) {
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			var specs []kerneltest.Spec
			neon := 0
			for _, shape := range arm64Shapes {
				for _, cfg := range arm64Configs(t, shape) {
					specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, ARM64: true})
					if cfg.Int("vec") > 1 {
						neon++
					}
				}
			}
			for _, cfg := range arm64Configs(t, genericTuned) {
				for _, shape := range arm64Shapes {
					specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, Generic: true, ARM64: true})
				}
			}
			if neon < len(arm64Schedules) {
				t.Fatalf("%d NEON kernels, fewer than the %d schedules", neon, len(arm64Schedules))
			}
			kerneltest.CheckDType(t, tmpl, dtype.F32, specs)
		})
	}
}

// TestARM64Space checks that the arm64 space offers NEON in assembly
// tiles only, without amd64's vectors, and that its default is NEON
// where a block holds a vector of query rows.
func TestARM64Space(t *testing.T) {
	shape := []int{1, 2, 64, 64}
	sp := Template.Space(shape, neoverse)
	neonAsm := 0
	for i := range sp.Size() {
		c := sp.At(i)
		if !sp.Valid(c) {
			continue
		}
		switch {
		case c.Int("vec") > 4:
			t.Fatalf("%s is valid on arm64", c)
		case c.Int("vec") == 4 && c.Str("micro") != "asm":
			t.Fatalf("%s, NEON in Go, is valid on arm64", c)
		case c.Int("vec") == 4:
			neonAsm++
		}
	}
	if neonAsm == 0 {
		t.Error("no NEON config on arm64")
	}
	for _, tt := range []struct {
		shape []int
		vec   int
	}{{shape, 4}, {[]int{1, 1, 5, 3}, 4}, {[]int{1, 1, 3, 8}, 1}} {
		c, err := Template.DefaultConfig(tt.shape, neoverse)
		if err != nil {
			t.Fatal(err)
		}
		if c.Int("vec") != tt.vec {
			t.Errorf("default on arm64 at %v = %s, want vec=%d", tt.shape, c, tt.vec)
		}
	}
}

// TestARM64Emit checks, without running anything, that a NEON kernel's
// assembly is for arm64: its tiles and softmax are codegen/neon's, and
// nothing of amd64's.
func TestARM64Emit(t *testing.T) {
	cfg, err := Template.Space([]int{1, 1, 64, 16}, neoverse).Parse("vec=4,br=8,bc=8,exp=poly5,threads=1,layout=lanes,mr=6,nv=2,micro=asm,convert=copy")
	if err != nil {
		t.Fatal(err)
	}
	src := string(Template.Go.EmitGo(golang.NewFile("k"), kernels.Kernel{Name: "K", Shape: []int{1, 1, 64, 16}, Config: cfg, Arch: kernels.ARM64}))
	for _, want := range []string{"VFMLA", "VLD1R", "FCMGT", "·KSoftmax(SB)", "·KScoresTile6(SB)", "·KValuesTile6(SB)"} {
		if !strings.Contains(src, want) {
			t.Errorf("NEON assembly has no %s", want)
		}
	}
	for _, amd := range []string{"VFMADD", "VZEROUPPER", "MOVQ"} {
		if strings.Contains(src, amd) {
			t.Errorf("NEON assembly has amd64's %s", amd)
		}
	}
}

// TestARM64HalfKernels checks the arm64 kernels of bf16 and f16, the
// float32 kernels on float32 copies converted in Go (vectorConfig): every
// other config of arm64Configs on halfShapes, specialised and
// shape-generic, under emulation where this is not arm64. A sample is
// enough: TestARM64Kernels checks the float32 kernels they wrap.
func TestARM64HalfKernels(t *testing.T) {
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			var specs []kerneltest.Spec
			for _, shape := range halfShapes {
				for i, cfg := range arm64Configs(t, shape) {
					if i%2 == 0 {
						specs = append(specs, kerneltest.Spec{Config: cfg, Shape: shape, ARM64: true},
							kerneltest.Spec{Config: cfg, Shape: shape, Generic: true, ARM64: true})
					}
				}
			}
			kerneltest.CheckDType(t, &TemplateCausal, dt, specs)
		})
	}
}
