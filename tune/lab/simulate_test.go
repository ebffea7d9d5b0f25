package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// landscapes are full softmax landscapes: every valid config measured once
// by a grid search on a 2-core AVX-512 Xeon (see testdata/README.md).
var landscapes = []struct {
	file  string
	shape []int
}{
	{"testdata/softmax-1024x1024.jsonl", []int{1024, 1024}},
	{"testdata/softmax-512x2048.jsonl", []int{512, 2048}},
}

// allSearches are the searches the conformance tests hold to the contract.
var allSearches = []Method{
	{Strategy: "evolutionary", Model: "gbt"},
	{Strategy: "evolutionary", Model: "none"},
	{Strategy: "random"},
	{Strategy: "grid"},
}

func readRecords(t testing.TB, file string) []tunedb.Record {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []tunedb.Record
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	for dec.More() {
		var r tunedb.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// landscape returns the recording at file for the current softmax template.
// A landscape of an earlier revision that the template keeps
// (kernels.Template.Earlier) replays in that revision's space. A revision
// that changed the emitted code but not the space changes the version
// without keeping the old one; the landscape then no longer says how fast
// today's kernels are, but it is still a real landscape of this space,
// which is all a test of the search needs. So the test relabels it, as
// long as it covers exactly the valid configs of the current space, and
// refuses it otherwise.
func landscape(t testing.TB, file string, shape []int) (Recording, []tunedb.Record) {
	t.Helper()
	recs := readRecords(t, file)
	tmpl := softmax.Template
	if len(recs) == 0 {
		t.Fatalf("%s: no records", file)
	}
	if v := recs[0].Workload.Template; v != tmpl.Version {
		if _, kept := tmpl.Revision(v); !kept {
			target, err := device.FromFingerprint(recs[0].Workload.Device)
			if err != nil {
				t.Fatal(err)
			}
			space := tmpl.Space(shape, target)
			for i := range recs {
				if space.Check(recs[i].Config) != nil {
					t.Fatalf("%s: recorded config %s is not in the space of softmax %s: record the landscape again (testdata/README.md)", file, recs[i].Config, tmpl.Version)
				}
				recs[i].Workload.Template = tmpl.Version
			}
			if n := validConfigs(space); n != len(recs) {
				t.Fatalf("%s: %d records for %d valid configs of softmax %s: record the landscape again (testdata/README.md)", file, len(recs), n, tmpl.Version)
			}
			t.Logf("%s was recorded with template %s; replaying it as %s, whose space is the same", file, v, tmpl.Version)
		}
	}
	rec, err := FindRecording(recs, tmpl, shape, "")
	if err != nil {
		t.Fatal(err)
	}
	return rec, recs
}

// env prepares runs of rec without a prior.
func env(t testing.TB, rec Recording, shape []int, budget int) replayEnv {
	tmpl, err := rec.revision(softmax.Template)
	if err != nil {
		t.Fatal(err)
	}
	space := tmpl.Space(shape, rec.Target)
	results, outside := replayable(space, rec.Records)
	if outside > 0 {
		t.Fatalf("%d recorded configs outside the space", outside)
	}
	return replayEnv{template: tmpl, shape: shape, target: rec.Target, space: space,
		replay: sim.New(results), budget: budget, batch: 16}
}

func configs(trace []measure.Result) []string {
	out := make([]string, len(trace))
	for i, r := range trace {
		out[i] = r.Config.String()
	}
	return out
}

// TestSearchContract holds every search to the contract of search.Strategy
// on real landscapes: the budget is respected, no config is measured twice,
// only valid (and so recorded) configs are proposed, the same seed proposes
// the same sequence, and a budget beyond the space ends in exhaustion after
// every config was measured once.
func TestSearchContract(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	budget := 100
	if testing.Short() {
		seeds, budget = seeds[:2], 48
	}
	for _, l := range landscapes {
		rec, _ := landscape(t, l.file, l.shape)
		for _, search := range allSearches {
			t.Run(kernels.FormatShape(l.shape)+"/"+search.String(), func(t *testing.T) {
				e := env(t, rec, l.shape, budget)
				var first []string
				for _, seed := range seeds {
					trace, sum, err := e.run(context.Background(), search, seed)
					if err != nil {
						t.Fatal(err)
					}
					if len(trace) != budget || sum.Trials != budget {
						t.Errorf("seed %d: %d measured, %d trials; want the budget, %d", seed, len(trace), sum.Trials, budget)
					}
					seen := map[string]bool{}
					for _, r := range trace {
						c := r.Config.String()
						if seen[c] {
							t.Errorf("seed %d: %s measured twice", seed, c)
						}
						seen[c] = true
						if r.Error == sim.NotRecorded || !e.space.Valid(r.Config) {
							t.Errorf("seed %d: proposed %s, which is not a valid config of the space", seed, c)
						}
					}
					again, _, err := e.run(context.Background(), search, seed)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(configs(trace), configs(again)) {
						t.Errorf("seed %d proposed two different sequences", seed)
					}
					if first == nil {
						first = configs(trace)
					} else if search.Strategy != "grid" && slices.Equal(first, configs(trace)) {
						t.Errorf("seeds %d and %d proposed the same sequence", seeds[0], seed)
					}
				}
			})
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSearchesExhaustTheLandscape runs each search past the size of the
// space: it must measure every recorded config exactly once and then stop.
func TestSearchesExhaustTheLandscape(t *testing.T) {
	l := landscapes[0]
	rec, _ := landscape(t, l.file, l.shape)
	for _, search := range allSearches {
		t.Run(search.String(), func(t *testing.T) {
			e := env(t, rec, l.shape, 0)
			e.budget = e.replay.Len() + 50
			trace, sum, err := e.run(context.Background(), search, 7)
			if err != nil {
				t.Fatal(err)
			}
			got := configs(trace)
			slices.Sort(got)
			want := configs(nil)
			for _, c := range e.replay.Configs() {
				want = append(want, c.String())
			}
			slices.Sort(want)
			if !slices.Equal(got, want) || !sum.Exhausted {
				t.Errorf("measured %d configs (exhausted %v); want each of the %d recorded once, then exhaustion",
					len(got), sum.Exhausted, len(want))
			}
		})
	}
}

// TestModelBeatsRandomSearch is the claim the model is there for: on a
// fixed recording, the evolutionary search guided by the boosted trees gets
// within 5% of the best config in fewer trials than random search (median
// over 10 seeds). Everything is replayed, so the outcome is deterministic.
func TestModelBeatsRandomSearch(t *testing.T) {
	for i, l := range landscapes {
		if testing.Short() && i > 0 {
			break
		}
		rec, _ := landscape(t, l.file, l.shape)
		r, err := Simulate(context.Background(), Simulation{
			Template: softmax.Template, Recording: rec,
			Methods: []Method{{Strategy: "evolutionary", Model: "gbt"}, {Strategy: "random"}},
			Seeds:   10,
		})
		if err != nil {
			t.Fatal(err)
		}
		evo, random := r.Methods[0], r.Methods[1]
		t.Logf("%s: median trials to 5%%: evolutionary/gbt %v, random %v; to 1%%: %v, %v; τ at 64 %.2f",
			l.file, evo.TrialsTo5, random.TrialsTo5, evo.TrialsTo1, random.TrialsTo1, r.ModelTauAt64)
		if !(evo.TrialsTo5 < random.TrialsTo5) {
			t.Errorf("%s: evolutionary/gbt took a median %v trials to get within 5%% of the best, random search %v",
				l.file, evo.TrialsTo5, random.TrialsTo5)
		}
	}
}

// TestSimulateIsDeterministic runs a small simulation twice, one run at a
// time and three side by side.
func TestSimulateIsDeterministic(t *testing.T) {
	l := landscapes[1]
	rec, _ := landscape(t, l.file, l.shape)
	sim := Simulation{Template: softmax.Template, Recording: rec,
		Methods: allSearches, Seeds: 4, Budget: 70, BatchSize: 8, Parallel: 1}
	var seen []string
	sim.Progress = func(s Method, r SimRun) { seen = append(seen, fmt.Sprint(s, r.Seed)) }
	a, err := Simulate(context.Background(), sim)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[evolutionary/gbt 1 evolutionary/gbt 2 evolutionary/gbt 3 evolutionary/gbt 4 evolutionary/none 1"; !strings.HasPrefix(fmt.Sprint(seen), want) || len(seen) != 16 {
		t.Errorf("Progress heard of %v, want 16 runs in seed order", seen)
	}
	sim.Parallel, seen = 3, nil
	b, err := Simulate(context.Background(), sim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fmt.Sprint(seen), "[evolutionary/gbt 1 evolutionary/gbt 2 evolutionary/gbt 3 evolutionary/gbt 4 evolutionary/none 1") {
		t.Errorf("Progress heard of %v with runs side by side, want seed order", seen)
	}
	if ja, jb := jsonText(a.Methods), jsonText(b.Methods); ja != jb || !sameFloat(a.ModelTauAt64, b.ModelTauAt64) {
		t.Errorf("two simulations differ:\n%s\n%s", ja, jb)
	}
	if a.Budget != 70 || a.BatchSize != 8 || a.Recorded != a.SpaceSize || math.IsNaN(a.ModelTauAt64) || a.TauSource != "evolutionary/gbt" {
		t.Errorf("budget %d, batch %d, recorded %d of %d, τ %v from %s", a.Budget, a.BatchSize, a.Recorded, a.SpaceSize, a.ModelTauAt64, a.TauSource)
	}
	for _, s := range a.Methods {
		for i, x := range s.BestAt {
			if x < 1 || i > 0 && x > s.BestAt[i-1] {
				t.Errorf("%s: best at %v = %v: want ratios ≥ 1 that never grow", s.Method, BestAtTrials, s.BestAt)
			}
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestSimulateWithPrior checks that the prior reaches the run: the first
// configs the evolutionary search proposes are the best of the other shape.
func TestSimulateWithPrior(t *testing.T) {
	l, o := landscapes[0], landscapes[1]
	rec, _ := landscape(t, l.file, l.shape)
	_, other := landscape(t, o.file, o.shape)
	e := env(t, rec, l.shape, 16)
	e.prior, _ = usablePrior(softmax.Template, rec, other)
	if len(e.prior) != len(other) {
		t.Fatalf("%d of the %d records of %v are usable as a prior", len(e.prior), len(other), o.shape)
	}
	trace, _, err := e.run(context.Background(), Method{Strategy: "evolutionary", Model: "gbt"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	best := tunedbRank(other)
	if trace[0].Config.String() != best {
		t.Errorf("first proposal %s, want the other shape's best, %s", trace[0].Config, best)
	}

	// The recording's own records are not a prior: they would make the run
	// resume instead of search.
	if keep, _ := usablePrior(softmax.Template, rec, rec.Records); len(keep) != 0 {
		t.Errorf("%d records of the workload itself kept as a prior", len(keep))
	}
}

// tunedbRank returns the config of the fastest ok record.
func tunedbRank(recs []tunedb.Record) string {
	best := -1
	for i, r := range recs {
		if r.Status == tunedb.StatusOK && (best < 0 || r.MedianNS < recs[best].MedianNS) {
			best = i
		}
	}
	return recs[best].Config.String()
}

func TestFindRecording(t *testing.T) {
	tmpl := softmax.Template
	host := device.Target{Name: "cpu", CPU: &device.CPU{Model: "Test CPU", Cores: 2, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true}}}
	other := device.Target{Name: "cpu", CPU: &device.CPU{Model: "Other", Cores: 4}}
	cfg := tmpl.Space([]int{8, 8}, host).At(0)
	rec := func(shape []int, target device.Target, version string) tunedb.Record {
		w := tune.Workload(tmpl, shape, target)
		w.Template = version
		return tunedb.Record{Workload: w, Config: cfg, Status: tunedb.StatusOK, MedianNS: 1}
	}
	earlier := tmpl.Earlier[0].Version // softmax-2: the space before the assembly form
	tests := []struct {
		name   string
		recs   []tunedb.Record
		device string
		n      int
		err    string
	}{
		{"one device", []tunedb.Record{rec([]int{8, 8}, host, tmpl.Version), rec([]int{8, 16}, host, tmpl.Version)}, "", 1, ""},
		{"an earlier revision the template keeps", []tunedb.Record{rec([]int{8, 8}, host, earlier), rec([]int{8, 8}, host, "old")}, "", 1, ""},
		{"today's revision before an earlier one", []tunedb.Record{rec([]int{8, 8}, host, earlier), rec([]int{8, 8}, host, tmpl.Version)}, "", 1, ""},
		{"old versions are left out", []tunedb.Record{rec([]int{8, 8}, host, "old"), rec([]int{8, 8}, host, tmpl.Version)}, "", 1, ""},
		{"only an old version", []tunedb.Record{rec([]int{8, 8}, host, "old")}, "", 0, "are of template version old, not " + tmpl.Version},
		{"none", []tunedb.Record{rec([]int{8, 16}, host, tmpl.Version)}, "", 0, "no records of softmax 8x8 f32"},
		{"two devices", []tunedb.Record{rec([]int{8, 8}, host, tmpl.Version), rec([]int{8, 8}, other, tmpl.Version)}, "", 0, "from 2 devices"},
		{"two devices, one chosen", []tunedb.Record{rec([]int{8, 8}, host, tmpl.Version), rec([]int{8, 8}, other, tmpl.Version)}, other.Fingerprint(), 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := FindRecording(tc.recs, tmpl, []int{8, 8}, tc.device)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("error %v, want one with %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case len(r.Records) != tc.n || r.Workload.Key() != r.Records[0].Workload.Key():
				t.Errorf("%d records of %s, want %d", len(r.Records), r.Records[0].Workload.Key(), tc.n)
			default:
				want := tmpl.Version
				if !slices.ContainsFunc(tc.recs, func(x tunedb.Record) bool { return x.Workload.Template == tmpl.Version }) {
					want = earlier
				}
				if r.Workload.Template != want {
					t.Errorf("recording of version %s, want %s", r.Workload.Template, want)
				}
				if _, err := r.revision(tmpl); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestParseMethod(t *testing.T) {
	tests := []struct {
		text, want, err string
	}{
		{"evolutionary", "evolutionary/gbt", ""},
		{"evolutionary/none", "evolutionary/none", ""},
		{"random", "random", ""},
		{"grid", "grid", ""},
		{"grid/gbt", "", "takes no model"},
		{"evolutionary/forest", "", `unknown cost model "forest"`},
		{"annealing", "", `unknown strategy "annealing"`},
	}
	for _, tc := range tests {
		s, err := ParseMethod(tc.text)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMethod(%q): error %v, want %q", tc.text, err, tc.err)
			}
			continue
		}
		if err != nil || s.String() != tc.want {
			t.Errorf("ParseMethod(%q) = %s, %v; want %s", tc.text, s, err, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	inf := math.Inf(1)
	runs := func(xs ...float64) []SimRun {
		out := make([]SimRun, len(xs))
		for i, x := range xs {
			out[i].TauAt64 = x
		}
		return out
	}
	tau := func(r SimRun) float64 { return r.TauAt64 }
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, inf, inf, 2}, inf}, // half never got there
		{[]float64{1, 2, 3, inf}, 2.5},
		{[]float64{math.NaN(), 5}, 5},
		{nil, math.NaN()},
	}
	for _, tc := range tests {
		if got := median(runs(tc.xs...), tau); !sameFloat(got, tc.want) {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
