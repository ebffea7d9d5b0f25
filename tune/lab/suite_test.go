package lab

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
)

// The landscape suite is a benchmark, not a test of behaviour: it runs only
// when asked, e.g.
//
//	go test ./tune/lab -run TestSuite -suite -v
//
// and prints the table of docs/benchmarks.md.
var (
	suiteFlag   = flag.Bool("suite", false, "run the landscape suite (TestSuite) and print its table")
	suiteSeeds  = flag.Int("suite.seeds", 20, "seeds per search and landscape in TestSuite")
	suiteSearch = flag.String("suite.search", "evolutionary/gbt,random", "searches TestSuite compares, separated by commas")
	suiteGain   = flag.String("suite.stopgain", "", "with -suite, run TestSuiteStopGain instead: evolutionary/gbt with each of these Task.StopGain values, separated by commas, against none")
	suiteBudget = flag.Int("suite.budget", 200, "trials per run in TestSuiteStopGain")
	suiteAfter  = flag.Int("suite.stopgain.after", 0, "Task.StopGainAfter in TestSuiteStopGain (0: the default)")
)

// suiteLandscapes are the landscapes of the suite: the recorded softmax
// ones of the Xeon, each with the other as its prior, and a synthetic GEMM
// 128³ one, on which the search may be tuned; the four recorded on an AMD
// EPYC (testdata/README.md) are held out, each with a prior: the two
// softmax ones each other, GEMM 64³ and GEMM with bias and ReLU 64³ each
// other (transfer across ops that share the model's features).
func suiteLandscapes(t testing.TB) []SuiteLandscape {
	a, recA := landscape(t, landscapes[0].file, landscapes[0].shape)
	b, recB := landscape(t, landscapes[1].file, landscapes[1].shape)
	c := recording(t, "testdata/softmax-8192x128-epyc.jsonl", softmax.Template, []int{8192, 128})
	d := recording(t, "testdata/softmax-64x16384-epyc.jsonl", softmax.Template, []int{64, 16384})
	gbr, ok := kernels.TemplateFor("gemm_bias_relu", kernels.CPU)
	if !ok {
		t.Fatal("no gemm_bias_relu template")
	}
	e := recording(t, "testdata/gemm-64x64x64-epyc.jsonl", gemm.Template, []int{64, 64, 64})
	f := recording(t, "testdata/gemm_bias_relu-64x64x64-epyc.jsonl", gbr, []int{64, 64, 64})
	return []SuiteLandscape{
		{Name: "softmax 1024x1024", Template: softmax.Template, Recording: a, Prior: recB},
		{Name: "softmax 512x2048", Template: softmax.Template, Recording: b, Prior: recA},
		{Name: "gemm 128³ synthetic", Template: gemm.Template, Recording: syntheticRecording(t, gemm.Template, []int{128, 128, 128}, 1)},
		{Name: "softmax 8192x128 EPYC", Template: softmax.Template, HeldOut: true, Recording: c, Prior: d.Records},
		{Name: "softmax 64x16384 EPYC", Template: softmax.Template, HeldOut: true, Recording: d, Prior: c.Records},
		{Name: "gemm 64³ EPYC", Template: gemm.Template, HeldOut: true, Recording: e, Prior: f.Records},
		{Name: "gemm_bias_relu 64³ EPYC", Template: gbr, HeldOut: true, Recording: f, Prior: e.Records},
	}
}

// recording reads the landscape of tmpl at shape from file; it must be of
// the template's current version.
func recording(t testing.TB, file string, tmpl kernels.Template, shape []int) Recording {
	t.Helper()
	rec, err := FindRecording(readRecords(t, file), tmpl, shape, "")
	if err != nil {
		t.Fatalf("%s: %v (record it again: testdata/README.md)", file, err)
	}
	return rec
}

// TestSuite runs the suite when -suite is given.
func TestSuite(t *testing.T) {
	if !*suiteFlag || *suiteGain != "" {
		t.Skip("the landscape suite runs with -suite (and without -suite.stopgain)")
	}
	var searches []Method
	for _, s := range strings.Split(*suiteSearch, ",") {
		x, err := ParseMethod(s)
		if err != nil {
			t.Fatal(err)
		}
		searches = append(searches, x)
	}
	r, err := RunSuite(context.Background(), Suite{
		Landscapes: suiteLandscapes(t), Methods: searches, Seeds: *suiteSeeds,
		Progress: func(l string, s Method, run SimRun) {
			t.Logf("%s %s seed %d: %d trials, to 5%% %d, to 1%% %d", l, s, run.Seed, run.Trials, run.TrialsTo5, run.TrialsTo1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(os.Stdout); err != nil {
		t.Fatal(err)
	}
}

// TestSuiteStopGain measures Task.StopGain on the suite's landscapes when
// -suite and -suite.stopgain are given, e.g.
//
//	go test ./tune/lab -run TestSuiteStopGain -suite -suite.stopgain 0.01,0.03,0.1 -v
//
// Each landscape is searched cold by evolutionary/gbt with a fixed budget
// (-suite.budget, tune's default of 200 trials), first without the stop and
// then with each value, and it prints per landscape and value the median
// trials, the median and worst best found as a ratio to the landscape's
// best, and how many runs the stop ended.
func TestSuiteStopGain(t *testing.T) {
	if !*suiteFlag || *suiteGain == "" {
		t.Skip("runs with -suite -suite.stopgain F,...")
	}
	gains := []float64{0}
	for _, f := range strings.Split(*suiteGain, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x <= 0 {
			t.Fatalf("-suite.stopgain: %q is not a fraction above 0", f)
		}
		gains = append(gains, x)
	}
	gbt := Method{Strategy: "evolutionary", Model: "gbt"}
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeds, budget %d trials, batch 16, evolutionary/gbt cold; trials and best are medians over the seeds, best as a ratio to the landscape's best (1.000 is the best).\n\n", *suiteSeeds, *suiteBudget)
	b.WriteString("| landscape | stop gain | trials | best | worst best | runs stopped |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, l := range suiteLandscapes(t) {
		for _, g := range gains {
			r, err := Simulate(context.Background(), Simulation{
				Template: l.Template, Recording: l.Recording, Methods: []Method{gbt}, Seeds: *suiteSeeds,
				Budget: min(*suiteBudget, len(l.Recording.Records)), StopGain: g, StopGainAfter: *suiteAfter,
			})
			if err != nil {
				t.Fatal(err)
			}
			s := r.Methods[0]
			worst := 0.0
			for _, run := range s.Runs {
				worst = max(worst, run.Final)
			}
			label := "none"
			if g > 0 {
				label = strconv.FormatFloat(g, 'g', -1, 64)
			}
			name := l.Name
			if l.HeldOut {
				name += " (held out)"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %.3f | %d of %d |\n", name, label, trials(s.Trials), s.Final, worst, s.GainStops, len(s.Runs))
		}
	}
	fmt.Print(b.String())
}

// TestSuiteRatios runs a small suite and checks its arithmetic: random
// search against itself is 1 everywhere, a guided search's ratio is its
// median over random's, and the geometric mean is over the landscapes of
// one side of the split only.
func TestSuiteRatios(t *testing.T) {
	a, _ := landscape(t, landscapes[0].file, landscapes[0].shape)
	b, recB := landscape(t, landscapes[1].file, landscapes[1].shape)
	gbt := Method{Strategy: "evolutionary", Model: "gbt"}
	r, err := RunSuite(context.Background(), Suite{
		Landscapes: []SuiteLandscape{
			{Name: "a", Template: softmax.Template, Recording: a, Prior: recB},
			{Name: "b", Template: softmax.Template, Recording: b, HeldOut: true},
		},
		Methods: []Method{gbt, randomSearch}, Seeds: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Landscapes) != 2 || r.Landscapes[0].Warm == nil || r.Landscapes[1].Warm != nil {
		t.Fatalf("want two landscapes, the first with a run with its prior: %+v", r.Landscapes)
	}
	for _, l := range r.Landscapes {
		if x := l.Ratio(randomSearch, false, false); x != 1 {
			t.Errorf("%s: random against itself %v, want 1", l.Name, x)
		}
		g, _ := findMethod(l.Cold, gbt)
		rnd, _ := findMethod(l.Cold, randomSearch)
		if got, want := l.Ratio(gbt, true, false), g.TrialsTo1/rnd.TrialsTo1; got != want || math.IsNaN(got) {
			t.Errorf("%s: ratio to 1%% %v, want %v/%v", l.Name, got, g.TrialsTo1, rnd.TrialsTo1)
		}
		for _, run := range rnd.Runs {
			if run.TrialsTo1 == 0 {
				t.Errorf("%s: random search, seed %d, never got within 1%% with a budget of the whole landscape", l.Name, run.Seed)
			}
		}
	}
	// The mean goes through logarithms: equal to the last bit or two.
	if got, want := r.GeoMean(gbt, false, false, true), r.Landscapes[1].Ratio(gbt, false, false); math.Abs(got-want) > 1e-12*want {
		t.Errorf("held-out geometric mean %v, want the one held-out landscape's ratio %v", got, want)
	}
	if got := r.GeoMean(gbt, false, true, true); !math.IsNaN(got) {
		t.Errorf("held-out geometric mean with a prior %v, want NaN: no held-out landscape has one", got)
	}
	// Runs stop early once within 1% and past the last best@N.
	g, _ := findMethod(r.Landscapes[0].Cold, gbt)
	for _, run := range g.Runs {
		if last := BestAtTrials[len(BestAtTrials)-1]; run.TrialsTo1 > 0 && run.Trials > max(run.TrialsTo1, last)+r.BatchSize {
			t.Errorf("seed %d: %d trials after getting within 1%% at %d; want a stop by %d", run.Seed, run.Trials, run.TrialsTo1, max(run.TrialsTo1, last)+r.BatchSize)
		}
	}
	var md strings.Builder
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a | 360 | evolutionary/gbt |", "evolutionary/gbt with prior 512x2048", "b (held out)", "| random | 1.00 | 1.00 | 1.00 | 1.00 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, md.String())
		}
	}
}
