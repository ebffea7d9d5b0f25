package softmax

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

var speed = flag.Bool("speed", false, "time the fast configs on 4096x1024 against plain Go and a copy, and log the table")

// A genKernel is one generated kernel of a throw-away module.
type genKernel struct {
	name  string
	shape []int
	cfg   schedule.Config
}

// testShapes are the shapes every config of the grid is checked on: one
// element, a partial vector, many rows with a tail, one long row.
var testShapes = [][]int{{1, 1}, {3, 17}, {4097, 1023}, {1, 100000}}

// threadings are the (threads, rows_per_chunk) pairs the grid crosses with
// every vec, unroll, algo and exp.
var threadings = [][2]int{{1, 1}, {2, 1}, {2, 16}}

// grid returns the valid configs on target of vec × unroll × algo × exp ×
// threadings; short keeps one unroll with accumulators and one threading.
func grid(t *testing.T, shape []int, target device.Target, short bool) []schedule.Config {
	sp := Template.Space(shape, target)
	unrolls, threads := unrolls, threadings
	if short {
		unrolls, threads = []int{1, 4}, [][2]int{{1, 1}, {2, 16}}
	}
	var out []schedule.Config
	for _, vec := range vecs {
		for _, u := range unrolls {
			for _, algo := range algos {
				for _, exp := range exps {
					for _, th := range threads {
						cfg, err := sp.Parse(fmt.Sprintf("vec=%d,unroll=%d,algo=%s,exp=%s,threads=%d,rows_per_chunk=%d", vec, u, algo, exp, th[0], th[1]))
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
	if len(out) == 0 {
		t.Fatalf("no valid config for %v on %s", shape, target.Fingerprint())
	}
	return out
}

// TestKernels generates the grid of configs for every test shape into one
// module, builds and vets it once with GOEXPERIMENT=simd, and checks every
// kernel against the float64 reference on random, large and -Inf inputs,
// with the output poisoned with NaN beforehand.
func TestKernels(t *testing.T) {
	host := device.Host()
	var ks []genKernel
	for _, shape := range testShapes {
		for _, cfg := range grid(t, shape, host, testing.Short()) {
			ks = append(ks, genKernel{fmt.Sprintf("K%d", len(ks)), shape, cfg})
		}
	}
	start := time.Now()
	dir, bin := buildModule(t, ks)
	t.Logf("generated and built %d kernels in %v", len(ks), time.Since(start).Round(time.Millisecond))

	t.Run("vet", func(t *testing.T) {
		goTool(t, dir, "vet", ".")
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
	for _, shape := range testShapes {
		for _, kind := range inputKinds {
			file := filepath.Join(dir, fmt.Sprintf("in_%s_%s.bin", kernels.FormatShape(shape), kind))
			in := input(shape, kind, rng)
			inputs[file] = in
			writeFloats(t, file, in)
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
	jobsFile := filepath.Join(dir, "jobs")
	if err := os.WriteFile(jobsFile, []byte(jobs.String()), 0o666); err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	cmd := exec.Command(bin, "run", jobsFile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReaderSize(pipe, 1<<20)
	for _, g := range groups {
		t.Run(kernels.FormatShape(g.shape)+"/"+g.kind, func(t *testing.T) {
			in := inputs[filepath.Join(dir, fmt.Sprintf("in_%s_%s.bin", kernels.FormatShape(g.shape), g.kind))]
			want := make([]float64, len(in))
			Template.Reference(g.shape, [][]float32{in}, want)
			rel, abs := Template.Tolerance(g.shape)
			got, buf := make([]float32, len(in)), make([]byte, 4*len(in))
			worst, worstCfg := 0.0, ""
			for _, k := range g.ks {
				if _, err := io.ReadFull(out, buf); err != nil {
					t.Fatalf("reading %s's output: %v\n%s", k.name, err, stderr.String())
				}
				for i := range got {
					got[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
				}
				c := compare(got, want, rel, abs)
				if c.bad > 0 {
					cols := g.shape[1]
					t.Errorf("%s: %d of %d outputs wrong; first at [%d][%d]: got %g, want %g (rel %.2g, abs %.2g)",
						k.cfg, c.bad, len(got), c.first/cols, c.first%cols, got[c.first], want[c.first], rel, abs)
				}
				if c.worst > worst {
					worst, worstCfg = c.worst, k.cfg.String()
				}
			}
			t.Logf("%d kernels; largest error %.2f of the tolerance (rel %.2g), by %s", len(g.ks), worst, rel, worstCfg)
		})
	}
	if _, err := io.Copy(io.Discard, out); err != nil {
		t.Error(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("driver: %v\n%s", err, stderr.String())
	}
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
var inputKinds = []string{"random", "large", "neginf"}

// input returns a rows×cols matrix of the given kind, with no zeros:
//
//	random  normal with standard deviation 4
//	large   uniform in ±80 in even rows, ±1e4 in odd ones
//	neginf  random, with an eighth of the entries -Inf and rows 1, 5, 9, … all -Inf
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
		}
		if x == 0 {
			x = 0.5
		}
		xs[i] = x
	}
	return xs
}

// comparison is how far one output is from the reference.
type comparison struct {
	bad, first int     // wrong outputs, and the index of the first
	worst      float64 // largest error as a fraction of the tolerance
}

// compare checks got against want: NaN exactly where want is NaN, and
// elsewhere |got-want| ≤ abs + rel·|want|.
func compare(got []float32, want []float64, rel, abs float64) comparison {
	c := comparison{first: -1}
	for i, w := range want {
		g := float64(got[i])
		var ok bool
		if math.IsNaN(w) {
			ok = math.IsNaN(g)
		} else {
			tol := abs + rel*math.Abs(w)
			err := math.Abs(g - w)
			ok = err <= tol // false for NaN
			if ok {
				c.worst = max(c.worst, err/tol)
			}
		}
		if !ok {
			if c.bad == 0 {
				c.first = i
			}
			c.bad++
		}
	}
	return c
}

// TestSpeed is a report, not a check: with -speed it times the fast configs
// on 4096x1024 against plain Go and a 16 MiB copy in one process, and logs
// the table.
func TestSpeed(t *testing.T) {
	if !*speed {
		t.Skip("run with -speed to time kernels")
	}
	shape := []int{4096, 1024}
	host := device.Host()
	sp := Template.Space(shape, host)
	var ks []genKernel
	for _, text := range []string{
		"vec=16,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16",
		"vec=16,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=16",
		"vec=16,unroll=4,algo=threepass,exp=poly4,threads=2,rows_per_chunk=16",
		"vec=16,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=64",
		"vec=16,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1",
		"vec=8,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=16",
		"vec=1,unroll=4,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1",
	} {
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Valid(cfg) {
			ks = append(ks, genKernel{fmt.Sprintf("K%d", len(ks)), shape, cfg})
		}
	}
	_, bin := buildModule(t, ks)
	out, err := exec.Command(bin, "bench", "30").CombinedOutput()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, out)
	}
	t.Logf("%s, %d cores (GOMAXPROCS %d):\n%s", host.CPU.Model, host.CPU.Cores, runtime.GOMAXPROCS(0), out)
}

// buildModule writes ks, a table of them and the driver into a throw-away
// module, builds it with GOEXPERIMENT=simd and returns the module's
// directory and the binary.
func buildModule(t *testing.T, ks []genKernel) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string][]byte{"go.mod": []byte("module kerneltest\n\ngo 1.26\n")}
	driver, err := os.ReadFile(filepath.Join("testdata", "driver", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	files["main.go"] = driver

	// One file per shape keeps files a readable size.
	byShape := make(map[string]*jen.File)
	table := golang.NewFile("main")
	var entries []jen.Code
	for _, k := range ks {
		key := kernels.FormatShape(k.shape)
		f, ok := byShape[key]
		if !ok {
			f = golang.NewFile("main")
			byShape[key] = f
		}
		Template.EmitGo(f, k.name, k.shape, k.cfg)
		entries = append(entries, jen.Values(jen.Lit(k.name), jen.Lit(k.cfg.String()), jen.Lit(k.shape[0]), jen.Lit(k.shape[1]), jen.Id(k.name)))
	}
	table.Var().Id("kernels").Op("=").Index().Id("kernel").Values(entries...)
	for key, f := range byShape {
		files["kernels_"+key+".go"] = render(t, f)
	}
	files["table.go"] = render(t, table)
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin = filepath.Join(dir, "driver")
	goTool(t, dir, "build", "-o", bin, ".")
	return dir, bin
}

func render(t *testing.T, f *jen.File) []byte {
	t.Helper()
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// goTool runs the go command in dir with GOEXPERIMENT=simd, outside any
// workspace and ignoring GOFLAGS, and fails the test if it fails.
func goTool(t *testing.T, dir string, args ...string) {
	t.Helper()
	tool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOEXPERIMENT=simd", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func writeFloats(t *testing.T, path string, xs []float32) {
	t.Helper()
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
}
