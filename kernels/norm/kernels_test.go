package norm

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

// exhaustive, from AUTOTUNE_EXHAUSTIVE=1, crosses every knob value of the
// grid; it takes much longer.
var exhaustive = os.Getenv("AUTOTUNE_EXHAUSTIVE") == "1"

// templates are both CPU templates, each test runs on both.
var templates = []*kernels.Template{&RMSTemplate, &LayerTemplate}

// testShapes: one element; partial vectors of 8 and 16 lanes with few
// rows; rows of three whole vectors; a long row with a tail; a prime
// number of columns; one row longer than 4096.
var testShapes = [][]int{{1, 1}, {3, 17}, {7, 13}, {5, 48}, {33, 1023}, {11, 97}, {1, 4099}}

// A job is one kernel of a throw-away module, with its shape.
type job struct {
	name  string
	shape []int
	cfg   schedule.Config
}

// codeForms are the code, store and prefetch knobs, crossed with the
// grid.
var codeForms = []string{"code=go,store=cached,prefetch=false,convert=block", "code=asm,store=cached,prefetch=false,convert=block", "code=asm,store=stream,prefetch=true,convert=block"}

// layerForms are the code forms LayerNorm's algo is crossed with: the Go
// rows and one of the assembly's forms each, which keeps the grid at
// twice its size without assembly while both algorithms run in both
// assembly forms, cached stores (onepass) and streamed (twopass).
func layerForms(algo string) []string {
	if algo == "onepass" {
		return codeForms[:2]
	}
	return []string{codeForms[0], codeForms[2]}
}

// grid returns the valid configs on target for shape of vec × unroll ×
// algo (LayerNorm) × code and store × threadings; short keeps
// fewer unrolls and threadings.
func grid(t *testing.T, tmpl *kernels.Template, shape []int, target device.Target) []schedule.Config {
	sp := tmpl.Space(shape, target)
	us, threads := []int{1, 4}, [][2]int{{1, 1}, {2, 1}, {2, 16}}
	if exhaustive {
		us, threads = unrolls, [][2]int{{1, 1}, {2, 1}, {2, 4}, {2, 16}, {3, 64}}
	}
	var out []schedule.Config
	for _, vec := range vecs {
		for _, u := range us {
			for _, algo := range algos {
				for _, th := range threads {
					text := fmt.Sprintf("vec=%d,unroll=%d,threads=%d,rows_per_chunk=%d", vec, u, th[0], th[1])
					forms := codeForms
					if tmpl.Op.Name == LayerOp.Name {
						text += ",algo=" + algo
						forms = layerForms(algo)
					} else if algo != algos[0] {
						continue
					}
					var texts []string
					for _, form := range forms {
						texts = append(texts, text+","+form)
					}
					for _, text := range texts {
						cfg, err := sp.Parse(text)
						if err != nil {
							continue // a chunk size or thread count the shape or host does not offer
						}
						if sp.Valid(cfg) {
							out = append(out, cfg)
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

// twoCores is the host with at least 2 cores, so that the grid's threads
// exist on a one-core machine too.
func twoCores() device.Target {
	host := device.Host()
	c := *host.CPU
	c.Cores = max(c.Cores, 4)
	return device.Target{Name: "cpu", CPU: &c}
}

// TestKernels generates every config of the grid for every test shape,
// and the plain form of each config with assembly, builds and vets them
// in one module, and checks each against the float64 reference on every
// input set of the op (large, tiny, constant and low-variance rows
// included), the output poisoned with NaN beforehand.
func TestKernels(t *testing.T) {
	for _, tmpl := range templates {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			m := kerneltest.NewModule(t)
			var jobs []job
			for _, shape := range testShapes {
				for _, cfg := range grid(t, tmpl, shape, twoCores()) {
					arches := []kernels.Arch{kernels.AMD64}
					if tmpl.Go.Asm(cfg) {
						arches = append(arches, kernels.AMD64Plain)
					}
					for _, arch := range arches {
						name := fmt.Sprintf("K%d", len(jobs))
						m.Asm(shape, tmpl.Go.EmitGo(m.File(shape), kernels.Kernel{Name: name, Shape: shape, Config: cfg, Arch: arch}))
						ins, out := tmpl.Args(shape)
						m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out})
						jobs = append(jobs, job{name, shape, cfg})
					}
				}
			}
			start := time.Now()
			dir, bin := m.Build()
			t.Logf("generated and built %d kernels in %v", len(jobs), time.Since(start).Round(time.Millisecond))
			t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })
			check(t, tmpl, dir, bin, jobs, testShapes)
		})
	}
}

// genericShapes are shapes the generic kernels were not tuned for (they
// are drawn for 256x100): one element, every tail of 8 and 16 lanes the
// unrolls leave, fewer rows than chunks of the threads, primes.
var genericShapes = [][]int{{1, 1}, {1, 5}, {3, 8}, {2, 15}, {17, 16}, {5, 17}, {3, 31}, {131, 33}, {64, 100}, {2, 257}, {9, 1023}}

// genericSchedules are crossed with every vec the host has and the code
// forms (and both algorithms of LayerNorm).
var genericSchedules = []string{
	"unroll=1,threads=1,rows_per_chunk=1",
	"unroll=4,threads=2,rows_per_chunk=16",
	"unroll=8,threads=3,rows_per_chunk=4",
	"unroll=2,threads=4,rows_per_chunk=64",
}

// schedules returns genericSchedules, or with AUTOTUNE_EXHAUSTIVE=1 every
// unroll crossed with five threadings.
func schedules() []string {
	if !exhaustive {
		return genericSchedules
	}
	var out []string
	for _, u := range unrolls {
		for _, th := range [][2]int{{1, 1}, {2, 1}, {2, 16}, {3, 4}, {4, 64}} {
			out = append(out, fmt.Sprintf("unroll=%d,threads=%d,rows_per_chunk=%d", u, th[0], th[1]))
		}
	}
	return out
}

// TestGenericKernels emits the shape-generic kernel of each config once
// and, for every generic shape, a wrapper with the driver's signature that
// calls it with that shape; it checks every (config, shape) as
// TestKernels does.
func TestGenericKernels(t *testing.T) {
	for _, tmpl := range templates {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			sp := tmpl.Space([]int{256, 100}, twoCores())
			m := kerneltest.NewModule(t)
			var jobs []job
			n := 0
			for _, vec := range vecs {
				forms := codeForms
				if tmpl.Op.Name == LayerOp.Name {
					forms = nil
					for _, algo := range algos {
						for _, form := range layerForms(algo) {
							forms = append(forms, "algo="+algo+","+form)
						}
					}
				}
				for _, form := range forms {
					for _, s := range schedules() {
						cfg, err := sp.Parse(fmt.Sprintf("vec=%d,%s,%s", vec, s, form))
						if err != nil {
							t.Fatal(err)
						}
						if err := sp.Check(cfg); err != nil {
							t.Logf("skipping %s: %v", cfg, err) // a vector width the host lacks, or assembly of 8 lanes
							continue
						}
						arches := []kernels.Arch{kernels.AMD64}
						if tmpl.Go.Asm(cfg) {
							arches = append(arches, kernels.AMD64Plain)
						}
						for _, arch := range arches {
							generic := fmt.Sprintf("G%d", n)
							n++
							m.Asm(genericShapes[0], tmpl.Go.EmitGo(m.File(genericShapes[0]), kernels.Kernel{Name: generic, Config: cfg, Arch: arch}))
							for _, shape := range genericShapes {
								name := fmt.Sprintf("%s_%dx%d", generic, shape[0], shape[1])
								ins, out := tmpl.Args(shape)
								params := []jen.Code{jen.Id("y")}
								for i := range ins {
									params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
								}
								m.File(shape).Func().Id(name).Params(jen.List(params...).Index().Float32()).Block(
									jen.Id(generic).Call(append(params, jen.Lit(shape[0]), jen.Lit(shape[1]))...))
								m.Add(kerneltest.Kernel{Name: name, Config: cfg.String(), Ins: ins, Out: out})
								jobs = append(jobs, job{name, shape, cfg})
							}
						}
					}
				}
			}
			dir, bin := m.Build()
			t.Logf("%d generic kernels, %d shapes", n, len(genericShapes))
			t.Run("vet", func(t *testing.T) { kerneltest.Go(t, dir, "vet", ".") })
			check(t, tmpl, dir, bin, jobs, genericShapes)
		})
	}
}

// check runs every job on every input set of tmpl's op for float32,
// drawn once per shape, and compares each output with the float64
// reference under the op's tolerance; it logs the largest error per shape
// and set. (TestHalfKernels checks the other dtypes, with
// kerneltest.CheckDType.)
func check(t *testing.T, tmpl *kernels.Template, dir, bin string, jobs []job, shapes [][]int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	type group struct {
		shape []int
		set   kernels.InputSet
		ins   [][]float32
		jobs  []job
	}
	var groups []group
	var list strings.Builder
	for _, shape := range shapes {
		lens, _ := tmpl.Args(shape)
		for _, set := range tmpl.InputSetsFor(dtype.F32) {
			g := group{shape: shape, set: set, ins: make([][]float32, len(lens))}
			for i, n := range lens {
				g.ins[i] = make([]float32, n)
			}
			set.Fill(shape, rng, g.ins)
			var files []string
			for i, in := range g.ins {
				file := filepath.Join(dir, fmt.Sprintf("in_%s_%s_%d.bin", kernels.FormatShape(shape), set.Name, i))
				kerneltest.WriteFloats(t, file, in)
				files = append(files, file)
			}
			for _, j := range jobs {
				if slices.Equal(j.shape, shape) {
					g.jobs = append(g.jobs, j)
					fmt.Fprintf(&list, "%s %s\n", j.name, strings.Join(files, " "))
				}
			}
			groups = append(groups, g)
		}
	}
	run := kerneltest.Start(t, dir, bin, list.String())
	for _, g := range groups {
		_, n := tmpl.Args(g.shape)
		want, got := make([]float64, n), make([]float32, n)
		tmpl.Reference(g.shape, g.ins, want)
		rel, abs := tmpl.Tolerance(g.shape, dtype.F32)
		worst, worstCfg := 0.0, ""
		for _, j := range g.jobs {
			run.Next(t, j.name, got)
			c := kerneltest.CompareNaN(got, want, rel, abs)
			if c.Bad > 0 {
				cols := g.shape[1]
				t.Errorf("%v %s, %s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g (rel %.2g, abs %.2g)",
					g.shape, g.set.Name, j.cfg, c.Bad, n, c.First/cols, c.First%cols, got[c.First], want[c.First], rel, abs)
			}
			if c.Worst > worst {
				worst, worstCfg = c.Worst, j.cfg.String()
			}
		}
		t.Logf("%v %s: %d kernels; largest error %.2f of the tolerance, by %s", g.shape, g.set.Name, len(g.jobs), worst, worstCfg)
	}
	run.Wait(t)
}

// TestStreamAlignment runs the store=stream assembly of both ops with y
// at each of the 16 offsets of a float32 from a 64-byte boundary: the
// kernel streams only the 64-byte aligned middle of each row of y, so
// every offset takes another split of a row into head, middle and tail.
// The wrappers write into a buffer at the offset and copy y out of it.
func TestStreamAlignment(t *testing.T) {
	for _, tmpl := range templates {
		t.Run(tmpl.Op.Name, func(t *testing.T) { streamAlignment(t, tmpl) })
	}
}

func streamAlignment(t *testing.T, tmpl *kernels.Template) {
	shapes := [][]int{{3, 17}, {2, 100}, {5, 48}, {1, 4099}}
	algo := ""
	if tmpl.Op.Name == LayerOp.Name {
		algo = ",algo=twopass"
	}
	m := kerneltest.NewModule(t)
	var jobs []job
	for _, shape := range shapes {
		for _, vec := range []int{8, 16} {
			sp := tmpl.Space(shape, twoCores())
			unroll := 4 // groups of vectors; on Y registers as many as the op takes
			if vec == asmLanesAVX2 {
				unroll = tmpl.Go.(goEmitter).asmMaxUnrollAVX2()
			}
			cfg, err := sp.Parse(fmt.Sprintf("vec=%d,unroll=%d,threads=1,rows_per_chunk=1,code=asm,store=stream,prefetch=true,convert=block%s", vec, unroll, algo))
			if err != nil {
				t.Fatal(err)
			}
			if err := sp.Check(cfg); err != nil {
				t.Logf("skipping %s: %v", cfg, err) // no AVX-512, or no AVX2
				continue
			}
			name := fmt.Sprintf("S%d", len(jobs))
			m.Asm(shape, tmpl.Go.EmitGo(m.File(shape), kernels.Kernel{Name: name, Shape: shape, Config: cfg, Arch: kernels.AMD64}))
			ins, out := tmpl.Args(shape)
			buf, y := jen.Id("buf"), jen.Id("y")
			params := []jen.Code{y}
			for i := range ins {
				params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
			}
			for off := range 16 {
				wrapper := fmt.Sprintf("%s_%d", name, off)
				args := append([]jen.Code{jen.Add(buf).Index(jen.Id("off"), jen.Id("off").Op("+").Lit(out))}, params[1:]...)
				m.File(shape).Func().Id(wrapper).Params(jen.List(params...).Index().Float32()).Block(
					jen.Add(buf).Op(":=").Make(jen.Index().Float32(), jen.Lit(out+16)),
					jen.Comment(fmt.Sprintf("buf[off:] starts %d floats past a 64-byte boundary", off)),
					jen.Id("off").Op(":=").Lit(off+16).Op("-").Int().Call(jen.Uintptr().Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Add(buf).Index(jen.Lit(0)))).Op("%").Lit(64).Op("/").Lit(4)),
					jen.Id("off").Op("%=").Lit(16),
					jen.Id(name).Call(args...),
					jen.Copy(y, jen.Add(buf).Index(jen.Id("off"), jen.Empty())),
				)
				m.Add(kerneltest.Kernel{Name: wrapper, Config: cfg.String(), Ins: ins, Out: out})
				jobs = append(jobs, job{wrapper, shape, cfg})
			}
		}
	}
	if len(jobs) == 0 {
		t.Skip("no vectors for the assembly on this CPU")
	}
	dir, bin := m.Build()
	check(t, tmpl, dir, bin, jobs, shapes)
}
