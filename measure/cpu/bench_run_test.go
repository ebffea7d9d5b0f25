package cpu

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu/peak"
	"github.com/autotune-dev/autotune/schedule"
)

// benchOptions keep the tests short; bench times each entry at least
// benchSamples times.
const benchSamples = 5

func benchBatch(tmpl kernels.Template, shape []int, cfg schedule.Config) BenchBatch {
	return BenchBatch{Template: tmpl, Shape: shape, Target: testTarget(), Config: cfg,
		MinSamples: benchSamples, MinTime: 10 * time.Millisecond}
}

// validConfig returns the first of texts that is valid for tmpl's space.
// testTarget is this machine with fixed cache sizes: tests run what they
// build, so the ISA and cores must be the host's, but cache sizes only
// shape GEMM's space, and some machines report none (its space then assumes
// a small L2 and no L3, and the configs below would be invalid there).
func testTarget() device.Target {
	t := device.Host()
	t.CPU.L1D, t.CPU.L2, t.CPU.L3 = 32<<10, 1<<20, 32<<20
	return t
}

func validConfig(t *testing.T, tmpl kernels.Template, shape []int, texts ...string) schedule.Config {
	t.Helper()
	sp := tmpl.Space(shape, testTarget())
	for _, text := range texts {
		if cfg, err := sp.Parse(text); err == nil && sp.Valid(cfg) {
			return cfg
		}
	}
	t.Fatalf("none of %q is valid on this machine", texts)
	return schedule.Config{}
}

// Softmax's tuned kernel, its naive baseline, the peak and the floor are
// all timed, interleaved, after the first two pass the check.
func TestBenchSoftmax(t *testing.T) {
	needGo(t)
	tests := []struct {
		shape   []int
		configs []string // the first valid one is the tuned config
		threads int      // of the floor
	}{
		{[]int{3, 17}, []string{"vec=1,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"}, 1},
		{[]int{64, 1000}, []string{
			"vec=16,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached",
			"vec=8,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached",
			"vec=1,unroll=4,algo=online,exp=poly5,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached",
			"vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
		}, 0},
	}
	m := New(&Options{Seed: 1})
	for _, tt := range tests {
		t.Run(kernels.FormatShape(tt.shape), func(t *testing.T) {
			cfg := validConfig(t, softmax.Template, tt.shape, tt.configs...)
			res, err := m.Bench(context.Background(), benchBatch(softmax.Template, tt.shape, cfg))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range res {
				names = append(names, r.Name)
				t.Logf("%-6s median %8.0fns (p20 %.0f, p80 %.0f) over %d samples of %d calls: %s",
					r.Name, r.MedianNS, r.P20NS, r.P80NS, len(r.SamplesNS), r.Reps, r.Doc)
			}
			// naive, and onednn in builds with the onednn tag
			if want := append(append([]string{BenchTuned}, baselineNames(softmax.Template)...), BenchPeak, BenchFloor); !slices.Equal(names, want) || names[1] != "naive" {
				t.Fatalf("entries %v, want %v", names, want)
			}
			bytes := 8 * float64(tt.shape[0]*tt.shape[1])
			flops := softmax.Template.FLOPs(tt.shape)
			for i, r := range res {
				if r.Checked != (r.Name != BenchFloor && r.Name != BenchPeak) {
					t.Errorf("%s: Checked = %v", r.Name, r.Checked)
				}
				if len(r.SamplesNS) < benchSamples || len(r.SamplesNS) != len(res[0].SamplesNS) {
					t.Errorf("%s: %d samples, want the same number for every entry, at least %d", r.Name, len(r.SamplesNS), benchSamples)
				}
				if slices.Min(r.SamplesNS) <= 0 || !(r.P20NS <= r.MedianNS && r.MedianNS <= r.P80NS) || r.Reps < 1 {
					t.Errorf("%s: bad statistics: %+v", r.Name, r)
				}
				wantBytes, wantFLOPs := bytes, flops
				switch r.Name {
				case BenchPeak:
					wantBytes, wantFLOPs = 0, peak.FLOPs(peakLanes(device.Host()), peakGoroutines(device.Host()), peakSteps)
				case BenchFloor:
					wantFLOPs = 0
				}
				if r.Bytes != wantBytes || r.FLOPs != wantFLOPs {
					t.Errorf("entry %d (%s): Bytes = %g, FLOPs = %g, want %g and %g", i, r.Name, r.Bytes, r.FLOPs, wantBytes, wantFLOPs)
				}
			}
			if !strings.Contains(res[0].Doc, cfg.String()) {
				t.Errorf("tuned Doc %q does not name the config", res[0].Doc)
			}
			threads := tt.threads
			if threads == 0 {
				threads = cfg.Int("threads")
			}
			want := "with one goroutine"
			if threads > 1 {
				want = fmt.Sprintf("with %d goroutines", threads)
			}
			if floor := res[len(res)-1]; !strings.Contains(floor.Doc, want) {
				t.Errorf("floor Doc %q, want %q", floor.Doc, want)
			}
			if p := res[len(res)-2]; !strings.Contains(p.Doc, fmt.Sprintf("one goroutine per core (%d)", peakGoroutines(device.Host()))) {
				t.Errorf("peak Doc %q does not say it runs on every core", p.Doc)
			}
		})
	}
}

// affineBaseline is a baseline of the test template (out = 2*in + 1) that
// behaves as mode says: ok, wrongans, panic, clobber, exit, or alloc
// (correct, by way of a buffer of allocFloats more floats than out, made at
// every call).
func affineBaseline(name, mode string) kernels.Baseline {
	return kernels.Baseline{Name: name, Doc: "test baseline, " + mode, EmitGo: func(f *jen.File, fn string, shape []int) {
		body := []jen.Code{jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Id("in0").Index(jen.Id("i")).Op("*").Lit(2).Op("+").Lit(1),
		)}
		switch mode {
		case "wrongans":
			body = []jen.Code{jen.Copy(jen.Id("out"), jen.Id("in0"))}
		case "panic":
			body = []jen.Code{jen.Panic(jen.Lit("test baseline: mode panic"))}
		case "clobber":
			body = append(body, jen.Id("in0").Index(jen.Lit(0)).Op("=").Lit(0))
		case "exit":
			body = []jen.Code{jen.Qual("os", "Exit").Call(jen.Lit(3))}
		case "alloc":
			body = []jen.Code{
				jen.Id("tmp").Op(":=").Make(jen.Index().Float32(), jen.Len(jen.Id("out")).Op("+").Lit(allocFloats)),
				jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
					jen.Id("tmp").Index(jen.Id("i")).Op("=").Id("in0").Index(jen.Id("i")).Op("*").Lit(2).Op("+").Lit(1),
				),
				jen.Copy(jen.Id("out"), jen.Id("tmp")),
			}
		}
		f.Func().Id(fn).Params(jen.List(jen.Id("out"), jen.Id("in0")).Index().Float32()).Block(body...)
	}}
}

// allocFloats is what the alloc mode of affineBaseline allocates beyond
// the output's length: 4 MiB.
const allocFloats = 1 << 20

// Every entry's result says what one call allocates on the heap: exactly
// nothing for the kernels that allocate nothing, and at least the buffer,
// in one object, for the baseline that makes one at every call.
func TestBenchAllocs(t *testing.T) {
	needGo(t)
	tmpl := testTemplate()
	tmpl.Baselines = []kernels.Baseline{affineBaseline("good", "ok"), affineBaseline("alloc", "alloc")}
	shape := []int{17}
	res, err := New(&Options{Seed: 1}).Bench(context.Background(), benchBatch(tmpl, shape, testConfig("ok", 1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%-5s allocates %d bytes in %d objects a call", r.Name, r.AllocBytes, r.Allocs)
		switch r.Name {
		case "alloc":
			if least := uint64(4 * (shape[0] + allocFloats)); r.AllocBytes < least || r.AllocBytes > least+64<<10 || r.Allocs != 1 {
				t.Errorf("alloc: %d bytes in %d objects a call, want one object of %d bytes or a little more", r.AllocBytes, r.Allocs, least)
			}
		case BenchPeak: // a few small objects per goroutine but the caller's: its closure, the WaitGroup, a new goroutine
			if n := uint64(peakGoroutines(device.Host()) - 1); r.Allocs > 4*n || r.AllocBytes > 1024*n {
				t.Errorf("peak: %d bytes in %d objects a call, want at most %d small objects", r.AllocBytes, r.Allocs, 4*n)
			}
		default: // tuned, good and floor on one goroutine
			if r.AllocBytes != 0 || r.Allocs != 0 {
				t.Errorf("%s: %d bytes in %d objects a call, want none", r.Name, r.AllocBytes, r.Allocs)
			}
		}
	}
}

// skipped returns b, skipped for every shape.
func skipped(b kernels.Baseline) kernels.Baseline {
	b.Skip = func([]int) string { return "never run" }
	return b
}

// requiring returns b, declaring that it imports a package of module.
func requiring(b kernels.Baseline, module string) kernels.Baseline {
	b.Requires = []string{module}
	return b
}

// A wrong tuned kernel or baseline is an error: it would make every ratio
// meaningless. So is a bench that cannot be set up.
func TestBenchFailures(t *testing.T) {
	needGo(t)
	good := affineBaseline("good", "ok")
	tests := []struct {
		name      string
		mode      string // the tuned config's
		baselines []kernels.Baseline
		want      []string // substrings of the error; none for success
	}{
		{"all good", "ok", []kernels.Baseline{good}, nil},
		{"no baselines", "ok", nil, nil},
		{"wrong baseline", "ok", []kernels.Baseline{good, affineBaseline("bad", "wrongans")}, []string{"bad: wrong_answer: input set uniform: out[0] = "}},
		{"panicking baseline", "ok", []kernels.Baseline{affineBaseline("boom", "panic")}, []string{"boom: crash: panic: test baseline: mode panic"}},
		{"baseline writes its input", "ok", []kernels.Baseline{affineBaseline("clob", "clobber")}, []string{"clob: wrong_answer: input set uniform: the kernel wrote to input 0"}},
		{"baseline kills the harness", "ok", []kernels.Baseline{good, affineBaseline("quit", "exit")}, []string{"died while checking quit: exit status 3"}},
		{"wrong tuned kernel", "wrongans", []kernels.Baseline{good}, []string{"tuned: wrong_answer"}},
		{"tuned kernel does not build", "nocompile", []kernels.Baseline{good}, []string{"go build failed", "undefinedValue"}},
		{"invalid tuned config", "bogus", nil, []string{"tuned config", "not valid"}},
		{"reserved baseline name", "ok", []kernels.Baseline{affineBaseline(BenchFloor, "ok")}, []string{`baseline name "floor"`, "taken"}},
		{"duplicate baseline name", "ok", []kernels.Baseline{good, good}, []string{`baseline name "good"`}},
		{"reserved name peak", "ok", []kernels.Baseline{affineBaseline(BenchPeak, "ok")}, []string{`baseline name "peak"`, "taken"}},
		{"skipped baseline", "ok", []kernels.Baseline{good, skipped(affineBaseline("never", "exit"))}, nil},
		{"baseline of a module autotune lacks", "ok", []kernels.Baseline{requiring(good, "example.com/nowhere")},
			[]string{"example.com/nowhere is not a requirement of autotune's go.mod"}},
	}
	m := New(&Options{Seed: 1})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := testTemplate()
			tmpl.Baselines = tt.baselines
			shape := []int{17}
			res, err := m.Bench(context.Background(), benchBatch(tmpl, shape, testConfig(tt.mode, 1, 0)))
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, r := range res {
					names = append(names, r.Name)
				}
				want := []string{BenchTuned}
				for _, b := range tt.baselines {
					if b.Skip == nil {
						want = append(want, b.Name)
					}
				}
				want = append(want, BenchPeak, BenchFloor)
				if !slices.Equal(names, want) || !strings.Contains(res[len(res)-1].Doc, "with one goroutine") {
					t.Errorf("results %v (floor %q), want %v and a floor of one goroutine", names, res[len(res)-1].Doc, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; results %+v", res)
			}
			if strings.Contains(err.Error(), "\n") && !strings.Contains(err.Error(), "go build") && !strings.Contains(err.Error(), "died") {
				t.Errorf("error of several lines:\n%v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestFloorThreads(t *testing.T) {
	cfg := func(names []string, vals ...schedule.Value) schedule.Config {
		c, err := schedule.NewConfig(names, vals)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		cfg  schedule.Config
		want int
	}{
		{cfg([]string{"vec", "threads"}, schedule.IntValue(16), schedule.IntValue(4)), 4},
		{cfg([]string{"vec"}, schedule.IntValue(16)), 1},
		{cfg([]string{"threads"}, schedule.StringValue("many")), 1},
		{cfg([]string{"threads"}, schedule.BoolValue(true)), 1},
		{cfg([]string{"threads"}, schedule.IntValue(0)), 1},
	}
	for _, tt := range tests {
		if got := floorThreads(tt.cfg); got != tt.want {
			t.Errorf("floorThreads(%s) = %d, want %d", tt.cfg, got, tt.want)
		}
	}
}

// The harnesses run without async preemption (see harnessGODEBUG),
// keeping the user's other GODEBUG settings, or those of Options.Env,
// and get Options.Env after this process's environment.
func TestHarnessEnv(t *testing.T) {
	tests := []struct {
		name, godebug string
		env           []string
		want          []string // the last value of each variable the harness gets
	}{
		{"nothing set", "", nil, []string{"GODEBUG=asyncpreemptoff=1"}},
		{"the user's GODEBUG", "gctrace=1", nil, []string{"GODEBUG=gctrace=1,asyncpreemptoff=1"}},
		{"Env's GODEBUG wins", "gctrace=1", []string{"GODEBUG=gctrace=1,cpu.avx512f=off", "ONEDNN_MAX_CPU_ISA=AVX2"},
			[]string{"GODEBUG=gctrace=1,cpu.avx512f=off,asyncpreemptoff=1", "ONEDNN_MAX_CPU_ISA=AVX2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GODEBUG", tt.godebug)
			t.Setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE")
			env := Options{Env: tt.env}.harnessEnv()
			last := map[string]string{}
			for _, kv := range env {
				k, _, _ := strings.Cut(kv, "=")
				last[k] = kv
			}
			for _, w := range tt.want {
				k, _, _ := strings.Cut(w, "=")
				if last[k] != w {
					t.Errorf("the harness gets %q, want %q", last[k], w)
				}
			}
		})
	}
}

// GEMM's bench has the tuned kernel, the naive and gonum baselines (gonum
// in the bench module at autotune's version; openblas too with the
// openblas tag, built with cgo), the peak and the floor; the tuned kernel
// and the baselines are checked and all but the floor have FLOPs.
func TestBenchGEMM(t *testing.T) {
	needGo(t)
	shape := []int{37, 45, 29}
	cfg := validConfig(t, gemm.Template, shape,
		"vec=16,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2,micro=go,split=m,chunks=1,pack_a=false,convert=copy",
		"vec=1,mr=4,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy")
	res, err := New(&Options{Seed: 1}).Bench(context.Background(), benchBatch(gemm.Template, shape, cfg))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.Name)
		t.Logf("%-6s median %8.0fns, %6.2f GFLOP/s: %s", r.Name, r.MedianNS, r.FLOPs/r.MedianNS, r.Doc)
		if r.Checked != (r.Name != BenchFloor && r.Name != BenchPeak) || (r.FLOPs > 0) != (r.Name != BenchFloor) {
			t.Errorf("%s: Checked %v, FLOPs %g", r.Name, r.Checked, r.FLOPs)
		}
		if r.Name != BenchFloor && r.Name != BenchPeak && r.FLOPs != 2*37*45*29 {
			t.Errorf("%s: FLOPs %g, want 2·M·N·K", r.Name, r.FLOPs)
		}
	}
	// naive, gonum, and openblas in builds with the openblas tag
	want := append(append([]string{BenchTuned}, baselineNames(gemm.Template)...), BenchPeak, BenchFloor)
	if !slices.Equal(names, want) || !slices.Contains(names, "gonum") {
		t.Fatalf("entries %v, want %v", names, want)
	}
}

// baselineNames returns the names of tmpl's baselines of a float32 bench
// but those in skip.
func baselineNames(tmpl kernels.Template, skip ...string) []string {
	var names []string
	for _, b := range tmpl.Baselines {
		if !slices.Contains(skip, b.Name) && b.For(dtype.F32) {
			names = append(names, b.Name)
		}
	}
	return names
}

// A baseline that skips a shape is not in its bench: naive is not run on
// 4096³.
func TestBenchEntriesSkip(t *testing.T) {
	shape := []int{4096, 4096, 4096}
	cfg := validConfig(t, gemm.Template, shape, "vec=1,mr=4,nr_vecs=1,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=go,split=m,chunks=1,pack_a=false,convert=copy")
	entries, err := benchEntries(BenchBatch{Template: gemm.Template, Shape: shape, Target: testTarget(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.name)
	}
	want := append(append([]string{BenchTuned}, baselineNames(gemm.Template, "naive")...), BenchPeak, BenchFloor)
	if !slices.Equal(names, want) || !slices.Contains(names, "gonum") {
		t.Errorf("entries %v, want %v", names, want)
	}
}

// A bench module without requirements is the tuning module; one with
// gonum requires it at autotune's version, with its two checksums.
func TestBenchModFiles(t *testing.T) {
	mod, sum, err := benchModFiles(nil)
	if err != nil || mod != goMod || sum != "" {
		t.Errorf("benchModFiles(nil) = %q, %q, %v", mod, sum, err)
	}
	mod, sum, err = benchModFiles([]string{"gonum.org/v1/gonum", "gonum.org/v1/gonum"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mod, goMod) || strings.Count(mod, "gonum.org/v1/gonum v") != 1 ||
		strings.Count(sum, "gonum.org/v1/gonum v") != 2 || !strings.Contains(sum, "/go.mod h1:") {
		t.Errorf("go.mod:\n%s\ngo.sum:\n%s", mod, sum)
	}
}

// The peak is the peak loop's best sample, unless a checked entry's median
// is faster: then it is that, and says so, so that no entry runs at more
// than 100% of it.
func TestPeakGFLOPs(t *testing.T) {
	entry := func(name string, checked bool, flops float64, samples ...float64) BenchResult {
		median, _, _ := measure.Summarize(samples)
		return BenchResult{Name: name, Checked: checked, FLOPs: flops, SamplesNS: samples, MedianNS: median}
	}
	tests := []struct {
		name       string
		res        []BenchResult
		want, loop float64
		by         string
	}{
		{"loop is fastest", []BenchResult{entry(BenchTuned, true, 100, 2, 2, 2), entry(BenchPeak, false, 300, 3, 1, 2), entry(BenchFloor, false, 0, 1)}, 300, 300, ""},
		{"tuned beats the loop", []BenchResult{entry(BenchTuned, true, 100, 0.25, 0.25), entry("gonum", true, 100, 4), entry(BenchPeak, false, 300, 3, 2)}, 400, 150, BenchTuned},
		{"baseline beats both", []BenchResult{entry(BenchTuned, true, 100, 0.5), entry("openblas", true, 100, 0.2), entry(BenchPeak, false, 100, 1)}, 500, 100, "openblas"},
		{"unchecked entries do not count", []BenchResult{entry(BenchPeak, false, 100, 1), {Name: BenchFloor, FLOPs: 1e9, MedianNS: 1, SamplesNS: []float64{1}}}, 100, 100, ""},
		{"no peak", []BenchResult{entry(BenchTuned, true, 100, 1)}, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, by, loop := PeakGFLOPs(tt.res)
			if got != tt.want || by != tt.by || loop != tt.loop {
				t.Fatalf("PeakGFLOPs = %g, %q, %g; want %g, %q, %g", got, by, loop, tt.want, tt.by, tt.loop)
			}
			for _, r := range tt.res {
				if r.Checked && got > 0 && r.FLOPs/r.MedianNS > got {
					t.Errorf("%s runs at %.0f%% of the peak", r.Name, 100*r.FLOPs/r.MedianNS/got)
				}
			}
		})
	}
}

// A bf16 bench on a CPU with AVX512-BF16 takes VDPBF16PS's peak, which
// gemm's dot tiles run at; every other bench, and bf16 without the
// extension, the FMAs'.
func TestBenchPeakOfBF16(t *testing.T) {
	shape := []int{64, 64, 64}
	for _, c := range []struct {
		dt   dtype.DType
		bf16 bool
		want string
	}{{dtype.BF16, true, "peakDotKernel"}, {dtype.BF16, false, "peakKernel"}, {dtype.F16, true, "peakKernel"}, {dtype.F32, true, "peakKernel"}} {
		target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, L1D: 32 << 10, L2: 1 << 20, L3: 32 << 20,
			ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true, AVX512BF16: c.bf16}}}
		cfg := gemm.Template.Default(shape, target)
		entries, err := benchEntries(BenchBatch{Template: gemm.Template, Shape: shape, DType: c.dt, Target: target, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(entries, func(e benchEntry) bool { return e.name == BenchPeak })
		if i < 0 {
			t.Fatalf("%s, AVX512-BF16 %v: no peak entry", c.dt, c.bf16)
		}
		if got := fmt.Sprintf("%#v", entries[i].fn); !strings.Contains(got, c.want+"(") {
			t.Errorf("%s, AVX512-BF16 %v: the peak runs %s, want %s", c.dt, c.bf16, got, c.want)
		}
	}
}
