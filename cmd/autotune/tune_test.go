package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/tunedb"
)

// TestTuneSoftmaxEndToEnd generates, builds, checks and times real softmax
// kernels, then resumes and reads the winner back.
func TestTuneSoftmaxEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	path := filepath.Join(t.TempDir(), "tune.db")
	tuneOnce := func() summaryJSON {
		t.Helper()
		code, stdout, stderr := run(t, "", "--op", "softmax", "--shape", "3x17", "--device", "cpu", "--db", path,
			"--trials", "6", "--batch", "3", "--seed", "5", "--json")
		if code != 0 {
			t.Fatalf("tune: exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stderr, "[3/6]") || !strings.Contains(stderr, "[6/6]") {
			t.Errorf("no progress line per batch on stderr:\n%s", stderr)
		}
		var s summaryJSON
		if err := json.Unmarshal([]byte(stdout), &s); err != nil {
			t.Fatalf("tune --json: %v\n%s", err, stdout)
		}
		return s
	}
	first := tuneOnce()
	if first.Trials != 6 || first.Resumed != 0 || first.Best == nil || first.Best.MedianNS <= 0 || first.Best.GBps <= 0 {
		t.Fatalf("first run: %+v", first)
	}
	// Which config wins is the machine's business (tune's tests pin the
	// rule); that the leaders were re-measured is the CLI's: the three
	// fastest, and the fastest of a thread count they lack (1 or 2 at
	// 3x17), depending on the draws.
	if n := len(first.Leaders); n < 3 || n > 4 {
		t.Errorf("first run re-measured %d leaders, want 3, or 4 with the other thread count's best", n)
	}
	if first.Op != "softmax" || len(first.Shape) != 2 || first.Shape[1] != 17 || first.Device != "cpu" || first.DType != "f32" {
		t.Errorf("first run describes the wrong workload: %+v", first)
	}
	// The records name the go command's toolchain, which best finds again.
	if !strings.HasPrefix(first.Toolchain, "go") && !strings.HasPrefix(first.Toolchain, "devel") {
		t.Errorf("first run names toolchain %q, want the go command's version", first.Toolchain)
	}
	second := tuneOnce()
	if second.Trials != 6 || second.Resumed != 6 {
		t.Errorf("second run: trials %d, resumed %d; want 6 new after 6 earlier", second.Trials, second.Resumed)
	}

	code, stdout, _ := run(t, "", "best", "--op", "softmax", "--shape", "3x17", "--device", "cpu", "--db", path, "--json")
	var best bestJSON
	if err := json.Unmarshal([]byte(stdout), &best); code != 0 || err != nil {
		t.Fatalf("best: exit %d, %v\n%s", code, err, stdout)
	}
	if best.Toolchain != first.Toolchain {
		t.Errorf("best names toolchain %q, tune %q", best.Toolchain, first.Toolchain)
	}
	if !best.Best.Config.Equal(second.Best.Config) || best.Best.MedianNS != second.Best.MedianNS {
		t.Errorf("best shows %s (%v ns), tune found %s (%v ns)", best.Best.Config, best.Best.MedianNS,
			second.Best.Config, second.Best.MedianNS)
	}
	code, stdout, _ = run(t, "", "db", "show", "--op", "softmax", "--shape", "3x17", "--db", path, "--top", "0")
	// 12 trials, then per run at least one round of re-measured leaders:
	// the 3 fastest, and the fastest of a thread count not among them (a
	// fourth when both thread counts of two cores were measured). Noise or
	// contention may call for more rounds, up to maxRemeasures per run.
	if n := strings.Count(stdout, "\n") - 1; code != 0 || n < 12+2*3 || n > 12+2*3*4 {
		t.Errorf("db show: exit %d, %d records, want 12 trials and rounds of 3 re-measured leaders:\n%s", code, n, stdout)
	}
}

func TestTuneFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		flag, value, want string
	}{
		{"--trials", "0", "--trials must be at least 1"},
		{"--time", "-1s", "--time must not be negative"},
		{"--batch", "0", "--batch must be at least 1"},
		{"--strategy", "annealing", `--strategy: unknown strategy "annealing" (known: analytic, evolutionary, shipped, random, grid)`},
		{"--model", "xgboost", `--model: unknown cost model "xgboost" (known: gbt, ucb, none)`},
		{"--early-stop", "-2", "--early-stop must not be negative"},
		{"--remeasure", "-1", "--remeasure must not be negative"},
		{"--stop-gain", "-0.01", "--stop-gain is a fraction from 0 to 1"},
		{"--stop-gain", "5", "--stop-gain is a fraction from 0 to 1 (0.02: 2%), not 5"},
		{"--stop-gain", "NaN", "--stop-gain is a fraction from 0 to 1"},
		{"--stop-gain", "2%", "invalid value"},
		{"--stop-gain-after", "0", "--stop-gain-after must be at least 1"},
		{"--time", "soon", "invalid value"},
	} {
		code, _, stderr := run(t, "", "--op", "softmax", "--shape", "4x4", tt.flag, tt.value)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s %s: exit %d, %q", tt.flag, tt.value, code, stderr)
		}
	}
}

// TestTuneStopGainNeedsAModel: --stop-gain asks the cost model, so a
// search without one is a usage error rather than a stop that never comes.
func TestTuneStopGainNeedsAModel(t *testing.T) {
	for _, args := range [][]string{
		{"--strategy", "random"},
		{"--strategy", "grid"},
		{"--model", "none"},
	} {
		code, _, stderr := run(t, "", append([]string{"--op", "softmax", "--shape", "4x4", "--stop-gain", "0.02"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "--stop-gain asks the cost model") {
			t.Errorf("--stop-gain 0.02 %s: exit %d, %q", strings.Join(args, " "), code, stderr)
		}
	}
}

// syncWriter lets the test watch stderr while Main writes it.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	batch chan struct{} // closed at the first progress line
	once  sync.Once
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte("] best")) {
		w.once.Do(func() { close(w.batch) })
	}
	return w.buf.Write(p)
}

// TestTuneStopSignals reads the database during a run, then stops the run
// with a signal after its first batch: it prints its summary, says it was
// interrupted, exits 128 plus the signal's number (130 for Ctrl-C, 143 for
// SIGTERM, 129 for SIGHUP), and every record it reports is in the database.
func TestTuneStopSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		t.Run(tt.sig.String(), func(t *testing.T) { testStopSignal(t, tt.sig, tt.code) })
	}
}

func testStopSignal(t *testing.T, sig syscall.Signal, wantCode int) {
	path := filepath.Join(t.TempDir(), "tune.db")
	errs := &syncWriter{batch: make(chan struct{})}
	var out bytes.Buffer
	done := make(chan int)
	go func() {
		done <- Main([]string{"--op", "softmax", "--shape", "512x1000", "--db", path, "--trials", "10000",
			"--batch", "4", "--time", "10m", "--json"}, strings.NewReader(""), &out, errs)
	}()
	select {
	case <-errs.batch:
	case code := <-done:
		t.Fatalf("tune ended before it was interrupted: exit %d\n%s", code, errs.buf.String())
	}
	// The tuner holds the database only during its operations, so it can
	// be read while the run goes on.
	if code, stdout, stderr := run(t, "", "db", "ls", "--db", path); code != 0 || !strings.Contains(stdout, "512x1000") {
		t.Errorf("db ls during a tuning run: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("tune did not stop within a minute of %v", sig)
	}
	var s summaryJSON
	if err := json.Unmarshal(out.Bytes(), &s); code != wantCode || err != nil {
		t.Fatalf("exit %d (want %d), %v\n%s\n%s", code, wantCode, err, out.String(), errs.buf.String())
	}
	if !s.Interrupted || s.Trials < 4 || s.Trials >= 10000 {
		t.Errorf("summary after %v: interrupted %v, trials %d", sig, s.Interrupted, s.Trials)
	}
	if !strings.Contains(errs.buf.String(), "autotune tune: stopped by ") {
		t.Errorf("stderr does not say the run was stopped by a signal:\n%s", errs.buf.String())
	}
	db, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sums, err := db.Workloads()
	if err != nil || len(sums) != 1 || sums[0].Records != s.Trials {
		t.Errorf("database holds %+v (%v), want the %d records the summary counts", sums, err, s.Trials)
	}
}

// TestTimeBudget checks the --time default: a minute, unless --trials is
// given alone, when the run has no time limit.
func TestTimeBudget(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{nil, time.Minute},
		{[]string{"--trials", "100"}, 0},
		{[]string{"--trials", "100", "--time", "5m"}, 5 * time.Minute},
		{[]string{"--time", "30s"}, 30 * time.Second},
		{[]string{"--time", "0"}, 0},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("tune", flag.ContinueOnError)
		var o tuneOptions
		o.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := timeBudget(fs, o.budget); got != tt.want {
			t.Errorf("%v: budget %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestFormatContention(t *testing.T) {
	for _, tt := range []struct {
		s    tune.Summary
		want string
	}{
		{tune.Summary{}, "unknown: the measurer gathers no evidence"},
		{tune.Summary{Evidenced: 20, Contended: 1, Remeasures: 1}, "1 of 20 measurements mostly disturbed; leaders measured again 1×"},
		{tune.Summary{Evidenced: 20, Contended: 15, Remeasures: 3, Unsettled: true},
			"15 of 20 measurements mostly disturbed (a busy machine: see autotune doctor); leaders measured again 3×; " +
				"the winner's samples were still mostly disturbed, so it is provisional: bench it when the machine is quieter"},
		{tune.Summary{Evidenced: 20, Contended: 20, Remeasures: 3, Unsettled: true, Awaiting: make([]schedule.Config, 2)},
			"20 of 20 measurements mostly disturbed (a busy machine: see autotune doctor); leaders measured again 3×; " +
				"the winner's samples were still mostly disturbed, so it is provisional: bench it when the machine is quieter, " +
				"and run the same tune again then (same --db) to measure again 2 leaders measured under contention"},
	} {
		if got := formatContention(tt.s); got != tt.want {
			t.Errorf("%+v:\n got %q\nwant %q", tt.s, got, tt.want)
		}
	}
}
