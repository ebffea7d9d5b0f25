package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
)

// TestBenchEndToEnd tunes a tiny workload with a few trials, then benches
// its winner against the baselines, as JSON and as a table.
func TestBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	path := filepath.Join(t.TempDir(), "tune.db")
	workload := []string{"--op", "softmax", "--shape", "3x17", "--device", "cpu", "--db", path}
	code, stdout, stderr := run(t, "", append(workload, "--trials", "3", "--batch", "3", "--seed", "5", "--json")...)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	var tuned summaryJSON
	if err := json.Unmarshal([]byte(stdout), &tuned); err != nil || tuned.Best == nil {
		t.Fatalf("tune --json: %v, no best\n%s", err, stdout)
	}

	fast := []string{"--samples", "5", "--time", "5ms"}
	code, stdout, stderr = run(t, "", append(append([]string{"bench"}, workload...), append(fast, "--json")...)...)
	if code != 0 {
		t.Fatalf("bench --json: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "benchmarking softmax 3x17") {
		t.Errorf("no progress line on stderr: %q", stderr)
	}
	var b benchJSON
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, stdout)
	}
	if b.Op != "softmax" || len(b.Shape) != 2 || b.Shape[0] != 3 || b.Shape[1] != 17 || b.Device != "cpu" {
		t.Errorf("bench --json describes the wrong workload: %+v", b)
	}
	if host := device.Host(); b.ISA != levelOf(host.CPU.ISA) || (b.ISAEnv != nil) != hidesAVX512(envGODEBUG()) {
		t.Errorf("bench --json says isa %q, isa_env %q; the CPU is at %s here, GODEBUG=%s", b.ISA, b.ISAEnv, levelOf(host.CPU.ISA), envGODEBUG())
	}
	var names []string
	for _, r := range b.Results {
		names = append(names, r.Name)
		if r.Samples < 5 || !(r.MedianNS > 0) || !(r.P20NS <= r.MedianNS && r.MedianNS <= r.P80NS) || !(r.VsTuned > 0) ||
			(r.GBps > 0) != (r.Name != "peak") || (r.GFLOPs > 0) != (r.Name != "floor") {
			t.Errorf("%s: bad statistics: %+v", r.Name, r)
		}
		if (r.Config != nil) != (r.Name == "tuned") || r.Checked != (r.Name != "floor" && r.Name != "peak") {
			t.Errorf("%s: config %v, checked %v", r.Name, r.Config, r.Checked)
		}
	}
	want := []string{"tuned"} // naive, and onednn in builds with the onednn tag
	for _, b := range softmax.Template.Baselines {
		if b.For(dtype.F32) {
			want = append(want, b.Name)
		}
	}
	if want = append(want, "peak", "floor"); !slices.Equal(names, want) || names[1] != "naive" {
		t.Fatalf("results %v, want %v", names, want)
	}
	checkPeak(t, b)
	if !b.Results[0].Config.Equal(tuned.Best.Config) || b.Results[0].VsTuned != 1 {
		t.Errorf("bench timed %s (vs_tuned %v), tune found %s", b.Results[0].Config, b.Results[0].VsTuned, tuned.Best.Config)
	}

	code, stdout, stderr = run(t, "", append(append([]string{"bench"}, workload...), fast...)...)
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"NAME", "MEDIAN", "GB/s", "GFLOP/s", "× TUNED", "ALLOC", "\ntuned ", "\nnaive ", "\npeak ", "\nfloor ",
		"% of the FMA peak",
		// Faster or slower is the machine's business: a 3x17 softmax is tiny.
		tuned.Best.Config.String(), "machine", "\nisa ", "tuned is ", "× ", " than naive", "the memory floor"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	if m := regexp.MustCompile(`runs at (\d+)% of the FMA peak`).FindStringSubmatch(stdout); m == nil {
		t.Errorf("the table does not say the fraction of the peak:\n%s", stdout)
	} else if pct, _ := strconv.Atoi(m[1]); pct > 100 {
		t.Errorf("the table shows more than 100%% of the peak:\n%s", stdout)
	}
}

// checkPeak checks that a bench recorded the peak and that no checked
// entry runs above it: of_peak is in (0, 1], and a peak raised to an
// entry's speed says so.
func checkPeak(t *testing.T, b benchJSON) {
	t.Helper()
	if !(b.OfPeak > 0 && b.OfPeak <= 1) || !(b.PeakGFLOPs > 0) {
		t.Errorf("of_peak = %v, peak_gflops = %v; want of_peak in (0, 1]", b.OfPeak, b.PeakGFLOPs)
	}
	raised := false
	for _, r := range b.Results {
		if r.Checked && r.GFLOPs > b.PeakGFLOPs {
			t.Errorf("%s runs at %.1f GFLOP/s, above the peak %.1f", r.Name, r.GFLOPs, b.PeakGFLOPs)
		}
		if r.Checked && r.GFLOPs == b.PeakGFLOPs {
			raised = true
		}
	}
	if raised != (b.PeakNote != "") {
		t.Errorf("peak_note %q, yet an entry runs at the peak: %v", b.PeakNote, raised)
	}
}

// tuneAndBench tunes op on shape for two trials in a fresh database, then
// benches it with --json, and returns the parsed result and the output.
func tuneAndBench(t *testing.T, op, shape string) (benchJSON, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tune.db")
	workload := []string{"--op", op, "--shape", shape, "--device", "cpu", "--db", path}
	if code, _, stderr := run(t, "", append(workload, "--trials", "2", "--batch", "2", "--seed", "5")...); code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run(t, "", append(append([]string{"bench"}, workload...), "--samples", "3", "--time", "5ms", "--json")...)
	if code != 0 {
		t.Fatalf("bench --json: exit %d\n%s", code, stderr)
	}
	var b benchJSON
	if err := json.Unmarshal([]byte(stdout), &b); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, stdout)
	}
	checkPeak(t, b)
	return b, stdout
}

// TestBenchGEMM benches a tiny tuned GEMM: tuned, naive, gonum (built into
// the bench module from autotune's own go.mod and go.sum), openblas with
// the openblas tag, peak and floor, each with its GFLOP/s in --json.
func TestBenchGEMM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	b, stdout := tuneAndBench(t, "gemm", "9x20x7")
	var names []string
	for _, r := range b.Results {
		names = append(names, r.Name)
		if (r.GFLOPs > 0) != (r.Name != "floor") || r.Checked != (r.Name != "floor" && r.Name != "peak") {
			t.Errorf("%s: gflops %v, checked %v", r.Name, r.GFLOPs, r.Checked)
		}
	}
	// naive, gonum, and openblas in builds with the openblas tag
	want := []string{"tuned"}
	for _, b := range gemm.Template.Baselines {
		if b.For(dtype.F32) { // not onednn-bf16 and onednn-f16
			want = append(want, b.Name)
		}
	}
	want = append(want, "peak", "floor")
	if !slices.Equal(names, want) || !slices.Contains(names, "gonum") {
		t.Fatalf("results %v, want %v", names, want)
	}
	if !strings.Contains(stdout, `"gflops":`) || !strings.Contains(stdout, `"of_peak":`) {
		t.Errorf("--json lacks gflops or of_peak:\n%s", stdout)
	}
}

// TestBenchAttention benches a tiny tuned causal attention: tuned, naive,
// gonum (the composition with blas32.Gemm, built into the bench module from
// autotune's own go.mod and go.sum), peak and floor.
func TestBenchAttention(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	b, stdout := tuneAndBench(t, "attention_causal", "1x2x9x5")
	var names []string
	for _, r := range b.Results {
		names = append(names, r.Name)
		if !(r.MedianNS > 0) || (r.GFLOPs > 0) != (r.Name != "floor") || r.Checked != (r.Name != "floor" && r.Name != "peak") {
			t.Errorf("%s: median %v, gflops %v, checked %v", r.Name, r.MedianNS, r.GFLOPs, r.Checked)
		}
	}
	// naive, gonum, and onednn in builds with the onednn tag
	want := []string{"tuned"}
	for _, b := range attention.TemplateCausal.Baselines {
		if b.For(dtype.F32) { // not onednn-bf16 and onednn-f16
			want = append(want, b.Name)
		}
	}
	want = append(want, "peak", "floor")
	if !slices.Equal(names, want) || !slices.Contains(names, "gonum") {
		t.Fatalf("results %v, want %v", names, want)
	}
	// Both baselines allocate the 9×9 float32 scores at every call.
	for _, r := range b.Results[1:3] {
		if r.AllocBytes < 4*9*9 || r.Allocs < 1 {
			t.Errorf("%s: alloc_bytes %d, allocs %d; want at least the 324 bytes of the scores", r.Name, r.AllocBytes, r.Allocs)
		}
	}
	if !strings.Contains(stdout, `"alloc_bytes":`) || !strings.Contains(stdout, `"allocs":`) {
		t.Errorf("--json lacks alloc_bytes or allocs:\n%s", stdout)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"}, {112, "112 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {8192, "8 KiB"}, {5320, "5.2 KiB"},
		{4<<20 + 8192, "4.01 MiB"}, {1 << 30, "1 GiB"}, {3 << 40, "3 TiB"},
	} {
		if got := formatBytes(tt.n); got != tt.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// Without a tuned record there is nothing to bench: exit 1, one line.
func TestBenchWithoutTunedRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	code, stdout, stderr := run(t, "", "bench", "--op", "softmax", "--shape", "4096x1024", "--device", "cpu", "--db", path)
	if code != 1 || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no tuned config for softmax 4096x1024 f32") ||
		!strings.Contains(stderr, "run autotune tune first") {
		t.Errorf("stderr = %q, want one line saying to tune first", stderr)
	}
}

// A record of another template version describes other code: exit 1.
func TestBenchOfAnotherTemplateVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	seedVersion(t, path, "v1-test") // softmax 64x33 records of an old template
	code, _, stderr := run(t, "", "bench", "--op", "softmax", "--shape", "64x33", "--device", "cpu", "--db", path)
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "are for template v1-test") {
		t.Errorf("exit %d, stderr %q; want 1 and one line naming the old template", code, stderr)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		flag, value, want string
	}{
		{"--samples", "0", "--samples must be at least 1"},
		{"--time", "0s", "--time must be positive"},
		{"--time", "soon", "invalid value"},
	} {
		code, stdout, stderr := run(t, "", "bench", "--op", "softmax", "--shape", "4x4", tt.flag, tt.value)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s %s: exit %d, %q", tt.flag, tt.value, code, stderr)
		}
	}
}

// bench --help lists the baselines of every op with a template, under the
// op's name or, for a variant (gemm_bias, attention_causal), its base op's:
// a baseline added to a template without a word in the help fails here.
func TestBenchHelpListsBaselines(t *testing.T) {
	_, block, ok := strings.Cut(benchCommand.help, "\nBaselines, by op")
	if !ok {
		t.Fatal("bench --help has no list of baselines")
	}
	block, _, _ = strings.Cut(block, "\n\n")
	listed := map[string][]string{} // op → baselines
	op := ""
	// names are the leading fields of f, "a, b  what they are": a and b.
	names := func(f []string) (out []string) {
		for _, w := range f {
			out = append(out, strings.TrimSuffix(w, ","))
			if !strings.HasSuffix(w, ",") {
				break
			}
		}
		return out
	}
	for _, line := range strings.Split(block, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			op = f[0]
			listed[op] = append(listed[op], names(f[1:])...)
		case len(f) >= 1 && strings.HasPrefix(line, strings.Repeat(" ", 13)) && !strings.HasPrefix(line, strings.Repeat(" ", 14)):
			listed[op] = append(listed[op], names(f)...)
		}
	}
	for _, name := range kernels.Names() {
		tmpl, ok := kernels.TemplateFor(name, kernels.CPU)
		if !ok {
			continue
		}
		base, _, _ := strings.Cut(name, "_")
		for _, b := range tmpl.Baselines {
			if !slices.Contains(listed[base], b.Name) {
				t.Errorf("bench --help does not list %s's baseline %s under %s (it lists %v)", name, b.Name, base, listed[base])
			}
		}
	}
}
