package cpu

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
)

// fakeHarnessEnv makes the test binary act as a harness that follows a
// script, to drive the runner through what a real harness rarely does.
const fakeHarnessEnv = "AUTOTUNE_FAKE_HARNESS"

func TestMain(m *testing.M) {
	if script := os.Getenv(fakeHarnessEnv); script != "" {
		os.Exit(fakeHarness(script, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeHarness runs the candidates of -ids, printing what script says.
func fakeHarness(script string, args []string) int {
	var ids []string
	for i, a := range args {
		if a == "-"+flagIDs && i+1 < len(args) {
			ids = strings.Split(args[i+1], ",")
		}
	}
	say := func(s string) { fmt.Println(s) }
	if script == "startup" {
		fmt.Fprintln(os.Stderr, "harness: in0.f32: no such file or directory")
		return 2
	}
	say(`{"id":-1,"event":"ready"}`)
	for i, id := range ids {
		say(fmt.Sprintf(`{"id":%s,"event":"start"}`, id))
		switch {
		case script == "stray":
			say("a kernel wrote this to fd 1")
		case script == "wrongid":
			say(`{"id":99,"event":"result","status":"ok","samples_ns":[1]}`)
			continue
		case script == "nosamples":
			say(fmt.Sprintf(`{"id":%s,"event":"result","status":"ok"}`, id))
			continue
		}
		say(fmt.Sprintf(`{"id":%s,"event":"result","status":"ok","samples_ns":[3,1,2]}`, id))
		if script == "between" && len(ids) == 3 && i == 0 {
			return 0 // dies after a result, before the next start
		}
	}
	say(`{"id":-1,"event":"done"}`)
	return 0
}

func TestRunnerScripts(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	tests := []struct {
		script string
		err    string // substring of the error, "" for none
		ok     int    // results that must be ok
	}{
		{"normal", "", 3},
		{"stray", "", 3},
		{"between", "", 3},
		{"startup", "failed before running a candidate", 0},
		{"wrongid", "harness protocol", 0},
		{"nosamples", "harness protocol", 0},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			t.Setenv(fakeHarnessEnv, tt.script)
			r := &runner{
				bin: self, dir: t.TempDir(), opts: (*Options)(nil).withDefaults(), timeout: 10 * time.Second,
				res: make([]measure.Result, 3), finished: make([]bool, 3), own: make([]time.Duration, 3),
			}
			err := r.run(context.Background(), []int{0, 1, 2})
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("run: %v, want an error containing %q", err, tt.err)
			}
			if tt.script == "startup" && !strings.Contains(err.Error(), "no such file") {
				t.Errorf("the error does not show the harness's stderr: %v", err)
			}
			ok := 0
			for i, res := range r.res {
				if res.Status == measure.StatusOK {
					ok++
					if !r.finished[i] || !slices.Equal(res.SamplesNS, []float64{3, 1, 2}) || res.MedianNS != 2 {
						t.Errorf("result %d: %+v", i, res)
					}
				}
			}
			if ok != tt.ok {
				t.Errorf("%d ok results, want %d: %+v", ok, tt.ok, r.res)
			}
		})
	}
}

func TestStderrBuffer(t *testing.T) {
	long := strings.Repeat("x", stderrHeadBytes)
	tests := []struct {
		name   string
		writes []string
		want   []string // substrings
		not    []string
	}{
		{"empty", nil, []string{"(stderr was empty)"}, nil},
		{"short", []string{"exit ", "message\n"}, []string{"exit message"}, []string{"[..."}},
		{"long keeps both ends", []string{"FIRST " + long, strings.Repeat("y\n", 3*stderrTailBytes), "LAST\n"},
			[]string{"FIRST", "LAST", "bytes ...]"}, nil},
		{"go dump keeps the first goroutine", []string{"fatal error: fault\n\ngoroutine 1 [running]:\nmain.f()\n\ngoroutine 2 [idle]:\nruntime.g()\n"},
			[]string{"fatal error: fault", "main.f()", "[other goroutines left out]"}, []string{"runtime.g()"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b stderrBuffer
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			got := b.String()
			for _, s := range tt.want {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q in\n%s", s, got)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(got, s) {
					t.Errorf("unexpected %q in\n%s", s, got)
				}
			}
			if len(got) > stderrHeadBytes+stderrTailBytes+100 {
				t.Errorf("kept %d bytes", len(got))
			}
		})
	}
}

// A result's evidence becomes its Disturbance when it counts what it can
// count; the runner does not trust a harness with more.
func TestDisturbance(t *testing.T) {
	if d := disturbance(nil); d != nil {
		t.Errorf("no evidence: %+v", d)
	}
	if d := disturbance(&harness.Evidence{Samples: 3, Disturbed: 4}); d != nil {
		t.Errorf("4 of 3 disturbed: %+v", d)
	}
	e := harness.Evidence{Samples: 12, Disturbed: 7, CPUShare: 0.8, StealNS: 5, InvoluntarySwitches: 9, Probe: 1.3}
	want := measure.Disturbance{Samples: 12, Disturbed: 7, CPUShare: 0.8, StealNS: 5, InvoluntarySwitches: 9, Probe: 1.3}
	if d := disturbance(&e); d == nil || *d != want || !d.Contended() {
		t.Errorf("%+v: %+v, want %+v, contended", e, d, want)
	}
}
