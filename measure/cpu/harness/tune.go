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
	samples := make([]float64, 0, s.minSamples)
	var total time.Duration
	for (len(samples) < s.minSamples || total < s.minTime) && len(samples) < maxSamples {
		clearUpper() // as every candidate starts: what ran before it must not slow it
		t0 := time.Now()
		for range reps {
			d.call(e)
		}
		took := time.Since(t0)
		total += took
		samples = append(samples, float64(took)/float64(reps))
	}
	return harness.Event{Status: harness.StatusOK, Reps: reps, SamplesNS: samples}
}

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
