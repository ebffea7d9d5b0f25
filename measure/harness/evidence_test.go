package harness

import (
	"slices"
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	ms := time.Millisecond
	samples := []Sample{
		{Wall: ms, CPU: 2 * ms},                 // the best: two goroutines, each a core
		{Wall: ms, CPU: 19 * ms / 10},           // within a fifth of it
		{Wall: 2 * ms, CPU: 2 * ms},             // one core lost for the whole sample
		{Wall: ms, CPU: 2 * ms, Involuntary: 1}, // preempted, whatever its share
		{Wall: ms, CPU: 15 * ms / 10},           // a quarter lost
	}
	disturbed, share := Judge(samples)
	want := []bool{false, false, true, true, true}
	for i := range want {
		if disturbed[i] != want[i] {
			t.Errorf("sample %d (%+v): disturbed %v, want %v", i, samples[i], disturbed[i], want[i])
		}
	}
	// Ratios 2, 1.9, 1, 2, 1.5: the median is 1.9, of the best 2.
	if share != 0.95 {
		t.Errorf("share %v, want 0.95", share)
	}

	// One sample gets the CPU time another thread ran up over several
	// samples, all at once: it does not make the others look starved.
	lump := []Sample{{Wall: ms, CPU: 9 * ms}}
	for range 9 {
		lump = append(lump, Sample{Wall: ms, CPU: ms})
	}
	if d, share := Judge(lump); slices.Contains(d, true) || share != 1 {
		t.Errorf("a lump of CPU time: disturbed %v, share %v; want none, 1", d, share)
	}

	if d, share := Judge(nil); len(d) != 0 || share != 0 {
		t.Errorf("no samples: %v, %v", d, share)
	}
	// No CPU time could be read: nothing is disturbed for want of it.
	if d, share := Judge([]Sample{{Wall: ms}, {Wall: 2 * ms}}); d[0] || d[1] || share != 0 {
		t.Errorf("unreadable CPU time: %v, %v", d, share)
	}
}

func TestSummary(t *testing.T) {
	samples := []Sample{{Involuntary: 2}, {}, {Involuntary: 1}}
	disturbed := []bool{true, false, true}
	e := Summary(samples, disturbed, 0.9, 5e6, 1.1)
	if e.Samples != 3 || e.Disturbed != 2 || e.InvoluntarySwitches != 3 || e.StealNS != 5e6 || e.CPUShare != 0.9 || e.Probe != 1.1 {
		t.Errorf("quiet probe: %+v", e)
	}
	// A probe that ran slow says the machine was busy all along: every
	// sample counts, even those the kernel's own CPU time did not show.
	if e := Summary(samples, disturbed, 0.9, 0, probeSlowdown*1.01); e.Disturbed != 3 {
		t.Errorf("slow probe: %d of 3 disturbed, want 3", e.Disturbed)
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
