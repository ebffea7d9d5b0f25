package gemm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// exhaustive, from AUTOTUNE_EXHAUSTIVE=1, makes the generic test cross
// every micro-kernel with every schedule on more shapes; it takes much
// longer.
var exhaustive = os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1"

// genericTuned is the shape the generic test draws its configs for, as if
// they had been tuned there: it offers every kc up to 512, mc up to 384
// and nc up to 512.
var genericTuned = []int{200, 300, 300}

// genericShapes are the shapes every generic kernel is checked on: one
// element; one row and one column; every row tail of the tiles (M mod 12
// from 1 to 11, M mod 8, 6, 4); column tails of 1 to 31 beside whole
// vectors; K shorter than a vector, than kc, and past several slices of
// kc with a tail; shapes smaller and larger than genericTuned, and fewer
// tiles or strips than threads.
var genericShapes = [][]int{
	{1, 1, 1}, {1, 37, 5}, {13, 1, 7}, {5, 17, 3}, {7, 33, 65}, {12, 32, 64}, {11, 15, 2},
	{25, 47, 129}, {31, 100, 300}, {50, 16, 1}, {97, 255, 257}, {200, 300, 300}, {13, 513, 70}, {63, 9, 600},
}

// genericTiles are the micro-kernels (mr, nr_vecs) crossed with the
// schedules; genericAsmTiles those of micro=asm (a tile too large for 8
// lanes is left out there).
var (
	genericTiles    = [][2]int{{1, 1}, {4, 2}, {6, 1}, {2, 2}}
	genericAsmTiles = [][2]int{{12, 2}, {6, 2}, {8, 1}, {2, 2}}
)

// genericSchedules cross packing, unroll, every thread count from 1 to 4,
// both splits, runs fixed in advance and dealt from a counter, and blocks from the smallest to the largest genericTuned
// offers. The epilogue templates take the first two, also when exhaustive.
var genericSchedules = []string{
	"kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,split=m,chunks=2,pack_a=false,convert=copy",
	"kc=128,mc=48,nc=256,pack_b=false,unroll=1,threads=3,split=n,chunks=1,pack_a=false,convert=copy",
	"kc=64,mc=24,nc=256,pack_b=false,unroll=4,threads=1,split=m,chunks=1,pack_a=false,convert=copy",
	"kc=256,mc=96,nc=512,pack_b=true,unroll=2,threads=4,split=n,chunks=1,pack_a=false,convert=copy",
	"kc=512,mc=192,nc=512,pack_b=true,unroll=1,threads=4,split=m,chunks=1,pack_a=false,convert=copy",
	"kc=128,mc=48,nc=256,pack_b=true,unroll=1,threads=2,split=n,chunks=2,pack_a=false,convert=copy",
}

// genericTarget is the host's ISA with 4 cores, so that threads up to 4
// are offered, and fixed caches, so that the blocks above are.
func genericTarget() device.Target {
	isa := device.Host().CPU.ISA
	return device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: 4, ISA: isa, L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20}}
}

// genericConfigs returns the configs of tmpl the generic test checks:
// every micro-kernel crossed with the schedules, valid for genericTuned on
// genericTarget; vector widths the host lacks are left out.
func genericConfigs(t *testing.T, tmpl *kernels.Template) []schedule.Config {
	sp := tmpl.Space(genericTuned, genericTarget())
	scheds := genericSchedules
	if tmpl != &Template {
		scheds = scheds[:2]
	}
	var out []schedule.Config
	for _, vec := range vecs {
		for _, micro := range micros {
			tiles := genericTiles
			if micro == "asm" {
				tiles = genericAsmTiles
			}
			if exhaustive {
				tiles = nil
				for _, mr := range mrs {
					for _, nv := range nrVecs {
						tiles = append(tiles, [2]int{mr, nv})
					}
				}
			}
			for _, tile := range tiles {
				for i, sched := range scheds {
					if micro == "asm" {
						sched = strings.NewReplacer("unroll=4", "unroll=1", "unroll=2", "unroll=1").Replace(sched)
						if i%2 == 1 {
							// A packed: the odd schedules, with B in
							// place and packed, rows and runs of columns.
							sched = strings.Replace(sched, "pack_a=false,convert=copy", "pack_a=true,convert=copy", 1)
						}
					}
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,mr=%d,nr_vecs=%d,%s,micro=%s", vec, tile[0], tile[1], sched, micro))
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
		t.Fatalf("no generic config of %s is valid on this host", tmpl.Op.Name)
	}
	return out
}

// TestGenericKernels emits the shape-generic kernel of each config of
// genericConfigs, of Template and the epilogue templates, once (a
// micro=asm config also in its plain form, kernels.AMD64Plain), and for
// every test shape a wrapper with the driver's signature that calls it
// with that shape; builds and vets them in one module; and checks every
// (config, shape) against the float64 reference on random inputs, the
// output poisoned with NaN.
func TestGenericKernels(t *testing.T) {
	shapes := genericShapes
	if exhaustive {
		for _, m := range []int{2, 3, 9, 24, 48, 101} {
			for _, n := range []int{2, 8, 23, 31, 64, 65} {
				shapes = append(shapes, []int{m, n, 77})
			}
		}
	}
	// A form is a config, archsimd or, for micro=asm, also plain
	// (kernels.AMD64Plain).
	type form struct {
		cfg   schedule.Config
		plain bool
	}
	type job struct {
		name string
		tmpl *kernels.Template
		form
	}
	jobsOf := make(map[string][]job) // by shape
	m := kerneltest.NewModule(t)
	count := 0
	for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
		var forms []form
		for _, cfg := range genericConfigs(t, tmpl) {
			forms = append(forms, form{cfg, false})
			if cfg.Str("micro") == "asm" {
				forms = append(forms, form{cfg, true})
			}
		}
		for _, fm := range forms {
			cfg := fm.cfg
			generic := fmt.Sprintf("G%d", count)
			count++
			var asm []byte
			if fm.plain {
				asm = tmpl.Go.EmitGo(m.File(shapes[0]), kernels.Kernel{Name: generic, Shape: nil, Config: cfg, Arch: kernels.AMD64Plain})
			} else {
				asm = tmpl.Go.EmitGo(m.File(shapes[0]), kernels.Kernel{Name: generic, Config: cfg, Arch: kernels.AMD64})
			}
			m.Asm(shapes[0], asm)
			ins, _ := tmpl.Args(shapes[0])
			bias := len(ins) == 3
			for _, shape := range shapes {
				name := fmt.Sprintf("%s_%s", generic, strings.ReplaceAll(kernels.FormatShape(shape), "x", "_"))
				params := []jen.Code{jen.Id("c"), jen.Id("a"), jen.Id("b")}
				if bias {
					params = append(params, jen.Id("bias"))
				}
				args := slices.Clone(params)
				for _, d := range shape {
					args = append(args, jen.Lit(d))
				}
				m.File(shape).Func().Id(name).Params(jen.List(params...).Index().Float32()).Block(
					jen.Id(generic).Call(args...))
				ins, out := tmpl.Args(shape)
				m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out})
				key := kernels.FormatShape(shape)
				jobsOf[key] = append(jobsOf[key], job{name, tmpl, fm})
			}
		}
	}
	start := time.Now()
	dir, bin := m.Build()
	t.Logf("built %d generic kernels for %d shapes in %v", count, len(shapes), time.Since(start).Round(time.Millisecond))
	t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })

	rng := rand.New(rand.NewPCG(7, 8))
	var jobs strings.Builder
	ins := make(map[string][][]float32)
	for _, shape := range shapes {
		mm, n, k := shape[0], shape[1], shape[2]
		key := kernels.FormatShape(shape)
		in := [][]float32{random(mm*k, rng), random(k*n, rng), random(n, rng)}
		ins[key] = in
		var files []string
		for i, x := range in {
			file := filepath.Join(dir, fmt.Sprintf("in%d_%s.bin", i, key))
			kerneltest.WriteFloats(t, file, x)
			files = append(files, file)
		}
		for _, j := range jobsOf[key] {
			if a, _ := j.tmpl.Args(shape); len(a) == 3 {
				fmt.Fprintf(&jobs, "%s %s\n", j.name, strings.Join(files, " "))
			} else {
				fmt.Fprintf(&jobs, "%s %s %s\n", j.name, files[0], files[1])
			}
		}
	}
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, shape := range shapes {
		key := kernels.FormatShape(shape)
		n := shape[1]
		wants := make(map[*kernels.Template][]float64)
		got := make([]float32, shape[0]*n)
		for _, j := range jobsOf[key] {
			want, ok := wants[j.tmpl]
			if !ok {
				want = make([]float64, len(got))
				j.tmpl.Reference(shape, ins[key], want)
				wants[j.tmpl] = want
			}
			rel, abs := j.tmpl.Tolerance(shape, dtype.F32)
			run.Next(t, j.name, got)
			if c := kerneltest.Compare(got, want, rel, abs); c.Bad > 0 {
				what := ""
				if j.plain {
					what = " (plain)"
				}
				t.Errorf("%s, generic %s %s%s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g",
					key, j.tmpl.Op.Name, j.cfg, what, c.Bad, len(got), c.First/n, c.First%n, got[c.First], want[c.First])
			}
		}
	}
	run.Wait(t)
}
