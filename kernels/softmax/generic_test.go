package softmax

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/schedule"
)

// exhaustive, from AUTOTUNE_EXHAUSTIVE=1, makes the generic test cross
// every config of the grid with more shapes; it takes much longer.
var exhaustive = os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1"

// genericTuned is the shape the generic test draws its configs for, as if
// they had been tuned there; the test shapes are smaller and larger.
var genericTuned = []int{64, 100}

// genericRows and genericCols make the shapes every generic kernel is
// checked on: one row and one column, primes, every tail of 8 and 16
// lanes that the unrolls leave (1, 7, 9, 15, 17, 31, 33…), fewer rows than
// the chunks of the threads, and more than the tuned shape.
var (
	genericRows = []int{1, 3, 17, 64, 131}
	genericCols = []int{1, 5, 8, 15, 16, 17, 31, 33, 100, 257, 1023}
)

// genericSchedules are crossed with every vec the host has and both
// algorithms: every unroll and exp, threads 1 to 4, and chunks of rows
// larger than some test shapes; with 8 lanes the assembly takes unroll 1
// and 2 only, each exp at unroll 2.
var genericSchedules = []string{
	"unroll=1,exp=poly5,threads=1,rows_per_chunk=1",
	"unroll=4,exp=poly4,threads=2,rows_per_chunk=16",
	"unroll=8,exp=f64,threads=3,rows_per_chunk=4",
	"unroll=2,exp=poly5,threads=4,rows_per_chunk=16",
	"unroll=2,exp=poly4,threads=1,rows_per_chunk=1",
}

// genericConfigs returns the configs of the generic test, valid on the
// host (with at least 4 cores, so that threads up to 4 are offered) for
// genericTuned.
func genericConfigs(t *testing.T) []schedule.Config {
	sp := genericSpace()
	scheds := genericSchedules
	if exhaustive {
		scheds = nil
		for _, u := range unrolls {
			for _, e := range exps {
				for _, th := range [][2]int{{1, 1}, {2, 1}, {2, 16}, {3, 4}, {4, 16}} {
					scheds = append(scheds, fmt.Sprintf("unroll=%d,exp=%s,threads=%d,rows_per_chunk=%d", u, e, th[0], th[1]))
				}
			}
		}
	}
	var out []schedule.Config
	for _, vec := range vecs {
		for _, algo := range algos {
			for _, s := range scheds {
				for _, form := range forms {
					cfg, err := sp.Parse(fmt.Sprintf("vec=%d,algo=%s,%s,code=%s,prefetch=%s,convert=block,store=cached", vec, algo, s, form[0], form[1]))
					if err != nil {
						t.Fatal(err)
					}
					if err := sp.Check(cfg); err != nil {
						if form[0] == "go" {
							t.Logf("skipping %s: %v", cfg, err) // a vector width the host lacks
						}
						continue // or a combination the assembly does not take
					}
					out = append(out, cfg)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no generic config is valid on this host")
	}
	return out
}

// TestGenericKernels emits the shape-generic kernel of each config of
// genericConfigs once, and for every test shape a wrapper with the
// driver's signature that calls it with that shape, builds and vets them
// in one module, and checks every (config, shape) against the float64
// reference on random, -Inf and tailmax inputs, the output poisoned with NaN.
func TestGenericKernels(t *testing.T) {
	var shapes [][]int
	for _, r := range genericRows {
		for _, c := range genericCols {
			shapes = append(shapes, []int{r, c})
		}
	}
	if exhaustive {
		// Every other tail of 8 and 16 lanes and of their unrolls, on one
		// row, and chunks of rows on either side of 64.
		for _, c := range []int{2, 3, 4, 6, 7, 9, 12, 24, 32, 47, 48, 63, 64, 65, 96, 97, 4099} {
			shapes = append(shapes, []int{1, c})
		}
		for _, r := range []int{2, 4, 5, 63, 65, 128} {
			shapes = append(shapes, []int{r, 19})
		}
	}
	var forms []genericForm
	for _, cfg := range genericConfigs(t) {
		forms = append(forms, genericForm{cfg, kernels.AMD64})
		// A code=asm config with goroutines is also emitted in its plain
		// form (kernels.AMD64Plain), the one whose Go differs.
		if cfg.Str("code") == "asm" && cfg.Int("threads") > 1 {
			forms = append(forms, genericForm{cfg, kernels.AMD64Plain})
		}
	}
	checkGeneric(t, shapes, forms)
}

// A genericForm is a config of a generic kernel and the architecture and
// form of its code.
type genericForm struct {
	cfg  schedule.Config
	arch kernels.Arch
}

// checkGeneric emits the shape-generic kernel of each form once, and for
// every shape a wrapper with the driver's signature that calls it with
// that shape, builds and vets them in one module (for arm64 if the forms
// are), and checks every (form, shape) against the float64 reference on
// random, -Inf and tailmax inputs, the output poisoned with NaN.
func checkGeneric(t *testing.T, shapes [][]int, forms []genericForm) {
	m := kerneltest.NewModule(t)
	if forms[0].arch == kernels.ARM64 {
		m.SetArch(kernels.ARM64)
	}
	type job struct {
		name  string
		cfg   schedule.Config
		shape []int
	}
	var jobsOf = make(map[string][]job) // by shape
	for i, fm := range forms {
		cfg := fm.cfg
		generic := fmt.Sprintf("G%d", i)
		m.Asm(shapes[0], Template.Go.EmitGo(m.File(shapes[0]), kernels.Kernel{Name: generic, Config: cfg, Arch: fm.arch}))
		for _, shape := range shapes {
			name := fmt.Sprintf("%s_%dx%d", generic, shape[0], shape[1])
			dst, src := jen.Id("dst"), jen.Id("src")
			m.File(shape).Func().Id(name).Params(jen.List(dst, src).Index().Float32()).Block(
				jen.Id(generic).Call(dst, src, jen.Lit(shape[0]), jen.Lit(shape[1])))
			ins, out := Template.Args(shape)
			m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out})
			key := kernels.FormatShape(shape)
			jobsOf[key] = append(jobsOf[key], job{name, cfg, shape})
		}
	}
	dir, bin := m.Build()
	t.Logf("%d generic kernels, %d shapes", len(forms), len(shapes))
	t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })

	rng := rand.New(rand.NewPCG(5, 6))
	var jobs strings.Builder
	inputs := make(map[string][]float32)
	kinds := []string{"random", "neginf", "tailmax"}
	for _, shape := range shapes {
		key := kernels.FormatShape(shape)
		for _, kind := range kinds {
			file := filepath.Join(dir, "in_"+key+"_"+kind+".bin")
			inputs[key+"/"+kind] = input(shape, kind, rng)
			kerneltest.WriteFloats(t, file, inputs[key+"/"+kind])
			for _, j := range jobsOf[key] {
				fmt.Fprintf(&jobs, "%s %s\n", j.name, file)
			}
		}
	}
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, shape := range shapes {
		key := kernels.FormatShape(shape)
		for _, kind := range kinds {
			in := inputs[key+"/"+kind]
			want := make([]float64, len(in))
			Template.Reference(shape, [][]float32{in}, want)
			rel, abs := Template.Tolerance(shape, dtype.F32)
			got := make([]float32, len(in))
			for _, j := range jobsOf[key] {
				run.Next(t, j.name, got)
				if c := kerneltest.CompareNaN(got, want, rel, abs); c.Bad > 0 {
					t.Errorf("%s, %s input, generic %s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g",
						key, kind, j.cfg, c.Bad, len(got), c.First/shape[1], c.First%shape[1], got[c.First], want[c.First])
				}
			}
		}
	}
	run.Wait(t)
}

// genericSpace is the space genericConfigs draws from: genericTuned's on
// the host with at least 4 cores.
func genericSpace() *schedule.Space {
	c := *device.Host().CPU
	c.Cores = max(c.Cores, 4)
	return Template.Space(genericTuned, device.Target{Name: "cpu", CPU: &c})
}
