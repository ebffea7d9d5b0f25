package gemm

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

var speed = flag.Bool("speed", false, "time good configs on 1024x1024x1024 against the naive baseline, and log the table")

// A genKernel is one generated kernel of a throw-away module: a config of
// tmpl (Template when nil), or a baseline of it when base is set.
type genKernel struct {
	name  string
	tmpl  *kernels.Template
	shape []int
	cfg   schedule.Config
	base  *kernels.Baseline
	plain bool // the plain form of a micro=asm config (kernels.AMD64Plain)
	arm64 bool // the arm64 kernel (kernels.ARM64); a module holds arm64 kernels or none
}

func (k genKernel) String() string {
	s := k.cfg.String()
	if k.base != nil {
		s = k.base.Name
	}
	if k.plain {
		s += " (plain)"
	}
	if k.arm64 {
		s += " (arm64)"
	}
	if k.tmpl != nil && k.tmpl.Op.Name != Template.Op.Name {
		s = k.tmpl.Op.Name + " " + s
	}
	return s
}

// template returns the template k belongs to.
func (k genKernel) template() *kernels.Template {
	if k.tmpl == nil {
		return &Template
	}
	return k.tmpl
}

// bias reports whether k takes a bias, a third input, as the epilogue
// templates' kernels do.
func (k genKernel) bias() bool {
	ins, _ := k.template().Args(k.shape)
	return len(ins) == 3
}

// epilogueTemplates are the templates TestKernels checks besides Template.
// Their kernels differ from Template's only in the store of the last slice
// of K, so they are checked on the -short grid, which still crosses every
// micro-kernel with packing on and off, one and two threads, unroll 1 and
// 4, and short tiles.
var epilogueTemplates = []*kernels.Template{&BiasTemplate, &BiasReLUTemplate}

// testShapes are the shapes every config of the grid is checked on: one
// element; tails in M, N and K at once, over several blocks of each; one row
// and one column; a tile narrower than a vector; K of 1.
var testShapes = [][]int{{1, 1, 1}, {1023, 517, 259}, {1, 4096, 1}, {17, 1, 33}, {64, 64, 1}}

// schedules are crossed with every micro-kernel (vec × mr × nr_vecs) so that
// each meets packing on and off, one and two threads, every unroll and two
// sets of blocks: the smallest, which split every test shape into several
// blocks with tails, and middling ones; the assembly micro-kernel, B packed
// and in place, A packed and in place; threads splitting rows and columns. -short keeps the first
// three.
var schedules = []string{
	"kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
	"kc=64,mc=24,nc=256,pack_b=false,unroll=4,threads=2,micro=go,split=m,chunks=4,pack_a=false,convert=copy",
	"kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=2,micro=asm,split=n,chunks=2,pack_a=true,convert=copy",
	"kc=256,mc=96,nc=512,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=true,convert=copy",
	"kc=256,mc=96,nc=512,pack_b=true,unroll=2,threads=2,micro=go,split=n,chunks=1,pack_a=false,convert=copy",
	"kc=256,mc=96,nc=512,pack_b=false,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
	"kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=8,pack_a=false,convert=copy",
	"kc=64,mc=48,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
}

// grid returns the valid configs on target of the micro-kernels crossed
// with schedules. A schedule a shape does not offer (two threads on one
// row, a block larger than the matrix) is left out for that shape.
func grid(t *testing.T, shape []int, target device.Target, short bool) []schedule.Config {
	sp := Template.Space(shape, target)
	scheds := schedules
	if short {
		scheds = scheds[:3]
	}
	vecValues, nrValues := vecs, nrVecs
	if kernels.ArchOf(target) == kernels.ARM64 {
		vecValues, nrValues = neonVecs, neonNRVecs
	}
	var out []schedule.Config
	for _, vec := range vecValues {
		for _, mr := range mrs {
			for _, nv := range nrValues {
				for _, s := range scheds {
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,mr=%d,nr_vecs=%d,%s", vec, mr, nv, s))
					if err != nil {
						t.Fatal(err)
					}
					if sp.Valid(cfg) {
						out = append(out, cfg)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no valid config for %v on %s", shape, target.Fingerprint())
	}
	return out
}

// TestKernels generates the grid of configs, the plain forms of its
// micro=asm configs and the baselines but cgo's for every test shape into one module, builds and vets it once with
// GOEXPERIMENT=simd, and checks every kernel against the float64 reference
// on random inputs, with the output poisoned with NaN beforehand.
func TestKernels(t *testing.T) {
	host := device.Host()
	var ks []genKernel
	for _, shape := range testShapes {
		for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
			short := testing.Short() || tmpl != &Template
			for _, cfg := range grid(t, shape, host, short) {
				ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, cfg: cfg})
				if cfg.Str("micro") == "asm" {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, cfg: cfg, plain: true})
				}
			}
			for i, b := range tmpl.Baselines {
				// Go builds no Go assembly in a package that uses cgo: the
				// cgo baselines (tags onednn, openblas) are TestOneDNN's
				// and TestOpenBLAS's.
				if b.Skipped(shape) == "" && !b.Cgo {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), tmpl: tmpl, shape: shape, base: &tmpl.Baselines[i]})
				}
			}
		}
	}
	checkKernels(t, ks)
}

// checkKernels generates ks, kernels of testShapes (or of others), into one module, builds
// and vets it once with GOEXPERIMENT=simd, and checks every kernel against
// its template's float64 reference on random inputs, with the output
// poisoned with NaN beforehand: one subtest per shape.
func checkKernels(t *testing.T, ks []genKernel) {
	var shapes [][]int // of ks, in order
	for _, k := range ks {
		if !slices.ContainsFunc(shapes, func(s []int) bool { return slices.Equal(s, k.shape) }) {
			shapes = append(shapes, k.shape)
		}
	}
	start := time.Now()
	m, dir, bin := buildModule(t, ks)
	t.Logf("generated and built %d kernels in %v", len(ks), time.Since(start).Round(time.Millisecond))

	t.Run("vet", func(t *testing.T) {
		m.Vet(dir)
	})

	var jobs strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	biasRNG := rand.New(rand.NewPCG(3, 4)) // Template's inputs do not depend on the epilogues'
	type inputs struct{ a, b, bias []float32 }
	ins := make(map[string]inputs)
	for _, shape := range shapes {
		m, n, k := shape[0], shape[1], shape[2]
		key := kernels.FormatShape(shape)
		in := inputs{random(m*k, rng), random(k*n, rng), random(n, biasRNG)}
		ins[key] = in
		fileA, fileB, fileBias := filepath.Join(dir, "a_"+key+".bin"), filepath.Join(dir, "b_"+key+".bin"), filepath.Join(dir, "bias_"+key+".bin")
		kerneltest.WriteFloats(t, fileA, in.a)
		kerneltest.WriteFloats(t, fileB, in.b)
		kerneltest.WriteFloats(t, fileBias, in.bias)
		for _, kr := range ks {
			if slices.Equal(kr.shape, shape) {
				if kr.bias() {
					fmt.Fprintf(&jobs, "%s %s %s %s\n", kr.name, fileA, fileB, fileBias)
				} else {
					fmt.Fprintf(&jobs, "%s %s %s\n", kr.name, fileA, fileB)
				}
			}
		}
	}
	start = time.Now()
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, shape := range shapes {
		t.Run(kernels.FormatShape(shape), func(t *testing.T) {
			m, n, _ := shape[0], shape[1], shape[2]
			in := ins[kernels.FormatShape(shape)]
			wants := make(map[*kernels.Template][]float64)
			got := make([]float32, m*n)
			worst, worstCfg, count := 0.0, "", 0
			for _, kr := range ks {
				if !slices.Equal(kr.shape, shape) {
					continue
				}
				tmpl := kr.template()
				want, ok := wants[tmpl]
				if !ok {
					want = make([]float64, m*n)
					tmpl.Reference(shape, [][]float32{in.a, in.b, in.bias}, want)
					wants[tmpl] = want
				}
				rel, abs := tmpl.Tolerance(shape, dtype.F32)
				count++
				run.Next(t, kr.name, got)
				c := kerneltest.Compare(got, want, rel, abs)
				if c.Bad > 0 {
					t.Errorf("%s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g (rel %.2g, abs %.2g)",
						kr, c.Bad, len(got), c.First/n, c.First%n, got[c.First], want[c.First], rel, abs)
				}
				if c.Worst > worst {
					worst, worstCfg = c.Worst, kr.String()
				}
			}
			rel, abs := Template.Tolerance(shape, dtype.F32)
			t.Logf("%d kernels; largest error %.3f of the tolerance (rel %.2g, abs %.2g), by %s", count, worst, rel, abs, worstCfg)
		})
	}
	run.Wait(t)
	t.Logf("ran and checked in %v", time.Since(start).Round(time.Millisecond))
}

// random returns n values drawn as the tuner's harness draws them:
// uniform in ±[0.125, 4], never zero.
func random(n int, rng *rand.Rand) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		x := 0.125 + rng.Float64()*(inputBound-0.125)
		if rng.IntN(2) == 0 {
			x = -x
		}
		xs[i] = float32(x)
	}
	return xs
}

// TestSpeed is a report, not a check: with -speed it times good configs on
// 1024x1024x1024 against the naive baseline in one process, and logs the
// table.
func TestSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -speed to time kernels")
	}
	shape := []int{1024, 1024, 1024}
	host := device.Host()
	sp := Template.Space(shape, host)
	ks := []genKernel{{name: "K0", shape: shape, base: &Template.Baselines[0]}}
	for _, text := range []string{
		"vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=8,nr_vecs=1,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=6,nr_vecs=1,kc=256,mc=96,nc=1024,pack_b=true,unroll=2,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=false,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=8,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=8,mr=8,nr_vecs=1,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=1,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=16,mr=8,nr_vecs=2,kc=512,mc=192,nc=1024,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=8,mr=6,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy",
	} {
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg})
		}
	}
	_, _, bin := buildModule(t, ks)
	kerneltest.Bench(t, bin, 5)
}

// buildModule writes ks, a table of them and the driver into a throw-away
// module, builds it with GOEXPERIMENT=simd (for arm64 if ks are arm64
// kernels) and returns the module, its directory and the binary.
func buildModule(t *testing.T, ks []genKernel) (m *kerneltest.Module, dir, bin string) {
	t.Helper()
	m = kerneltest.NewModule(t)
	if len(ks) > 0 && ks[0].arm64 {
		m.SetArch(kernels.ARM64)
	}
	for _, k := range ks {
		f := m.File(k.shape)
		if k.base != nil {
			m.Require(k.base.Requires...)
			k.base.EmitGo(f, k.name, k.shape)
		} else {
			var asm []byte
			switch {
			case k.arm64:
				asm = k.template().Go.EmitGo(f, kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: kernels.ARM64})
			case k.plain:
				asm = k.template().Go.EmitGo(f, kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: kernels.AMD64Plain})
			default:
				asm = k.template().Go.EmitGo(f, kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: kernels.AMD64})
			}
			m.Asm(k.shape, asm)
		}
		ins, out := k.template().Args(k.shape)
		m.Add(kerneltest.Kernel{Name: k.name, Config: k.String(), Ins: ins, Out: out, FLOPs: k.template().FLOPs(k.shape)})
	}
	dir, bin = m.Build()
	return m, dir, bin
}
