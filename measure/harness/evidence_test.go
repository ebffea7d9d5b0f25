package harness

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	cases := []struct {
		name    string
		threads int
		samples []Sample
		want    []bool
		share   float64
	}{{
		// On a small VM nearly every sample sees a preemption; one that
		// cost 50 µs of a 10 ms sample is no reason to take it again.
		name: "one goroutine, a short preemption", threads: 1,
		samples: []Sample{{Wall: 10 * ms, CPU: 10 * ms}, {Wall: 10 * ms, CPU: 10*ms - 50*us, Involuntary: 1}, {Wall: 10 * ms, CPU: 10 * ms}},
		want:    []bool{false, false, false}, share: (30*ms - 50*us).Seconds() / (30 * ms).Seconds(),
	}, {
		name: "one goroutine, a tick's preemption of a long sample", threads: 1,
		samples: []Sample{{Wall: 100 * ms, CPU: 96 * ms, Involuntary: 1}, {Wall: 100 * ms, CPU: 100 * ms}},
		want:    []bool{false, false}, share: 0.98,
	}, {
		name: "one goroutine, a sample that lost 30%", threads: 1,
		samples: []Sample{{Wall: 10 * ms, CPU: 10 * ms}, {Wall: 10 * ms, CPU: 7 * ms, Involuntary: 1}, {Wall: 10 * ms, CPU: 10 * ms}},
		want:    []bool{false, true, false}, share: 0.9,
	}, {
		// The time lost counts, not the number of preemptions, so a short
		// sample with one long stall is disturbed.
		name: "one goroutine, a big stall in a short sample", threads: 1,
		samples: []Sample{{Wall: 200 * us, CPU: 200 * us}, {Wall: 300 * us, CPU: 200 * us, Involuntary: 1}, {Wall: 200 * us, CPU: 200 * us}},
		want:    []bool{false, true, false}, share: 600.0 / 700,
	}, {
		// One long stall speaks for its own sample only.
		name: "one goroutine, one long stall", threads: 1,
		samples: append(slices.Repeat([]Sample{{Wall: 200 * us, CPU: 200 * us}}, 9), Sample{Wall: 20 * ms, CPU: 200 * us, Involuntary: 3}),
		want:    append(slices.Repeat([]bool{false}, 9), true), share: 2000.0 / 21800,
	}, {
		name: "two goroutines, one long stall", threads: 2,
		samples: append(slices.Repeat([]Sample{{Wall: 200 * us, CPU: 400 * us, Involuntary: 1}}, 9), Sample{Wall: 20 * ms, CPU: 400 * us, Involuntary: 3}),
		want:    append(slices.Repeat([]bool{false}, 9), true), share: 4000.0 / 43600,
	}, {
		// The runtime's own threads add CPU time: a sample that got more
		// than a core does not raise the bar for the others.
		name: "one goroutine, the runtime's threads on top", threads: 1,
		samples: []Sample{{Wall: ms, CPU: 3 * ms / 2}, {Wall: ms, CPU: ms}, {Wall: ms, CPU: ms}},
		want:    []bool{false, false, false}, share: 1,
	}, {
		// Two goroutines that got one core's worth throughout, preempted
		// in every sample: measured against each other the samples look
		// alike, against two cores they lost half.
		name: "two goroutines on one core", threads: 2,
		samples: slices.Repeat([]Sample{{Wall: 2 * ms, CPU: 2 * ms, Involuntary: 1}}, 3),
		want:    []bool{true, true, true}, share: 0.5,
	}, {
		// The same shortfall with a preemption in one sample of ten: a
		// kernel whose second goroutine idles of its own accord, which
		// two milliseconds of preemption do not account for.
		name: "two goroutines, unequal work", threads: 2,
		samples: append(slices.Repeat([]Sample{{Wall: 2 * ms, CPU: 2 * ms}}, 9), Sample{Wall: 2 * ms, CPU: 2 * ms, Involuntary: 1}),
		want:    slices.Repeat([]bool{false}, 10), share: 0.5,
	}, {
		// The OS adds another thread's CPU time in lumps: one sample gets
		// what the others missed, and none is disturbed for it.
		name: "two goroutines, a lump of CPU time", threads: 2,
		samples: append([]Sample{{Wall: ms, CPU: 10 * ms}}, slices.Repeat([]Sample{{Wall: ms, CPU: ms}}, 9)...),
		want:    slices.Repeat([]bool{false}, 10), share: 0.95,
	}, {
		// A sample far shorter than the accounting grain cannot be judged
		// alone: the half millisecond it read short of two cores may be
		// the other thread's time the OS had not added yet.
		name: "two goroutines, a short sample read a third short", threads: 2,
		samples: []Sample{{Wall: ms, CPU: 2 * ms}, {Wall: ms, CPU: 19 * ms / 10}, {Wall: 3 * ms / 2, CPU: 2 * ms}, {Wall: ms, CPU: 2 * ms}},
		want:    []bool{false, false, false, false}, share: 7.9 / 9,
	}, {
		name: "two goroutines, a long sample lost a third", threads: 2,
		samples: []Sample{{Wall: 20 * ms, CPU: 40 * ms}, {Wall: 20 * ms, CPU: 38 * ms}, {Wall: 30 * ms, CPU: 40 * ms, Involuntary: 4}, {Wall: 20 * ms, CPU: 40 * ms}},
		want:    []bool{false, false, true, false}, share: 158.0 / 180,
	}, {
		// A quiet run of a kernel on two goroutines with samples shorter
		// than a tick: the timing thread waits for the other a fifth of
		// each sample, and the other's time arrives in lumps of a tick in
		// one sample of four. Nothing lost anything to other work.
		name: "two goroutines, quiet, the other thread's time late", threads: 2,
		samples: slices.Repeat([]Sample{{Wall: ms, CPU: 4*ms + 800*us}, {Wall: ms, CPU: 800 * us}, {Wall: ms, CPU: 800 * us}, {Wall: ms, CPU: 800 * us}}, 4),
		want:    slices.Repeat([]bool{false}, 16), share: 7.2 / 8,
	}, {
		// Without the thread count, samples are measured against the
		// least disturbed (Reference): ratios 2, 1.9, 1, 2, 1.5.
		name: "threads not known", threads: 0,
		samples: []Sample{{Wall: ms, CPU: 2 * ms}, {Wall: ms, CPU: 19 * ms / 10}, {Wall: 2 * ms, CPU: 2 * ms}, {Wall: ms, CPU: 2 * ms, Involuntary: 1}, {Wall: ms, CPU: 15 * ms / 10}},
		want:    []bool{false, false, true, false, true}, share: 0.95,
	}, {
		name: "no CPU time read", threads: 1,
		samples: []Sample{{Wall: ms}, {Wall: 2 * ms}},
		want:    []bool{false, false}, share: 0,
	}, {
		name: "no samples", threads: 2,
	}}
	for _, c := range cases {
		disturbed, share := Judge(c.samples, c.threads)
		if !slices.Equal(disturbed, c.want) && len(disturbed)+len(c.want) > 0 {
			t.Errorf("%s: disturbed %v, want %v", c.name, disturbed, c.want)
		}
		if math.Abs(share-c.share) > 1e-9 {
			t.Errorf("%s: share %v, want %v", c.name, share, c.share)
		}
	}
}

func TestSummary(t *testing.T) {
	ms := time.Millisecond
	samples := []Sample{{Wall: 100 * ms, Involuntary: 2}, {Wall: 100 * ms}, {Wall: 100 * ms, Involuntary: 1}}
	disturbed := []bool{true, false, true}
	e := Summary(samples, disturbed, 0.9, 5e6, 2, 1.1, false)
	if e.Samples != 3 || e.Disturbed != 2 || e.InvoluntarySwitches != 3 || e.StealNS != 5e6 || e.CPUShare != 0.9 || e.Probe != 1.1 {
		t.Errorf("quiet probe: %+v", e)
	}
	// A probe that ran slow says the machine was busy all along: every
	// sample counts, even those the kernel's own CPU time did not show.
	if e := Summary(samples, disturbed, 0.9, 0, 2, probeSlowdown*1.01, false); e.Disturbed != 3 {
		t.Errorf("slow probe: %d of 3 disturbed, want 3", e.Disturbed)
	}
	// Steal of a quarter of both cores' time over the samples marks them
	// all; a tick's worth does not.
	if e := Summary(samples, disturbed, 0.9, int64(150*ms), 2, 1, false); e.Disturbed != 3 {
		t.Errorf("steal of a quarter: %d of 3 disturbed, want 3", e.Disturbed)
	}
	if e := Summary(samples, disturbed, 0.9, int64(10*ms), 2, 1, false); e.Disturbed != 2 {
		t.Errorf("steal of a tick: %d of 3 disturbed, want 2", e.Disturbed)
	}
}

func TestBusy(t *testing.T) {
	ms := time.Millisecond
	samples := []Sample{{Wall: 100 * ms}, {Wall: 100 * ms}}
	if e := Summary(samples, []bool{false, false}, 1, 0, 2, 1, true); e.Disturbed != 2 {
		t.Errorf("busy machine: %d of 2 disturbed, want 2", e.Disturbed)
	}
	cases := []struct {
		name   string
		others []int
		want   bool
	}{
		// A process holding a core, before and after the samples.
		{"another process throughout", []int{1, 2}, true},
		{"a task of a moment", []int{1, 0}, false},
		{"quiet", []int{0, 0}, false},
		{"no readings", nil, false},
	}
	for _, c := range cases {
		if got := Busy(c.others); got != c.want {
			t.Errorf("%s: Busy(%v) = %v, want %v", c.name, c.others, got, c.want)
		}
	}
}

func TestTaskState(t *testing.T) {
	for stat, want := range map[string]byte{
		"4408 (cat) R 4406 4406": 'R',
		"4409 (a) b) S 1 1":      'S',
		"4410 (harness) D 1":     'D',
		"broken":                 0,
		"4411 (cut)":             0,
	} {
		if got := taskState([]byte(stat)); got != want {
			t.Errorf("taskState(%q) = %q, want %q", stat, got, want)
		}
	}
}

func TestParseRunnable(t *testing.T) {
	if n, ok := parseRunnable([]byte("1.20 1.10 0.90 3/181 4242\n")); !ok || n != 3 {
		t.Errorf("parseRunnable = %d, %v, want 3, true", n, ok)
	}
	if _, ok := parseRunnable([]byte("1.20 1.10")); ok {
		t.Error("parseRunnable of a short line: ok")
	}
}

func TestParseSteal(t *testing.T) {
	stat := "cpu  4705 356 584 3699 23 23 0 12 0 0\ncpu0 1393280 32966 572056 13343292 6130 0 17875 7 0 0\nintr 1\n"
	ns, ok := parseSteal([]byte(stat))
	if !ok || ns != 12*int64(time.Second)/userHZ {
		t.Errorf("steal %d, %v; want %d", ns, ok, 12*int64(time.Second)/userHZ)
	}
	for _, bad := range []string{"", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 7 x 9\n"} {
		if _, ok := parseSteal([]byte(bad)); ok {
			t.Errorf("%q: ok", bad)
		}
	}
}
