package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tune/lab"
)

// landscape is a full softmax landscape recorded on a 2-core AVX-512 Xeon
// (see tune/lab/testdata/README.md).
const landscape = "../../tune/lab/testdata/softmax-1024x1024.jsonl"

func TestSimulateJSON(t *testing.T) {
	args := []string{"simulate", "--records", landscape, "--op", "softmax", "--shape", "1024x1024",
		"--strategy", "evolutionary,random", "--seeds", "2", "--budget", "40", "--json"}
	code, stdout, stderr := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stderr, " seed "); n != 4 {
		t.Errorf("%d progress lines for 2 searches × 2 seeds:\n%s", n, stderr)
	}
	var got struct {
		Strategies []struct {
			Name   string              `json:"name"`
			To5    *float64            `json:"median_trials_to_5pct"`
			To1    *float64            `json:"median_trials_to_1pct"`
			BestAt map[string]*float64 `json:"best_at"`
			Runs   []struct {
				Trials int `json:"trials"`
			} `json:"runs"`
		} `json:"strategies"`
		Landscape int      `json:"landscape_size"`
		Space     int      `json:"space_size"`
		Tau       *float64 `json:"model_tau_at_64"`
		Seeds     int      `json:"seeds"`
		Budget    int      `json:"budget"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(got.Strategies) != 2 || got.Strategies[0].Name != "evolutionary/gbt" || got.Strategies[1].Name != "random" {
		t.Fatalf("strategies %+v, want evolutionary/gbt and random", got.Strategies)
	}
	if got.Seeds != 2 || got.Budget != 40 || got.Landscape == 0 || got.Landscape != got.Space {
		t.Errorf("seeds %d, budget %d, landscape %d of %d valid; want 2, 40 and a full landscape",
			got.Seeds, got.Budget, got.Landscape, got.Space)
	}
	for _, s := range got.Strategies {
		if len(s.Runs) != 2 || s.Runs[0].Trials != 40 {
			t.Errorf("%s: runs %+v, want 2 of 40 trials", s.Name, s.Runs)
		}
		for _, n := range []string{"16", "32", "64", "128"} {
			if x, ok := s.BestAt[n]; !ok || x == nil || *x < 1 {
				t.Errorf("%s: best_at[%s] = %v, want a ratio ≥ 1", s.Name, n, x)
			}
		}
	}
	// 40 trials are too few to train on 64: τ is not measured.
	if got.Tau != nil {
		t.Errorf("model_tau_at_64 = %v after 40 trials, want null", *got.Tau)
	}

	// The same command prints the same report.
	code, again, _ := run(t, "", args...)
	if code != 0 || again != stdout {
		t.Errorf("a second run printed something else:\n%s\nthen\n%s", stdout, again)
	}
}

func TestSimulateTable(t *testing.T) {
	code, stdout, stderr := run(t, "", "simulate", "--records", landscape, "--op", "softmax", "--shape", "1024x1024",
		"--strategy", "grid", "--seeds", "1", "--budget", "80")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"workload   softmax 1024x1024 f32 on cpu/", "search", "best@128", "grid", "model τ at 64 (held out, from the grid runs)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}

// TestSimulateStopGain: with --stop-gain 0.5 (a gain of 50%, which the
// model soon stops expecting) the guided runs end before their budget, on
// the stop, and the report says so; random search has no model and spends
// its budget.
func TestSimulateStopGain(t *testing.T) {
	code, stdout, stderr := run(t, "", "simulate", "--records", landscape, "--op", "softmax", "--shape", "1024x1024",
		"--strategy", "evolutionary,random", "--seeds", "2", "--budget", "160", "--stop-gain", "0.5", "--stop-gain-after", "32", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var r simulateJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	gbt, rnd := r.Strategies[0], r.Strategies[1]
	if gbt.GainStops != 2 || gbt.Trials >= 160 || gbt.Trials < 32 || gbt.Final == nil {
		t.Errorf("evolutionary/gbt: %d of 2 runs stopped on the gain, median %v trials; want both, between 32 and 160", gbt.GainStops, gbt.Trials)
	}
	if rnd.GainStops != 0 || rnd.Trials != 160 {
		t.Errorf("random: %d runs stopped on the gain, median %v trials; want none, 160", rnd.GainStops, rnd.Trials)
	}
}

func TestSimulateErrors(t *testing.T) {
	stale := filepath.Join(t.TempDir(), "stale.jsonl")
	b, err := os.ReadFile(landscape)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _ := kernels.TemplateFor("softmax", kernels.CPU)
	// The landscape is of today's version or of an earlier revision the
	// template keeps: make it one it does not know.
	old := string(b)
	for _, r := range append([]kernels.Template{tmpl}, tmpl.Earlier...) {
		old = strings.ReplaceAll(old, r.Version, "softmax-0-000000000000")
	}
	if err := os.WriteFile(stale, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"simulate", "--op", "softmax", "--shape", "1024x1024"}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no recording", nil, 2, "give --db PATH or --records FILE.jsonl"},
		{"two recordings", []string{"--db", "x.db", "--records", landscape}, 2, "give one"},
		{"unknown strategy", []string{"--records", landscape, "--strategy", "annealing"}, 2, `unknown strategy "annealing" (known: analytic, evolutionary, shipped, random, grid)`},
		{"unknown model", []string{"--records", landscape, "--strategy", "evolutionary/forest"}, 2, `unknown cost model "forest" (known: gbt, ucb, none)`},
		{"model of random", []string{"--records", landscape, "--strategy", "random/gbt"}, 2, "random search takes no model"},
		{"no seeds", []string{"--records", landscape, "--seeds", "0"}, 2, "--seeds must be at least 1"},
		{"no such shape", []string{"--records", landscape, "--shape", "8x8"}, 1, "no records of softmax 8x8 f32"},
		{"other device", []string{"--records", landscape, "--device", "cpu/Other/avx2/4c"}, 1, "no records of softmax 1024x1024 f32 on cpu/Other/avx2/4c"},
		{"stale template", []string{"--records", stale}, 1, "are of template version softmax-0-000000000000, not " + tmpl.Version},
		{"negative stop gain", []string{"--records", landscape, "--stop-gain", "-1"}, 2, "--stop-gain is a fraction from 0 to 1"},
		{"stop gain as a percentage", []string{"--records", landscape, "--stop-gain", "5"}, 2, "--stop-gain is a fraction from 0 to 1 (0.02: 2%), not 5"},
		{"stop gain in the suite", []string{"--suite", "dir", "--stop-gain", "0.02", "--op", "", "--shape", ""}, 2, "no --stop-gain"},
		{"prior of nothing useful", []string{"--records", landscape, "--prior", landscape}, 1, "none of the"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append(append([]string{}, base...), tc.args...)...)
			// Progress may come first; the error is the last line, and one.
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if code != tc.code || !strings.HasPrefix(last, "autotune simulate: ") || !strings.Contains(last, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and a last line with %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestHelpListsTheRegistries: the help of tune and simulate names every
// strategy and cost model of the registries, and simulate compares every
// search by default.
func TestHelpListsTheRegistries(t *testing.T) {
	_, tuneHelp, _ := run(t, "", "tune", "--help")
	_, simHelp, _ := run(t, "", "simulate", "--help")
	for _, name := range append(search.Names(), costmodel.Names()...) {
		if !strings.Contains(tuneHelp, name+" (") {
			t.Errorf("tune --help does not describe %q:\n%s", name, tuneHelp)
		}
	}
	for _, s := range lab.Methods() {
		if !strings.Contains(simHelp, s.String()+", ") && !strings.Contains(simHelp, ", "+s.String()) {
			t.Errorf("simulate --help does not list %q:\n%s", s, simHelp)
		}
	}
	if want := "(default " + strings.Join(searchNames(), ",") + ")"; !strings.Contains(simHelp, want) || len(searchNames()) != 5 {
		t.Errorf("simulate --help: want the default %s", want)
	}
}

// TestSimulateSuite runs the suite on a directory of the two softmax
// landscapes, one held out: each is replayed cold and with the other as
// its prior, and the table says which is held out.
func TestSimulateSuite(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"softmax-1024x1024.jsonl", "softmax-512x2048.jsonl"} {
		b, err := os.ReadFile(filepath.Join("../../tune/lab/testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := run(t, "", "simulate", "--suite", dir, "--strategy", "evolutionary,random",
		"--seeds", "2", "--held-out", "softmax-512x2048.jsonl")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"| softmax 1024x1024 (softmax-1024x1024.jsonl) | 360 | evolutionary/gbt |",
		"| softmax 1024x1024 (softmax-1024x1024.jsonl) | 360 | evolutionary/gbt with prior 512x2048 |",
		"| softmax 512x2048 (softmax-512x2048.jsonl) (held out) | 360 | random |",
		"| random | 1.00 | 1.00 | 1.00 | 1.00 |",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	// 2 landscapes × (2 searches cold + 1 with the prior) × 2 seeds.
	if n := strings.Count(stderr, " seed "); n != 12 {
		t.Errorf("%d progress lines, want 12:\n%s", n, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "evolutionary"}, "must include random"},
		{[]string{"--held-out", "nope.jsonl"}, "no file nope.jsonl"},
		{[]string{"--records", landscape}, "no --db, --records"},
		{[]string{"--budget", "10"}, "no --json, --budget"},
	} {
		code, _, stderr := run(t, "", append([]string{"simulate", "--suite", dir, "--seeds", "1"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
