package attention

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
// more block pairs and tiles with more shapes; it takes much longer.
var exhaustive = os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1"

// genericTuned is the shape the generic test draws its configs for, as if
// they had been tuned there: it offers every block size.
var genericTuned = []int{1, 2, 64, 64}

// genericShapes are the shapes every generic kernel is checked on: one
// element; S and D of 1; S shorter than every block but 1 and primes that
// leave a partial block of every size; D shorter than a vector, and tails
// of 8 and 16 lanes and of the register tiles (1, 3, 9, 17, 31, 33, 80);
// fewer units than threads (S = 1, 5); batches and heads; shapes smaller
// and larger than genericTuned.
var genericShapes = [][]int{
	{1, 1, 1, 1}, {1, 1, 1, 17}, {1, 2, 5, 3}, {2, 1, 7, 16}, {1, 3, 13, 9}, {1, 1, 33, 31},
	{2, 2, 40, 8}, {1, 1, 64, 64}, {1, 1, 100, 80}, {1, 2, 131, 33}, {3, 1, 17, 1},
}

// genericSchedules are crossed with every vec the host has, in the rows
// layout and in the lanes layout with Go and assembly tiles (the first
// tile of genericLanesTiles or genericAsmTiles valid there): blocks
// larger than most test shapes' S, every exp and threads 1 to 4.
var genericSchedules = []string{
	"br=64,bc=32,exp=poly5,threads=2",
	"br=16,bc=64,exp=poly4,threads=3",
	"br=32,bc=8,exp=f64,threads=1",
	"br=16,bc=16,exp=poly5,threads=4",
}

var (
	genericLanesTiles = [][2]int{{4, 2}, {6, 1}, {2, 2}, {1, 1}}
	genericAsmTiles   = [][2]int{{12, 2}, {6, 2}, {8, 1}, {4, 1}}
)

// genericConfigs returns the configs of tmpl the generic test checks,
// valid for genericTuned on the host's ISA with 4 cores.
func genericConfigs(t *testing.T, tmpl *kernels.Template) []schedule.Config {
	isa := device.Host().CPU.ISA
	sp := tmpl.Space(genericTuned, device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: 4, ISA: isa}})
	scheds := genericSchedules
	if exhaustive {
		scheds = nil
		for _, br := range blockSizes {
			for _, bc := range blockSizes {
				for _, th := range []int{1, 3} {
					scheds = append(scheds, fmt.Sprintf("br=%d,bc=%d,exp=poly5,threads=%d", br, bc, th))
				}
			}
		}
	}
	var out []schedule.Config
	add := func(text string) bool {
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			out = append(out, cfg)
			return true
		}
		return false
	}
	for _, vec := range vecs {
		for _, sched := range scheds {
			point := fmt.Sprintf("vec=%d,%s", vec, sched)
			add(point + ",layout=rows,mr=1,nv=1,micro=go,convert=copy")
			for _, tile := range genericLanesTiles {
				if add(fmt.Sprintf("%s,layout=lanes,mr=%d,nv=%d,micro=go,convert=copy", point, tile[0], tile[1])) {
					break
				}
			}
			for _, tile := range genericAsmTiles {
				if add(fmt.Sprintf("%s,layout=lanes,mr=%d,nv=%d,micro=asm,convert=copy", point, tile[0], tile[1])) {
					break
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
// genericConfigs, of Template and TemplateCausal, once (a micro=asm config
// also in its plain form, kernels.AMD64Plain), and for every test
// shape a wrapper with the driver's signature that calls it with that
// shape; builds and vets them in one module; and checks every (config,
// shape) against the float64 reference on random and large inputs, the
// output poisoned with NaN.
func TestGenericKernels(t *testing.T) {
	shapes := genericShapes
	if exhaustive {
		for _, s := range []int{2, 3, 4, 8, 9, 15, 17, 63, 65, 129} {
			for _, d := range []int{2, 4, 7, 15, 24, 47, 64} {
				shapes = append(shapes, []int{1, 2, s, d})
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
	for _, tmpl := range []*kernels.Template{&Template, &TemplateCausal} {
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
			for _, shape := range shapes {
				name := fmt.Sprintf("%s_%s", generic, strings.ReplaceAll(kernels.FormatShape(shape), "x", "_"))
				args := []jen.Code{jen.Id("out"), jen.Id("q"), jen.Id("k"), jen.Id("v")}
				for _, d := range shape {
					args = append(args, jen.Lit(d))
				}
				m.File(shape).Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("q"), jen.Id("k"), jen.Id("v")).Index().Float32()).Block(
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

	rng := rand.New(rand.NewPCG(9, 10))
	var jobs strings.Builder
	ins := make(map[string][][]float32)
	for _, shape := range shapes {
		for _, kind := range inputKinds {
			key := kernels.FormatShape(shape)
			in := input(shape, kind, rng)
			ins[key+"/"+kind] = in
			var files []string
			for i, x := range in {
				file := filepath.Join(dir, fmt.Sprintf("in%d_%s_%s.bin", i, key, kind))
				kerneltest.WriteFloats(t, file, x)
				files = append(files, file)
			}
			for _, j := range jobsOf[key] {
				fmt.Fprintf(&jobs, "%s %s\n", j.name, strings.Join(files, " "))
			}
		}
	}
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, shape := range shapes {
		for _, kind := range inputKinds {
			key := kernels.FormatShape(shape)
			d := shape[3]
			wants := make(map[*kernels.Template][]float64)
			_, n := Template.Args(shape)
			got := make([]float32, n)
			for _, j := range jobsOf[key] {
				want, ok := wants[j.tmpl]
				if !ok {
					want = make([]float64, n)
					j.tmpl.Reference(shape, ins[key+"/"+kind], want)
					wants[j.tmpl] = want
				}
				rel, abs := j.tmpl.Tolerance(shape, dtype.F32)
				run.Next(t, j.name, got)
				if c := kerneltest.Compare(got, want, rel, abs); c.Bad > 0 {
					what := ""
					if j.plain {
						what = " (plain)"
					}
					t.Errorf("%s, %s input, generic %s %s%s: %d of %d outputs wrong; first at row %d, column %d: got %g, want %g",
						key, kind, j.tmpl.Op.Name, j.cfg, what, c.Bad, n, c.First/d, c.First%d, got[c.First], want[c.First])
				}
			}
		}
	}
	run.Wait(t)
}
