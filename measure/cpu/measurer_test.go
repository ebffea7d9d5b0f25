package cpu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// fastOptions keep the tests short: little timing, and a hang costs 2s.
func fastOptions(t *testing.T) *Options {
	return &Options{Seed: 1, MinSamples: 5, MinTime: 2 * time.Millisecond, Timeout: 2 * time.Second}
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	if testing.Short() {
		t.Skip("builds and runs candidates")
	}
}

type want struct {
	status measure.Status
	error  []string // substrings of Error
}

func batchOf(shape []int, cfgs ...schedule.Config) measure.Batch {
	return measure.Batch{Template: testTemplate(), Shape: shape, Target: device.Host(), Configs: cfgs}
}

// check compares results with wants and checks the fields every result of
// its status must have.
func check(t *testing.T, b measure.Batch, got []measure.Result, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d results, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		r := got[i]
		t.Logf("%s: %s, median %.0fns over %d samples, build %v, run %v\n%s", r.Config, r.Status, r.MedianNS,
			len(r.SamplesNS), time.Duration(r.BuildNS), time.Duration(r.RunNS), r.Error)
		if !r.Config.Equal(b.Configs[i]) {
			t.Errorf("result %d is for config %q, want %q", i, r.Config, b.Configs[i])
		}
		if r.Status != w.status {
			t.Errorf("config %d (%s): status %s, want %s; error:\n%s", i, r.Config, r.Status, w.status, r.Error)
			continue
		}
		for _, s := range w.error {
			if !strings.Contains(r.Error, s) {
				t.Errorf("config %d (%s): error does not contain %q:\n%s", i, r.Config, s, r.Error)
			}
		}
		switch r.Status {
		case measure.StatusOK:
			if r.Error != "" || len(r.SamplesNS) < defaultSlowSamples || !(r.MedianNS > 0) ||
				!(r.P20NS <= r.MedianNS && r.MedianNS <= r.P80NS) || r.RunNS <= 0 {
				t.Errorf("config %d (%s): ok result without samples or with bad statistics: %+v", i, r.Config, r)
			}
		default:
			if r.Error == "" || r.SamplesNS != nil || r.MedianNS != 0 {
				t.Errorf("config %d (%s): %s result without an error or with samples: %+v", i, r.Config, r.Status, r)
			}
		}
		switch r.Status {
		case measure.StatusInvalid:
			if r.BuildNS != 0 || r.RunNS != 0 {
				t.Errorf("config %d (%s): invalid, yet build %dns and run %dns", i, r.Config, r.BuildNS, r.RunNS)
			}
		case measure.StatusBuildError:
			if r.BuildNS <= 0 || r.RunNS != 0 {
				t.Errorf("config %d (%s): build error with build %dns and run %dns", i, r.Config, r.BuildNS, r.RunNS)
			}
		default:
			if r.BuildNS <= 0 || r.RunNS <= 0 {
				t.Errorf("config %d (%s): ran with build %dns and run %dns", i, r.Config, r.BuildNS, r.RunNS)
			}
		}
	}
}

// One batch with every way a candidate can fail, between good ones: each gets
// its own status, and the good ones after a crash are still measured.
func TestMeasureEveryFailure(t *testing.T) {
	needGo(t)
	keep := t.TempDir()
	opts := fastOptions(t)
	opts.KeepDir = keep
	cases := []struct {
		mode string
		want want
	}{
		{"ok", want{measure.StatusOK, nil}},
		{"nocompile", want{measure.StatusBuildError, []string{"k001/k001.go:", "undefined: undefinedValue"}}},
		{"panic", want{measure.StatusCrash, []string{"panic: test kernel: mode panic", "goroutine"}}},
		{"print", want{measure.StatusOK, nil}},
		{"hang", want{measure.StatusTimeout, []string{"no result after 2s"}}},
		{"nosyntax", want{measure.StatusBuildError, []string{"not valid Go"}}},
		{"wrongans", want{measure.StatusWrongAnswer, []string{"out[0] = ", "outputs wrong"}}},
		{"segv", want{measure.StatusCrash, []string{"died running this candidate", "SIGSEGV"}}},
		{"clobber", want{measure.StatusWrongAnswer, []string{"wrote to input 0"}}},
		{"ok_slow", want{measure.StatusOK, nil}},
		{"exit", want{measure.StatusCrash, []string{"exit status 3"}}},
		{"emitpanic", want{measure.StatusBuildError, []string{"emitting the kernel panicked", "cannot emit"}}},
		{"bogus", want{measure.StatusInvalid, []string{"bogus"}}},
		{"asm", want{measure.StatusOK, nil}},
		{"asmbroken", want{measure.StatusBuildError, []string{"k014/k014_amd64.s", "ADDNOTANINSTRUCTION"}}},
		{"ok", want{measure.StatusOK, nil}},
	}
	var cfgs []schedule.Config
	var wants []want
	for i, c := range cases {
		cfgs = append(cfgs, testConfig(c.mode, 1, i))
		wants = append(wants, c.want)
	}
	b := batchOf([]int{1000}, cfgs...)
	heard := map[string][]measure.Status{}
	b.Finished = func(r measure.Result) { heard[r.Config.String()] = append(heard[r.Config.String()], r.Status) }
	got, err := New(opts).Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	check(t, b, got, wants)
	// The Finished hook heard every result, each once, as Measure returned it.
	for _, r := range got {
		if h := heard[r.Config.String()]; len(h) != 1 || h[0] != r.Status {
			t.Errorf("Finished heard %v for %s, want [%s]", h, r.Config, r.Status)
		}
	}
	if len(heard) != len(got) {
		t.Errorf("Finished heard %d configs, Measure returned %d", len(heard), len(got))
	}

	// The harness left behind is the last one built: its table gofmt-ed
	// and generated, the whole vet-clean.
	dirs, _ := filepath.Glob(filepath.Join(keep, "autotune-batch-*"))
	if len(dirs) != 1 {
		t.Fatalf("KeepDir holds %v, want one batch directory", dirs)
	}
	src, err := os.ReadFile(filepath.Join(dirs[0], "table.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(src), "// "+generatedHeader+"\n") {
		t.Errorf("table.go does not start with the generated-code header:\n%.200s", src)
	}
	vet := exec.Command("go", "vet", ".")
	vet.Dir = dirs[0]
	vet.Env = append(os.Environ(), "GOEXPERIMENT=simd", "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := vet.CombinedOutput(); err != nil {
		t.Errorf("go vet of the harness: %v\n%s", err, out)
	}

	// A harness whose runner is gone (its stdin closed) does not go on
	// running a candidate that hangs.
	hang := exec.Command(filepath.Join(dirs[0], "harness"), "-data", dirs[0], "-ids", "4")
	stdin, err := hang.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := hang.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hang.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), `"start"`) {
	}
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- hang.Wait() }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		hang.Process.Kill()
		t.Error("the harness ran on after its stdin closed")
	}
}

// Odd sizes: the smallest output, and one that fits no vector.
func TestMeasureOddSizes(t *testing.T) {
	needGo(t)
	for _, tt := range []struct {
		n     int
		wrong string
	}{{1, "1 of 1 outputs wrong"}, {17, "17 of 17 outputs wrong"}} {
		n := tt.n
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			b := batchOf([]int{n}, testConfig("ok", 1, 0), testConfig("wrongans", 1, 0), testConfig("ok_slow", 10, 0))
			opts := fastOptions(t)
			opts.NoEvidence = true // it may take disturbed samples again
			got, err := New(opts).Measure(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			check(t, b, got, []want{
				{measure.StatusOK, nil},
				{measure.StatusWrongAnswer, []string{"out[0] = ", tt.wrong}},
				{measure.StatusOK, nil},
			})
		})
	}
}

// A candidate far slower than the fastest known (the batch's hint, or a
// candidate measured before it in the same harness) is timed with
// SlowSamples samples; otherwise it gets the full count.
func TestMeasureCutsClearlySlowCandidates(t *testing.T) {
	needGo(t)
	// n=1000: ok takes about 1µs a call, ok_slow with 100 reps about 1ms.
	fast, slow := testConfig("ok", 1, 0), testConfig("ok_slow", 100, 0)
	for _, tt := range []struct {
		name    string
		best    time.Duration
		cfgs    []schedule.Config
		samples []int // wanted per config; -1 means at least MinSamples
	}{
		{"slow first, nothing known", 0, []schedule.Config{slow, fast}, []int{-1, -1}},
		{"fast first sets the bar", 0, []schedule.Config{fast, slow}, []int{-1, 3}},
		{"hint sets the bar", 10 * time.Microsecond, []schedule.Config{slow}, []int{3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := batchOf([]int{1000}, tt.cfgs...)
			b.Best = tt.best
			opts := fastOptions(t)
			opts.NoEvidence = true // it may take disturbed samples again
			got, err := New(opts).Measure(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tt.samples {
				n := len(got[i].SamplesNS)
				if got[i].Status != measure.StatusOK || w == -1 && n < 5 || w >= 0 && n != w {
					t.Errorf("%s: %s with %d samples, want ok with %d (-1: at least 5)", got[i].Config, got[i].Status, n, w)
				}
			}
		})
	}
}

// Without a fixed Timeout, a candidate's deadline follows its own speed
// once it has passed its check: a slow but correct one is timed fully
// (sleep: 100ms a call, 22 calls, past the 2s a candidate gets before its
// check), one that hangs in its check or in its timing is killed and
// recorded as timeout, and the candidates after them run.
func TestMeasureTimeoutFromCheck(t *testing.T) {
	needGo(t)
	opts := fastOptions(t)
	opts.Timeout, opts.SlowSamples = 0, 20
	opts.NoEvidence = true // a sleeping kernel's CPU time says nothing of contention
	b := batchOf([]int{1000}, testConfig("sleep", 100, 0), testConfig("hang", 1, 1),
		testConfig("hang_late", 1, 2), testConfig("ok", 1, 3))
	b.Best = time.Microsecond // the sleeper is clearly slow: 1 + 20 calls after its check
	if l := New(opts).opts.timeout(b.Best); l != 2*time.Second {
		t.Fatalf("the limit before the check is %v; the test wants 2s", l)
	}
	start := time.Now()
	got, err := New(opts).Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	check(t, b, got, []want{
		{measure.StatusOK, nil},
		{measure.StatusTimeout, []string{"no result after 2s"}},
		{measure.StatusTimeout, []string{"after its check, which said timing would take"}},
		{measure.StatusOK, nil},
	})
	if n := len(got[0].SamplesNS); n != 20 {
		t.Errorf("the sleeper has %d samples, want 20", n)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the batch took %v; the hung candidates were not killed within seconds", d)
	}
}

// A batch where nothing compiles builds no harness and runs nothing.
func TestMeasureNothingBuilds(t *testing.T) {
	needGo(t)
	b := batchOf([]int{8}, testConfig("nocompile", 1, 0), testConfig("nosyntax", 1, 1),
		testConfig("emitpanic", 1, 2), testConfig("nocompile", 1, 3), testConfig("bogus", 1, 4),
		testConfig("badsig", 1, 5))
	m := New(fastOptions(t))
	var started atomic.Int32
	m.onStart = func(int) { started.Add(1) }
	got, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	check(t, b, got, []want{
		{measure.StatusBuildError, []string{"k000/k000.go:", "undefinedValue"}},
		{measure.StatusBuildError, []string{"not valid Go"}},
		{measure.StatusBuildError, []string{"panicked"}},
		{measure.StatusBuildError, []string{"k003/k003.go:", "undefinedValue"}},
		{measure.StatusInvalid, nil},
		{measure.StatusBuildError, []string{"k005/k005.go:", "Kernel"}},
	})
	if n := started.Load(); n != 0 {
		t.Errorf("%d candidates started, want none", n)
	}
}

// Cancelling stops a batch at once, even in a candidate that never ends, and
// returns what was finished.
func TestMeasureCancel(t *testing.T) {
	needGo(t)
	opts := fastOptions(t)
	opts.Timeout = 10 * time.Minute
	m := New(opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.onStart = func(id int) {
		if id == 1 {
			cancel()
		}
	}
	b := batchOf([]int{16}, testConfig("ok", 1, 0), testConfig("hang", 1, 1), testConfig("ok", 1, 2))
	start := time.Now()
	got, err := m.Measure(ctx, b)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Measure returned %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Measure took %v after cancellation; it waited for the candidate", d)
	}
	check(t, b, got, []want{{measure.StatusOK, nil}})
}

func TestMeasureInfrastructureErrors(t *testing.T) {
	sm86, err := device.Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts *Options
		b    measure.Batch
		want string
		is   error
	}{
		{"no go", &Options{GoCommand: filepath.Join(t.TempDir(), "go")}, batchOf([]int{4}, testConfig("ok", 1, 0)), "go command", ErrNoGo},
		{"cuda target", nil, measure.Batch{Template: testTemplate(), Shape: []int{4}, Target: sm86,
			Configs: []schedule.Config{testConfig("ok", 1, 0)}}, "not a CPU", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New(tt.opts).Measure(context.Background(), tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "cpu: ") {
				t.Errorf("Measure: %v, want an error about %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Measure: %v, want an error that is %v", err, tt.is)
			}
			if len(got) != 0 {
				t.Errorf("Measure returned results: %+v", got)
			}
		})
	}
	if got, err := New(nil).Measure(context.Background(), batchOf([]int{4})); got != nil || err != nil {
		t.Errorf("empty batch: %v, %v; want nothing", got, err)
	}
}

func TestTimeoutDefaults(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		best time.Duration
		want time.Duration
	}{
		{"no best", Options{}, 0, 10 * time.Second},
		{"fast best hits the floor", Options{}, time.Millisecond, 2 * time.Second},
		{"slow best", Options{}, 100 * time.Millisecond, 20*time.Millisecond + 50*14*100*time.Millisecond},
		{"more samples wait longer", Options{MinSamples: 100}, 100 * time.Millisecond, 20*time.Millisecond + 50*104*100*time.Millisecond},
		{"explicit wins", Options{Timeout: time.Second}, time.Hour, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.withDefaults().timeout(tt.best); got != tt.want {
				t.Errorf("timeout(%v) = %v, want %v", tt.best, got, tt.want)
			}
		})
	}
}

// After its check, a candidate gets three times the time its estimate
// calls for, and 2s more, up to 2min; a fixed Timeout leaves its limit
// alone.
func TestCheckedTimeout(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		callNS float64
		calls  int
		want   time.Duration
		ok     bool
	}{
		{"fast", Options{}, 1e3, 20_000, 2*time.Second + 60*time.Millisecond, true},
		{"slow", Options{}, 5e8, 15, 2*time.Second + 3*7500*time.Millisecond, true},
		{"capped", Options{}, 60e9, 4, 2 * time.Minute, true},
		{"huge estimate", Options{}, 1e300, 1 << 40, 2 * time.Minute, true},
		{"fixed", Options{Timeout: time.Second}, 5e8, 15, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.opts.withDefaults().checkedTimeout(tt.callNS, tt.calls)
			if got != tt.want || ok != tt.ok {
				t.Errorf("checkedTimeout(%g, %d) = %v, %v; want %v, %v", tt.callNS, tt.calls, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	res := make([]measure.Result, 5)
	spread(res, []int{0, 2, 4}, 10, func(r *measure.Result, d int64) { r.BuildNS = d })
	var sum int64
	for i, r := range res {
		sum += r.BuildNS
		if (i%2 == 1) != (r.BuildNS == 0) {
			t.Errorf("result %d got %dns", i, r.BuildNS)
		}
	}
	if sum != 10 {
		t.Errorf("shares add up to %d, want 10", sum)
	}
}
