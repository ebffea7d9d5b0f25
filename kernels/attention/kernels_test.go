package attention

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

var speed = flag.Bool("speed", false, "time a few configs on 1x8x1024x64 against the baselines, and log the table")

// A genKernel is one generated kernel of a throw-away module: a config of
// the template (TemplateCausal when causal is set), or a baseline of it
// when base is set.
type genKernel struct {
	name   string
	shape  []int
	cfg    schedule.Config
	base   *kernels.Baseline
	causal bool
	plain  bool // the plain form of a micro=asm config (kernels.AMD64Plain)
}

func (k genKernel) String() string {
	s := k.cfg.String()
	if k.base != nil {
		s = k.base.Name
	}
	if k.plain {
		s += " (plain)"
	}
	if k.causal {
		s = "causal " + s
	}
	return s
}

// tmpl returns the template k belongs to.
func (k genKernel) tmpl() *kernels.Template { return tmplOf(k.causal) }

func tmplOf(causal bool) *kernels.Template {
	if causal {
		return &TemplateCausal
	}
	return &Template
}

// testShapes are the shapes every config of the grid is checked on: one
// element; S and D shorter than a vector and multiples of no block size
// but 1; the S = 1000, which leaves a partial block of every size
// above 8 (D = 80 is five vectors of 16, ten of 8); batches and heads.
var testShapes = [][]int{{1, 1, 1, 1}, {1, 3, 7, 5}, {1, 1, 1000, 80}, {2, 3, 64, 64}}

// blockPairs are the (br, bc) pairs the grid crosses with every vec, exp
// and threads; a shape that does not offer a pair (a block larger than S)
// leaves it out. -short keeps the first three.
var blockPairs = [][2]int{{1, 1}, {4, 4}, {64, 32}, {16, 64}, {8, 16}}

// lanesTiles are the (mr, nv) register tiles the grid gives the lanes
// layout, one per point, in turn: every tile meets several vector widths,
// block pairs and thread counts without the grid doubling per tile.
var lanesTiles = [][2]int{{4, 2}, {2, 4}, {6, 1}, {1, 1}, {8, 1}, {2, 2}}

// asmTiles are lanesTiles for micro=asm: tiles past Go's register budget
// too, which 8-lane vectors skip.
var asmTiles = [][2]int{{12, 2}, {6, 4}, {8, 1}, {4, 2}, {1, 1}, {12, 1}, {2, 4}, {6, 2}}

// grid returns the valid configs on target of vec × exp × blockPairs ×
// threads 1 and 2, each in the rows layout, in the lanes layout with the
// next of lanesTiles that is valid there, and with the next of asmTiles in
// assembly.
func grid(t *testing.T, shape []int, target device.Target, short bool) []schedule.Config {
	sp := Template.Space(shape, target)
	pairs, threads := blockPairs, []int{1, 2}
	if short {
		pairs = pairs[:3]
	}
	var out []schedule.Config
	add := func(text string) bool {
		cfg, err := sp.Parse(text)
		if err != nil || !sp.Valid(cfg) {
			return false // a block size or thread count this shape or host does not offer
		}
		out = append(out, cfg)
		return true
	}
	next, nextAsm := 0, 0
	for _, vec := range vecs {
		for _, exp := range exps {
			for _, p := range pairs {
				for _, th := range threads {
					point := fmt.Sprintf("vec=%d,br=%d,bc=%d,exp=%s,threads=%d", vec, p[0], p[1], exp, th)
					add(point + ",layout=rows,mr=1,nv=1,micro=go,convert=copy")
					for range lanesTiles {
						tile := lanesTiles[next%len(lanesTiles)]
						next++
						if add(fmt.Sprintf("%s,layout=lanes,mr=%d,nv=%d,micro=go,convert=copy", point, tile[0], tile[1])) {
							break
						}
					}
					for range asmTiles {
						tile := asmTiles[nextAsm%len(asmTiles)]
						nextAsm++
						if add(fmt.Sprintf("%s,layout=lanes,mr=%d,nv=%d,micro=asm,convert=copy", point, tile[0], tile[1])) {
							break
						}
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

// inputKinds are the inputs kernels run on; see input.
var inputKinds = []string{"random", "large"}

// TestKernels generates the grid of configs, the plain forms of its
// micro=asm configs and the baselines for every test shape, of Template
// and of TemplateCausal, into one module, builds
// and vets it once with GOEXPERIMENT=simd, and checks every kernel against
// its template's float64 reference on every kind of input, with the output
// poisoned with NaN beforehand.
func TestKernels(t *testing.T) {
	host := device.Host()
	var ks []genKernel
	for _, causal := range []bool{false, true} {
		tm := tmplOf(causal)
		for _, shape := range testShapes {
			for _, cfg := range grid(t, shape, host, testing.Short()) {
				ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg, causal: causal})
				if cfg.Str("micro") == "asm" {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg, causal: causal, plain: true})
				}
			}
			for i := range tm.Baselines {
				// Go builds no Go assembly in a package that uses cgo: the
				// cgo baselines (tags onednn, openblas) have tests of
				// their own (onednn_test.go, openblas_test.go).
				if !tm.Baselines[i].Cgo {
					ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, base: &tm.Baselines[i], causal: causal})
				}
			}
		}
	}
	start := time.Now()
	dir, bin := buildModule(t, ks)
	t.Logf("generated and built %d kernels in %v", len(ks), time.Since(start).Round(time.Millisecond))

	t.Run("vet", func(t *testing.T) {
		kerneltest.Go(t, dir, "vet", ".")
	})

	type group struct {
		shape  []int
		kind   string
		ins    [][]float32
		causal bool
	}
	var groups []group
	var jobs strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range testShapes {
		for _, kind := range inputKinds {
			ins := input(shape, kind, rng)
			var files []string
			for i, in := range ins {
				file := filepath.Join(dir, fmt.Sprintf("in%d_%s_%s.bin", i, kernels.FormatShape(shape), kind))
				kerneltest.WriteFloats(t, file, in)
				files = append(files, file)
			}
			for _, causal := range []bool{false, true} {
				for _, k := range ks {
					if slices.Equal(k.shape, shape) && k.causal == causal {
						fmt.Fprintf(&jobs, "%s %s\n", k.name, strings.Join(files, " "))
					}
				}
				groups = append(groups, group{shape: shape, kind: kind, ins: ins, causal: causal})
			}
		}
	}
	start = time.Now()
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, g := range groups {
		name := kernels.FormatShape(g.shape) + "/" + g.kind
		if g.causal {
			name += "/causal"
		}
		t.Run(name, func(t *testing.T) {
			tm := tmplOf(g.causal)
			_, n := tm.Args(g.shape)
			d := g.shape[3]
			want := make([]float64, n)
			tm.Reference(g.shape, g.ins, want)
			rel, abs := tm.Tolerance(g.shape, dtype.F32)
			got := make([]float32, n)
			worst, worstCfg, count := 0.0, "", 0
			for _, kr := range ks {
				if !slices.Equal(kr.shape, g.shape) || kr.causal != g.causal {
					continue
				}
				count++
				run.Next(t, kr.name, got)
				c := kerneltest.Compare(got, want, rel, abs)
				if c.Bad > 0 {
					t.Errorf("%s: %d of %d outputs wrong; first at row %d, column %d: got %g, want %g (rel %.2g, abs %.2g)",
						kr, c.Bad, len(got), c.First/d, c.First%d, got[c.First], want[c.First], rel, abs)
				}
				if c.Worst > worst {
					worst, worstCfg = c.Worst, kr.String()
				}
			}
			t.Logf("%d kernels; largest error %.3f of the tolerance (rel %.2g, abs %.2g), by %s", count, worst, rel, abs, worstCfg)
		})
	}
	run.Wait(t)
	t.Logf("ran and checked in %v", time.Since(start).Round(time.Millisecond))
}

// input returns q, k and v of the given kind, never zero and never above
// inputBound in magnitude:
//
//	random  uniform in ±[0.125, 4], as the tuner's harness draws them
//	large   q uniform in [2, 4], each row of k one sign times [0.125, 4]:
//	        scores reach ±16·√D with gaps far past 88 between rows of k of
//	        opposite signs, so that most weights underflow to 0
func input(shape []int, kind string, rng *rand.Rand) [][]float32 {
	_, n := Template.Args(shape)
	d := shape[3]
	uniform := func(lo, hi float64) float32 { return float32(lo + rng.Float64()*(hi-lo)) }
	sign := func() float32 {
		if rng.IntN(2) == 0 {
			return -1
		}
		return 1
	}
	ins := make([][]float32, 3)
	for i := range ins {
		ins[i] = make([]float32, n)
	}
	q, k, v := ins[0], ins[1], ins[2]
	var rowSign float32
	for i := range n {
		if i%d == 0 {
			rowSign = sign()
		}
		v[i] = sign() * uniform(0.125, inputBound)
		switch kind {
		case "large":
			q[i] = uniform(2, inputBound)
			k[i] = rowSign * uniform(0.125, inputBound)
		default:
			q[i] = sign() * uniform(0.125, inputBound)
			k[i] = sign() * uniform(0.125, inputBound)
		}
	}
	return ins
}

// TestSpeed is a report, not a check: with -speed it times a few configs
// on 1x8x1024x64 against the baselines in one process, and logs the table.
func TestSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -speed to time kernels")
	}
	shape := []int{1, 8, 1024, 64}
	host := device.Host()
	sp := Template.Space(shape, host)
	var ks []genKernel
	for i := range Template.Baselines {
		ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, base: &Template.Baselines[i]})
	}
	for _, text := range []string{
		"vec=16,br=64,bc=64,exp=poly5,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=16,br=16,bc=32,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=poly4,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=f64,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=8,br=64,bc=64,exp=poly5,threads=2,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=1,br=64,bc=64,exp=poly5,threads=1,layout=rows,mr=1,nv=1,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=poly5,threads=1,layout=lanes,mr=2,nv=4,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=2,nv=4,micro=go,convert=copy",
		"vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=4,nv=2,micro=go,convert=copy",
		"vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=4,nv=2,micro=go,convert=copy",
		"vec=16,br=64,bc=32,exp=poly5,threads=2,layout=lanes,mr=8,nv=1,micro=go,convert=copy",
		"vec=8,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=1,micro=go,convert=copy",
		"vec=16,br=32,bc=64,exp=poly5,threads=1,layout=lanes,mr=12,nv=2,micro=asm,convert=copy",
		"vec=16,br=32,bc=64,exp=poly5,threads=2,layout=lanes,mr=12,nv=2,micro=asm,convert=copy",
		"vec=16,br=64,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=4,micro=asm,convert=copy",
		"vec=16,br=32,bc=32,exp=poly5,threads=2,layout=lanes,mr=8,nv=2,micro=asm,convert=copy",
		"vec=8,br=16,bc=64,exp=poly5,threads=2,layout=lanes,mr=6,nv=2,micro=asm,convert=copy",
	} {
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg})
		}
	}
	_, bin := buildModule(t, ks)
	kerneltest.Bench(t, bin, 7)
}

// buildModule writes ks, a table of them and the driver into a throw-away
// module, builds it with GOEXPERIMENT=simd and returns the module's
// directory and the binary.
func buildModule(t *testing.T, ks []genKernel) (dir, bin string) {
	t.Helper()
	m := kerneltest.NewModule(t)
	for _, k := range ks {
		f := m.File(k.shape)
		if k.base != nil {
			m.Require(k.base.Requires...)
			k.base.EmitGo(f, k.name, k.shape)
		} else {
			var asm []byte
			if k.plain {
				asm = k.tmpl().Go.EmitGo(f, kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: kernels.AMD64Plain})
			} else {
				asm = k.tmpl().Go.EmitGo(f, kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: kernels.AMD64})
			}
			m.Asm(k.shape, asm)
		}
		ins, out := k.tmpl().Args(k.shape)
		m.Add(kerneltest.Kernel{Name: k.name, Config: k.String(), Ins: ins, Out: out, FLOPs: k.tmpl().FLOPs(k.shape)})
	}
	return m.Build()
}
