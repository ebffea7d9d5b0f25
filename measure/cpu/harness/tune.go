package main

import (
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

// measure checks e, then times it. A panic is the candidate's crash, not
// the harness's.
func measure(d *data, e Entry, s settings) (r harness.Event) {
	defer func() {
		if p := recover(); p != nil {
			stack := make([]byte, 2048)
			r = crash(p, stack[:runtime.Stack(stack, false)])
		}
	}()
	if msg := d.check(e, nil); msg != "" {
		return harness.Event{Status: harness.StatusWrongAnswer, Error: msg}
	}

	// A sample is reps calls, reps a power of two large enough that a
	// sample takes minSample; calibrating also warms up.
	reps := 1
	slow := false
	for {
		t0 := time.Now()
		for range reps {
			d.call(e)
		}
		took := time.Since(t0)
		// Far slower than the best already: a few samples settle its rank.
		if reps == 1 && s.bestNS > 0 && float64(took) > s.slowFactor*s.bestNS {
			s.warmup, s.minSamples, s.minTime = 0, s.slowSamples, 0
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
