package cpu

import (
	"strings"
	"testing"
	"time"
)

func TestParseCPUTimes(t *testing.T) {
	got, ok := parseCPUTimes([]byte("cpu  100 5 20 800 10 1 2 12 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"))
	want := cpuTimes{total: 950, idle: 810, steal: 12}
	if !ok || got != want {
		t.Errorf("got %+v, %v; want %+v", got, ok, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 7 x\n"} {
		if _, ok := parseCPUTimes([]byte(bad)); ok {
			t.Errorf("%q: ok", bad)
		}
	}
}

func TestParseProcessStat(t *testing.T) {
	// A name with a space and a parenthesis: the last ')' ends it.
	line := "4242 (go build) x) R 1 1 1 0 -1 4194304 99 0 0 0 250 50 0 0 20 0 1 0 2368618\n"
	pid, name, ticks, ok := parseProcessStat([]byte(line))
	if !ok || pid != 4242 || name != "go build) x" || ticks != 300 {
		t.Errorf("got %d %q %d %v", pid, name, ticks, ok)
	}
	for _, bad := range []string{"", "x (a) R 1", "12 (a) R 1 2 3"} {
		if _, _, _, ok := parseProcessStat([]byte(bad)); ok {
			t.Errorf("%q: ok", bad)
		}
	}
}

func TestBusiest(t *testing.T) {
	before := map[int]Process{1: {PID: 1, Name: "idle", Share: 500}, 2: {PID: 2, Name: "build", Share: 1000}, 3: {PID: 3, Name: "gone", Share: 7}}
	after := map[int]Process{1: {PID: 1, Name: "idle", Share: 501}, 2: {PID: 2, Name: "build", Share: 1180}, 4: {PID: 4, Name: "new", Share: 40}}
	got := busiest(before, after, 2*time.Second)
	// build: 180 ticks in 2 s, 0.9 of a core; new: 0.2; idle: 0.005, left out.
	if len(got) != 2 || got[0].Name != "build" || got[0].Share != 0.9 || got[1].Name != "new" || got[1].Share != 0.2 {
		t.Errorf("busiest %+v", got)
	}
}

func TestVerdict(t *testing.T) {
	steady := []float64{100, 101, 100, 102, 100}
	for _, tt := range []struct {
		name string
		m    Machine
		want []string // in the verdict; nil: quiet
	}{
		{"quiet", Machine{Cores: 2, Known: true, Busy: 0.05, Peak: steady, Governor: "performance"}, nil},
		{"unknown OS", Machine{Cores: 2, Peak: steady}, nil},
		{"a busy core", Machine{Cores: 2, Known: true, Busy: 0.5, Peak: steady}, []string{"1.0 of 2 cores"}},
		{"steal", Machine{Cores: 2, Known: true, Steal: 0.1, Peak: steady}, []string{"hypervisor takes 10%"}},
		{"unsteady peak", Machine{Cores: 2, Peak: []float64{100, 180, 170, 160, 150}}, []string{"at 62% of its best"}},
		{"governor", Machine{Cores: 2, Peak: steady, Governor: "powersave"}, []string{"governor is powersave"}},
	} {
		v := tt.m.Verdict()
		if tt.want == nil && !strings.HasPrefix(v, "quiet") {
			t.Errorf("%s: %q, want quiet", tt.name, v)
		}
		for _, w := range tt.want {
			if !strings.HasPrefix(v, "busy") || !strings.Contains(v, w) {
				t.Errorf("%s: %q, want busy with %q", tt.name, v, w)
			}
		}
	}
}
