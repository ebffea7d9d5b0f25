package main

import (
	"math"
	"runtime"
	"time"

	"github.com/autotune-dev/autotune/measure/harness"
)

// tune checks and times the candidates entries, in order.
func tune(d *data, entries []Entry, s settings) {
	for _, e := range entries {
		send(harness.Event{ID: e.ID, Event: harness.Start})
		r := measure(d, e, s)
		if msg := d.changed(); msg != "" && r.Status == harness.StatusOK {
			r = harness.Event{Status: harness.StatusWrongAnswer, Error: msg}
		}
		// Later candidates are judged against the fastest seen so far, so
		// a batch with no best known cuts its slow candidates too.
		for _, ns := range r.SamplesNS {
			if s.bestNS == 0 || ns < s.bestNS {
				s.bestNS = ns
			}
		}
		r.ID, r.Event = e.ID, harness.Result
		send(r)
	}
}

// measure checks e, tells the parent what its timing will cost, then
// times it. A panic is the candidate's crash, not the harness's.
func measure(d *data, e Entry, s settings) (r harness.Event) {
	defer func() {
		if p := recover(); p != nil {
			stack := make([]byte, 2048)
			r = crash(p, stack[:runtime.Stack(stack, false)])
		}
	}()
	if s.evidence {
		s.minSample = max(s.minSample, evidenceMinSample)
	}
	msg, slowest := d.check(e, nil)
	if msg != "" {
		return harness.Event{Status: harness.StatusWrongAnswer, Error: msg}
	}
	callNS := max(float64(slowest), 1)
	calls := s.plan(callNS)
	// Too slow to time fully within the budget: a few samples settle its
	// rank, and the parent's deadline, set from calls, stays short.
	slow := s.budget > 0 && float64(calls)*callNS > float64(s.budget)
	if slow {
		s = s.brief()
		calls = 1 + s.minSamples // the first timed call, then the samples
	}
	send(harness.Event{ID: e.ID, Event: harness.Checked, CallNS: callNS, Calls: calls})

	// A sample is reps calls, reps a power of two large enough that a
	// sample takes minSample; calibrating also warms up.
	reps := 1
	for {
		t0 := time.Now()
		for range reps {
			d.call(e)
		}
		took := time.Since(t0)
		// Far slower than the best already: a few samples settle its rank.
		if reps == 1 && !slow && s.bestNS > 0 && float64(took) > s.slowFactor*s.bestNS {
			s = s.brief()
			slow = true
		}
		if took >= s.minSample && reps < maxReps && !slow {
			// One interruption (the scheduler, a page fault) can make a
			// short sample look long enough, and leave each sample a
			// single call and the loop below hundreds of thousands of
			// samples on a loaded machine: confirm with a second timing.
			t0 = time.Now()
			for range reps {
				d.call(e)
			}
			took = min(took, time.Since(t0))
		}
		if took >= s.minSample || reps >= maxReps {
			break
		}
		reps *= 2
	}
	for range s.warmup * reps {
		d.call(e)
	}
	if !s.evidence {
		samples := sample(d, e, reps, s, nil)
		return harness.Event{Status: harness.StatusOK, Reps: reps, SamplesNS: samples}
	}
	return sampleJudged(d, e, reps, s, !slow)
}

// sample times samples of reps calls of e until there are s.minSamples of
// them adding up to s.minTime, or maxSamples. With a meter, it reads what
// the process used over each sample too.
func sample(d *data, e Entry, reps int, s settings, m *meter) []float64 {
	samples := make([]float64, 0, s.minSamples)
	var total time.Duration
	for (len(samples) < s.minSamples || total < s.minTime) && len(samples) < maxSamples {
		took := timeOnce(d, e, reps, m)
		total += took
		samples = append(samples, float64(took)/float64(reps))
	}
	return samples
}

// timeOnce times one sample of reps calls of e.
func timeOnce(d *data, e Entry, reps int, m *meter) time.Duration {
	clearUpper() // as every candidate starts: what ran before it must not slow it
	m.start()
	t0 := time.Now()
	for range reps {
		d.call(e)
	}
	took := time.Since(t0)
	m.stop(took)
	return took
}

// sampleJudged times e as sample does, with the evidence of contention:
// the calibration probe after the samples, the steal of the interval, the
// machine's runnable tasks not ours before and after (harness.Busy), and the CPU
// time and preemptions of every sample (harness.Judge). The probe runs
// once, after: a core held all along slows it then as well as before, a
// core held for part of the samples shows in their CPU time, and each
// run of it costs a tenth of a millisecond per core. With
// retake (not for a clearly slow candidate, whose rank its few samples
// settle anyway), samples judged disturbed are taken again, at most as
// many again as the first round took, so that timing stays within what
// checked told the parent to expect; the result leaves them out when
// s.minSamples others were not, and keeps every sample otherwise (the
// evidence then says how many were disturbed).
func sampleJudged(d *data, e Entry, reps int, s settings, retake bool) harness.Event {
	steal0, stealOK := harness.Steal()
	var others []int
	if n, ok := harness.Others(); ok {
		others = append(others, n)
	}
	var m meter
	samples := sample(d, e, reps, s, &m)
	// Judged against the first round's expected share, each sample taken
	// again adds to the undisturbed ones or not, until there are enough.
	want := harness.Expected(m.samples, e.Threads)
	clean, total := 0, time.Duration(0)
	for _, u := range m.samples {
		if !harness.Disturbed(u, want, e.Threads) {
			clean, total = clean+1, total+u.Wall
		}
	}
	for first := len(samples); retake && len(samples) < 2*first && len(samples) < maxSamples &&
		(clean < s.minSamples || total < s.minTime); {
		took := timeOnce(d, e, reps, &m)
		samples = append(samples, float64(took)/float64(reps))
		if u := m.samples[len(m.samples)-1]; !harness.Disturbed(u, want, e.Threads) {
			clean, total = clean+1, total+u.Wall
		}
	}
	if n, ok := harness.Others(); ok && len(others) == 1 {
		others = append(others, n)
	} else {
		others = nil // one reading alone may catch a task of a moment
	}
	disturbed, share := harness.Judge(m.samples, e.Threads)
	var steal int64
	if steal1, ok := harness.Steal(); ok && stealOK {
		steal = steal1 - steal0
	}
	slowdown := float64(probe()) / float64(probeBest)
	ev := harness.Summary(m.samples, disturbed, share, steal, runtime.NumCPU(), slowdown, harness.Busy(others))
	if clean := undisturbed(samples, disturbed); len(clean) >= s.minSamples {
		samples = clean
	}
	return harness.Event{Status: harness.StatusOK, Reps: reps, SamplesNS: samples, Evidence: &ev, ProbeNS: float64(probeBest)}
}

// undisturbed returns the samples not disturbed.
func undisturbed(samples []float64, disturbed []bool) (clean []float64) {
	for i, ns := range samples {
		if !disturbed[i] {
			clean = append(clean, ns)
		}
	}
	return clean
}

// evidenceMinSample is the least time of a sample when the evidence is
// gathered: reading the usage around a sample costs 1.5–6 µs (two system
// calls, more on a loaded VM), which next to samples of 10 µs would
// take a third of a fast candidate's timing; next to 200 µs it is a few
// per cent of the timing and well under 1% of tuning's throughput, and a
// sample of the mean of a fast kernel's calls over 200 µs is as good a
// sample.
const evidenceMinSample = 200 * time.Microsecond

// brief returns s for a clearly slow candidate: slowSamples samples, no
// warm-up and no least total time.
func (s settings) brief() settings {
	s.warmup, s.minSamples, s.minTime = 0, s.slowSamples, 0
	return s
}

// plan returns about how many calls fully timing a candidate with s
// makes when one call takes callNS (at least 1): the calibration, which
// times every power of two up to the calls per sample twice (under 4
// times that), the warm-up and the samples.
func (s settings) plan(callNS float64) int {
	reps := 1
	for float64(reps)*callNS < float64(s.minSample) && reps < maxReps {
		reps *= 2
	}
	samples := max(s.minSamples, int(math.Ceil(float64(s.minTime)/(float64(reps)*callNS))))
	samples = min(samples, maxSamples)
	return 4*reps + (s.warmup+samples)*reps
}
