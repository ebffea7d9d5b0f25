package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure/harness"
)

// affine is a correct kernel of the test workload: out = 2*in + 1.
func affine(out []float32, ins [][]float32) {
	for i, x := range ins[0] {
		out[i] = 2*x + 1
	}
}

// testData is the test workload, out = 2*in + 1 over n elements, with a
// second input set of large values.
func testData(t *testing.T, n int) *data {
	t.Helper()
	w := harness.Workload{Inputs: []int{n}, Output: n, Sets: []harness.SetInfo{{Name: "uniform", Rel: 1e-6, Abs: 1e-6}, {Name: "large", Rel: 1e-6, Abs: 1e-6}}}
	var sets []harness.Set
	for s, scale := range []float32{1, 1e6} {
		set := harness.Set{SetInfo: w.Sets[s], Ins: [][]float32{make([]float32, n)}, Want: make([]float64, n)}
		for i := range n {
			set.Ins[0][i] = scale * float32(i%7+1) / 4
			set.Want[i] = 2*float64(set.Ins[0][i]) + 1
		}
		sets = append(sets, set)
	}
	dir := t.TempDir()
	if err := harness.Write(dir, w, sets); err != nil {
		t.Fatal(err)
	}
	w, sets, err := harness.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return newData(w, sets)
}

// capture points the protocol at a buffer until the test ends, and
// returns a function that decodes what was sent.
func capture(t *testing.T) func() []harness.Event {
	var buf bytes.Buffer
	saved := proto
	proto = harness.Sender{W: &buf}
	t.Cleanup(func() { proto = saved })
	return func() []harness.Event {
		var events []harness.Event
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			e, ok := harness.Decode(line)
			if !ok {
				t.Fatalf("not an event: %q", line)
			}
			events = append(events, e)
		}
		return events
	}
}

var fast = settings{warmup: 1, minSamples: 4, minTime: time.Millisecond, minSample: 10 * time.Microsecond, slowFactor: 10, slowSamples: 2}

// Each candidate gets the status its behaviour earns, on the input set
// where it shows, and the candidates after a failure run as usual.
func TestTune(t *testing.T) {
	events := capture(t)
	d := testData(t, 17)
	entries := []Entry{
		{ID: 0, Fn: affine},
		{ID: 3, Fn: func(out []float32, ins [][]float32) { copy(out, ins[0]) }},
		{ID: 4, Fn: func(out []float32, ins [][]float32) { // wrong for large inputs only
			for i, x := range ins[0] {
				out[i] = 2*min(x, 1e3) + 1
			}
		}},
		{ID: 5, Fn: func([]float32, [][]float32) { panic("boom") }},
		{ID: 6, Fn: func(out []float32, ins [][]float32) { affine(out, ins); ins[0][2] = 0 }},
		{ID: 8, Fn: func(out []float32, ins [][]float32) { affine(out[:16], [][]float32{ins[0][:16]}) }}, // leaves the poison
	}
	tune(d, entries, fast)
	want := []struct {
		status string
		error  string
	}{
		{harness.StatusOK, ""},
		{harness.StatusWrongAnswer, "input set uniform: out[0] = 0.25, want 1.5"},
		{harness.StatusWrongAnswer, "input set large: out["},
		{harness.StatusCrash, "panic: boom"},
		{harness.StatusWrongAnswer, "wrote to input 0: in0[2] = 0"},
		{harness.StatusWrongAnswer, "out[16] = NaN"},
	}
	var seq harness.Sequence
	seq.Next(harness.Event{ID: -1, Event: harness.Ready})
	got := events()
	for _, e := range got {
		if err := seq.Next(e); err != nil {
			t.Fatal(err)
		}
	}
	// Only the candidate that passes its check says so, before its result.
	if len(got) != 2*len(entries)+1 || got[1].Event != harness.Checked || got[1].ID != 0 || got[1].Calls < fast.minSamples {
		t.Fatalf("%d events, want %d with the second checked: %+v", len(got), 2*len(entries)+1, got)
	}
	got = slices.Delete(got, 1, 2)
	for i, e := range got {
		if e.Event != harness.Result {
			continue
		}
		w := want[i/2]
		if e.ID != entries[i/2].ID || e.Status != w.status || !strings.Contains(e.Error, w.error) {
			t.Errorf("candidate %d: %s %q, want %s %q", e.ID, e.Status, e.Error, w.status, w.error)
		}
		if ok := e.Status == harness.StatusOK; ok != (len(e.SamplesNS) >= fast.minSamples && e.Reps >= 1) {
			t.Errorf("candidate %d: %s with %d samples of %d calls", e.ID, e.Status, len(e.SamplesNS), e.Reps)
		}
	}
	// The set in the buffers is the first, intact, whatever the kernels did.
	if msg := harness.Changed(d.ins, d.sets[0].Ins); msg != "" {
		t.Error(msg)
	}
}

// A candidate far slower than the fastest known gets slowSamples samples.
func TestTuneCutsSlowCandidates(t *testing.T) {
	events := capture(t)
	d := testData(t, 1000)
	slow := func(out []float32, ins [][]float32) {
		for range 200 {
			affine(out, ins)
		}
	}
	tune(d, []Entry{{ID: 0, Fn: affine}, {ID: 1, Fn: slow}}, fast)
	got := results(events())
	if n := len(got[0].SamplesNS); n < fast.minSamples {
		t.Errorf("the fast candidate has %d samples", n)
	}
	if n := len(got[1].SamplesNS); n != fast.slowSamples {
		t.Errorf("the slow candidate has %d samples, want %d", n, fast.slowSamples)
	}
}

// A candidate whose full timing would take longer than the budget at the
// speed of its check gets slowSamples samples, even with no best known,
// and its checked event promises that many calls (and one to calibrate).
func TestTuneBudget(t *testing.T) {
	sleepy := func(out []float32, ins [][]float32) {
		time.Sleep(2 * time.Millisecond)
		affine(out, ins)
	}
	for _, tt := range []struct {
		name    string
		budget  time.Duration
		samples int // -1: at least fast.minSamples
	}{
		{"within", time.Minute, -1},
		{"over", 5 * time.Millisecond, fast.slowSamples},
		{"no budget", 0, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events := capture(t)
			s := fast
			s.budget = tt.budget
			tune(testData(t, 17), []Entry{{ID: 0, Fn: sleepy}}, s)
			got := events()
			if len(got) != 3 || got[1].Event != harness.Checked || got[2].Status != harness.StatusOK {
				t.Fatalf("events %+v, want start, checked and an ok result", got)
			}
			n, calls := len(got[2].SamplesNS), got[1].Calls
			switch {
			case tt.samples >= 0 && (n != tt.samples || calls != 1+tt.samples):
				t.Errorf("%d samples, %d calls promised; want %d and %d", n, calls, tt.samples, 1+tt.samples)
			case tt.samples < 0 && (n < fast.minSamples || calls < 1+fast.warmup+n):
				t.Errorf("%d samples, %d calls promised; want at least %d samples and the calls they take", n, calls, fast.minSamples)
			}
			if got[1].CallNS < float64(2*time.Millisecond) {
				t.Errorf("checked says a call takes %gns; each sleeps 2ms", got[1].CallNS)
			}
		})
	}
}

// The calls plan promises cover calibrating, warming up and the samples,
// for a fast kernel (many calls per sample, MinTime decides) as for a
// slow one (MinSamples decides).
func TestPlan(t *testing.T) {
	s := settings{warmup: 3, minSamples: 10, minTime: 20 * time.Millisecond, minSample: 10 * time.Microsecond}
	tests := []struct {
		callNS    float64
		atLeastNS float64 // the time the calls must cover
		atMostNS  float64
	}{
		{1, 20e6, 100e6},          // 1ns: 16384 calls a sample
		{1e3, 20e6, 100e6},        // 1µs
		{1e6, 23e6, 100e6},        // 1ms: 3 warm-up and 20 samples for MinTime
		{1e8, 13 * 1e8, 20 * 1e8}, // 100ms: 3 warm-up and MinSamples
	}
	for _, tt := range tests {
		got := float64(s.plan(tt.callNS)) * tt.callNS
		if got < tt.atLeastNS || got > tt.atMostNS {
			t.Errorf("plan(%g) = %d calls, %gns; want %g to %gns", tt.callNS, s.plan(tt.callNS), got, tt.atLeastNS, tt.atMostNS)
		}
	}
}

// results returns the result events of events, in order.
func results(events []harness.Event) []harness.Event {
	var r []harness.Event
	for _, e := range events {
		if e.Event == harness.Result {
			r = append(r, e)
		}
	}
	return r
}

// A sample of one call (as when an interruption decided the calibration)
// with a long -mintime stops at maxSamples samples: a record holds at most
// tunedb.MaxSamples.
func TestTuneBoundsSamples(t *testing.T) {
	events := capture(t)
	tune(testData(t, 17), []Entry{{ID: 0, Fn: affine}}, settings{minSamples: 1, minTime: time.Hour})
	got := results(events())
	if len(got) != 1 || got[0].Status != harness.StatusOK || len(got[0].SamplesNS) != maxSamples || got[0].Reps != 1 {
		t.Errorf("got %d results, the last %s with %d samples of %d calls; want ok with %d samples", len(got), got[len(got)-1].Status, len(got[len(got)-1].SamplesNS), got[len(got)-1].Reps, maxSamples)
	}
}

func TestBench(t *testing.T) {
	const n = 1000
	for _, tt := range []struct {
		name  string
		table []Entry
		bad   string // the error of the failing entry; "" when all pass
	}{
		{"all pass", []Entry{
			{Name: "tuned", Verify: true, Fn: affine},
			{Name: "alloc", Verify: true, Fn: func(out []float32, ins [][]float32) {
				tmp := make([]float32, len(out)+1<<16)
				affine(tmp, ins)
				copy(out, tmp)
			}},
			{Name: "peak", Fn: peakKernel(1, 1, 100)},
			{Name: "floor", Fn: floorKernel(n, 1)},
		}, ""},
		{"a wrong baseline", []Entry{
			{Name: "tuned", Verify: true, Fn: affine},
			{Name: "wrong", Verify: true, Fn: floorKernel(n, 1)},
		}, "out[0] = 0.25"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events := capture(t)
			saved := table
			table = tt.table
			defer func() { table = saved }()
			runBench(testData(t, n), settings{warmup: 1, minSamples: 3, minSample: time.Microsecond})
			got := events()
			var results, rounds int
			for _, e := range got {
				switch e.Event {
				case harness.Result:
					results++
					name := table[e.ID].Name
					switch {
					case name == "wrong" && (e.Status != harness.StatusWrongAnswer || !strings.Contains(e.Error, tt.bad)):
						t.Errorf("wrong: %s %q", e.Status, e.Error)
					case name != "wrong" && (e.Status != harness.StatusOK || e.Reps < 1):
						t.Errorf("%s: %+v", name, e)
					case name == "alloc" && (e.Allocs != 1 || e.AllocBytes < 4*(n+1<<16)):
						t.Errorf("alloc allocates %d bytes in %d objects a call", e.AllocBytes, e.Allocs)
					case name != "alloc" && e.AllocBytes != 0:
						t.Errorf("%s allocates %d bytes a call", name, e.AllocBytes)
					}
				case harness.Round:
					rounds++
					if len(e.SamplesNS) != len(table) || slices.Min(e.SamplesNS) <= 0 {
						t.Errorf("round %v", e.SamplesNS)
					}
					// Each sample comes with what the process used over it.
					if len(e.Usage) != len(table) || slices.ContainsFunc(e.Usage, func(u harness.Sample) bool { return u.Wall <= 0 }) {
						t.Errorf("round usage %+v", e.Usage)
					}
				}
			}
			if results != len(table) || (rounds >= 3) != (tt.bad == "") || tt.bad != "" && rounds != 0 {
				t.Errorf("%d results and %d rounds", results, rounds)
			}
		})
	}
}

// Before each of its samples a bench entry runs untimed for at least
// -settle: every round, warm-up rounds included, spends that long on each
// entry before timing it, so the rounds of a bench of microsecond entries
// take at least rounds × entries × settle.
func TestBenchSettles(t *testing.T) {
	const settleFor = 4 * time.Millisecond
	events := capture(t)
	saved := table
	table = []Entry{{Name: "tuned", Verify: true, Fn: affine}, {Name: "floor", Fn: floorKernel(1000, 1)}}
	defer func() { table = saved }()
	d := testData(t, 1000)
	s := settings{warmup: 1, minSamples: 3, minSample: time.Microsecond, settle: settleFor}
	t0 := time.Now()
	runBench(d, s)
	took := time.Since(t0)
	rounds := s.warmup
	for _, e := range events() {
		if e.Event == harness.Round {
			rounds++
		}
	}
	if least := time.Duration(rounds*len(table)) * settleFor; rounds <= s.warmup || took < least {
		t.Errorf("%d rounds of %d entries took %v; with -settle %v they take at least %v", rounds, len(table), took, settleFor, least)
	}
}

// The floor copies its input whole, however it splits it; the peak
// writes a finite result.
func TestFloorAndPeak(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		in := make([]float32, 1001)
		for i := range in {
			in[i] = float32(i + 1)
		}
		out := make([]float32, len(in)+5)
		harness.Poison(out)
		floorKernel(len(in), threads)(out, [][]float32{in})
		if !slices.Equal(out[:len(in)], in) || !math.IsNaN(float64(out[len(in)])) {
			t.Errorf("floor with %d threads: wrote %v…", threads, out[len(in)-3:])
		}
	}
	out := []float32{float32(math.NaN())}
	peakKernel(1, 2, 10)(out, nil)
	if math.IsNaN(float64(out[0])) || math.IsInf(float64(out[0]), 0) {
		t.Errorf("peak wrote %g", out[0])
	}
}

// With evidence on, a result says how many samples were timed and how
// many were disturbed, and keeps no more samples than were timed; the
// probe's best goes back to the parent.
func TestTuneEvidence(t *testing.T) {
	events := capture(t)
	s := fast
	s.evidence = true
	tune(testData(t, 17), []Entry{{ID: 0, Fn: affine}}, s)
	got := results(events())
	if len(got) != 1 || got[0].Status != harness.StatusOK {
		t.Fatalf("results %+v", got)
	}
	e := got[0].Evidence
	switch {
	case e == nil:
		t.Fatal("no evidence")
	case e.Samples < len(got[0].SamplesNS) || e.Disturbed < 0 || e.Disturbed > e.Samples:
		t.Errorf("evidence %+v for %d samples kept", e, len(got[0].SamplesNS))
	case len(got[0].SamplesNS) < s.minSamples:
		t.Errorf("%d samples kept, want at least %d", len(got[0].SamplesNS), s.minSamples)
	case !(e.Probe >= 1) || !(got[0].ProbeNS > 0):
		t.Errorf("probe %v against a best of %v ns", e.Probe, got[0].ProbeNS)
	}
	// Without it, the harness sends none.
	tune(testData(t, 17), []Entry{{ID: 0, Fn: affine}}, fast)
	if got := results(events()); got[len(got)-1].Evidence != nil {
		t.Errorf("evidence %+v without -evidence", got[len(got)-1].Evidence)
	}
}

// BenchmarkEvidence reports what the evidence costs outside the timed
// calls: reading the usage around one sample, and one reading of the
// calibration probe (sampleJudged takes two per candidate).
func BenchmarkEvidence(b *testing.B) {
	b.Run("sample", func(b *testing.B) {
		var m meter
		for b.Loop() {
			m.start()
			m.stop(time.Microsecond)
			m.samples = m.samples[:0]
		}
	})
	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			probe()
		}
	})
}
