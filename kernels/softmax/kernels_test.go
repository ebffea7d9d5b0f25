package softmax

import (
	"flag"
	"fmt"
	"math"
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

var speed = flag.Bool("speed", false, "time the fast configs on 4096x1024 against plain Go and a copy, and log the table")

// A genKernel is one generated kernel of a throw-away module.
type genKernel struct {
	name  string
	shape []int
	cfg   schedule.Config
	base  *kernels.Baseline // a baseline instead of a config
	plain bool              // the plain form of a code=asm config (kernels.AMD64Plain)
	arm64 bool              // the arm64 kernel (kernels.ARM64); a module holds arm64 kernels or none
}

// testShapes are the shapes every config of the grid is checked on: one
// element, a partial vector, many rows with a tail, one long row, and (for
// the assembly) rows of whole vectors, three of 16 lanes, which cap an
// unroll of 4 at 3, or six of 8 lanes.
var testShapes = [][]int{{1, 1}, {3, 17}, {4097, 1023}, {1, 100000}, {5, 48}}

// threadings are the (threads, rows_per_chunk) pairs the grid crosses with
// every vec, unroll, algo and exp.
var threadings = [][2]int{{1, 1}, {2, 1}, {2, 16}}

// forms are the (code, prefetch) pairs the grid crosses with the rest.
var forms = [][2]string{{"go", "false"}, {"asm", "false"}, {"asm", "true"}}

// grid returns the valid configs on target of vec × unroll × algo × exp ×
// threadings × forms; short keeps one unroll with accumulators and one
// threading.
func grid(t *testing.T, shape []int, target device.Target, short bool) []schedule.Config {
	sp := Template.Space(shape, target)
	unrolls, threads := unrolls, threadings
	if short {
		unrolls, threads = []int{1, 4}, [][2]int{{1, 1}, {2, 16}}
	}
	// Rows of whole vectors are there for the assembly's unroll; where the
	// target has no assembly form (no vectors), they check the Go code
	// instead.
	asmOn := kernels.WidestVector(target) >= asmLanesAVX2
	var out []schedule.Config
	for _, vec := range vecs {
		for _, u := range unrolls {
			for _, algo := range algos {
				for _, exp := range exps {
					for _, th := range threads {
						for _, form := range forms {
							// The prefetch changes one instruction of the
							// sums: one threading of it is enough.
							if form[1] == "true" && th != threads[len(threads)-1] || form[0] == "go" && shape[1] == 48 && asmOn {
								continue
							}
							cfg, err := sp.Parse(fmt.Sprintf("vec=%d,unroll=%d,algo=%s,exp=%s,threads=%d,rows_per_chunk=%d,code=%s,prefetch=%s,convert=block,store=cached",
								vec, u, algo, exp, th[0], th[1], form[0], form[1]))
							if err != nil {
								continue // a chunk size this shape does not offer
							}
							if sp.Valid(cfg) {
								out = append(out, cfg)
							}
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

// TestKernels generates the grid of configs for every test shape, and the
// plain forms of its code=asm configs with goroutines (the one place the
// plain form's Go differs), into one module, builds and vets it once with GOEXPERIMENT=simd, and checks every
// kernel against the float64 reference on random, large and -Inf inputs,
// with the output poisoned with NaN beforehand.
func TestKernels(t *testing.T) {
	host := device.Host()
	var ks []genKernel
	for _, shape := range testShapes {
		for _, cfg := range grid(t, shape, host, testing.Short()) {
			ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg})
			if cfg.Str("code") == "asm" && cfg.Int("threads") > 1 {
				ks = append(ks, genKernel{name: fmt.Sprintf("K%d", len(ks)), shape: shape, cfg: cfg, plain: true})
			}
		}
	}
	checkKernels(t, testShapes, ks)
}

// checkKernels builds ks, kernels of shapes, into one module, vets it, and
// checks every kernel against the float64 reference on every input kind
// that runs takes, with the output poisoned with NaN beforehand.
func checkKernels(t *testing.T, shapes [][]int, ks []genKernel) {
	start := time.Now()
	dir, bin := buildModule(t, ks)
	t.Logf("generated and built %d kernels in %v", len(ks), time.Since(start).Round(time.Millisecond))

	t.Run("vet", func(t *testing.T) {
		kerneltest.Go(t, dir, "vet", ".")
	})

	// Jobs run in the order shape, input, kernel, so that one reference at a
	// time is enough.
	type group struct {
		shape []int
		kind  string
		ks    []genKernel
	}
	var groups []group
	var jobs strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := make(map[string][]float32)
	for _, shape := range shapes {
		for _, kind := range inputKinds {
			file := filepath.Join(dir, fmt.Sprintf("in_%s_%s.bin", kernels.FormatShape(shape), kind))
			in := input(shape, kind, rng)
			inputs[file] = in
			kerneltest.WriteFloats(t, file, in)
			g := group{shape: shape, kind: kind}
			for _, k := range ks {
				if slices.Equal(k.shape, shape) && runs(k, kind) {
					g.ks = append(g.ks, k)
					fmt.Fprintf(&jobs, "%s %s\n", k.name, file)
				}
			}
			groups = append(groups, g)
		}
	}
	start = time.Now()
	run := kerneltest.Start(t, dir, bin, jobs.String())
	for _, g := range groups {
		t.Run(kernels.FormatShape(g.shape)+"/"+g.kind, func(t *testing.T) {
			in := inputs[filepath.Join(dir, fmt.Sprintf("in_%s_%s.bin", kernels.FormatShape(g.shape), g.kind))]
			want := make([]float64, len(in))
			Template.Reference(g.shape, [][]float32{in}, want)
			rel, abs := Template.Tolerance(g.shape, dtype.F32)
			got := make([]float32, len(in))
			worst, worstCfg := 0.0, ""
			for _, k := range g.ks {
				run.Next(t, k.name, got)
				c := kerneltest.CompareNaN(got, want, rel, abs)
				if c.Bad > 0 {
					cols := g.shape[1]
					what := k.cfg.String()
					switch {
					case k.plain:
						what += " (plain)"
					case k.arm64:
						what += " (arm64)"
					}
					t.Errorf("%s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g (rel %.2g, abs %.2g)",
						what, c.Bad, len(got), c.First/cols, c.First%cols, got[c.First], want[c.First], rel, abs)
				}
				if c.Worst > worst {
					worst, worstCfg = c.Worst, k.cfg.String()
				}
			}
			t.Logf("%d kernels; largest error %.2f of the tolerance (rel %.2g), by %s", len(g.ks), worst, rel, worstCfg)
		})
	}
	run.Wait(t)
	t.Logf("ran and checked in %v", time.Since(start).Round(time.Millisecond))
}

// runs reports whether kernel k runs on inputs of the given kind. On large
// shapes only random inputs meet every kernel: the other kinds go to the
// vector kernels of one threading, which keeps the test to a minute or two.
// Scalar and f64 kernels meet every kind on the small shapes.
func runs(k genKernel, kind string) bool {
	if kind == "random" || k.shape[0]*k.shape[1] < 1<<20 {
		return true
	}
	return k.cfg.Int("vec") > 1 && k.cfg.Int("threads") == 2 && k.cfg.Int("rows_per_chunk") == 16
}

// inputKinds are the inputs kernels run on; see input.
var inputKinds = []string{"random", "large", "neginf", "tailmax"}

// input returns a rows×cols matrix of the given kind, with no zeros:
//
//	random  normal with standard deviation 4
//	large   uniform in ±80 in even rows, ±1e4 in odd ones
//	neginf  random, with an eighth of the entries -Inf and rows 1, 5, 9, … all -Inf
//	tailmax random, 200 lower in odd rows, with each row's last element 120
//	        above the row's mean: a maximum in the partial vector that only
//	        a correct maximum survives (e^(x-m) overflows past it, and
//	        underflows to 0 in the odd rows with m = 0)
func input(shape []int, kind string, rng *rand.Rand) []float32 {
	rows, cols := shape[0], shape[1]
	xs := make([]float32, rows*cols)
	for i := range xs {
		r := i / cols
		x := float32(rng.NormFloat64() * 4)
		switch kind {
		case "large":
			scale := 80.0
			if r%2 == 1 {
				scale = 1e4
			}
			x = float32((2*rng.Float64() - 1) * scale)
		case "neginf":
			if r%4 == 1 || rng.IntN(8) == 0 {
				x = float32(math.Inf(-1))
			}
		case "tailmax":
			if i%cols == cols-1 {
				x = 120
			}
			if r%2 == 1 {
				x -= 200
			}
		}
		if x == 0 {
			x = 0.5
		}
		xs[i] = x
	}
	return xs
}

// TestSpeed is a report, not a check: with -speed it times the fast configs
// on 4096x1024 against the plain Go baseline in one process, and logs the
// table.
func TestSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -speed to time kernels")
	}
	shape := []int{4096, 1024}
	host := device.Host()
	sp := Template.Space(shape, host)
	ks := []genKernel{{name: "K0", shape: shape, base: &Template.Baselines[0]}}
	for _, text := range []string{
		"vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=4,algo=threepass,exp=poly4,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=64,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
		"vec=16,unroll=1,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16,code=go,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
		// AVX2's assembly: every constant of the exp in a register
		// (unroll 1), or two vectors in flight and the last constants
		// read from memory (unroll 2).
		"vec=8,unroll=1,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=1,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=8,unroll=2,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
		"vec=1,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
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
	kerneltest.Bench(t, bin, 30)
}

// buildModule writes ks, a table of them and the driver into a throw-away
// module, builds it with GOEXPERIMENT=simd and returns the module's
// directory and the binary.
func buildModule(t *testing.T, ks []genKernel) (dir, bin string) {
	t.Helper()
	m := kerneltest.NewModule(t)
	if len(ks) > 0 && ks[0].arm64 {
		m.SetArch(kernels.ARM64)
	}
	for _, k := range ks {
		ins, out := Template.Args(k.shape)
		desc := k.cfg.String()
		if k.base != nil {
			k.base.EmitGo(m.File(k.shape), k.name, k.shape)
			desc = k.base.Name
		} else {
			arch := kernels.AMD64
			switch {
			case k.plain:
				arch = kernels.AMD64Plain
			case k.arm64:
				arch = kernels.ARM64
			}
			m.Asm(k.shape, Template.Go.EmitGo(m.File(k.shape), kernels.Kernel{Name: k.name, Shape: k.shape, Config: k.cfg, Arch: arch}))
		}
		m.Add(kerneltest.Kernel{Name: k.name, Config: desc, Ins: ins, Out: out, FLOPs: Template.FLOPs(k.shape)})
	}
	return m.Build()
}
