package tune

import (
	"math"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cpu"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// threadsKnob is the knob by which a CPU template sets how many goroutines
// a kernel runs on. Configs that differ in it are compared side by side
// before a winner is declared: a second goroutine is worth what the
// machine lends it at the moment, and records taken at other moments say
// more about the load then than about the config.
const threadsKnob = cpu.ThreadsKnob

// maxRemeasures bounds how often the leaders are measured again: after
// that, the machine is too noisy to say more, and the summary says so.
const maxRemeasures = 3

// maxCrossRemeasures bounds the rounds on a fleet, which needs more: the
// figures of a worker found wrong drop out a batch at a time.
const maxCrossRemeasures = 8

// leaders returns the configs to re-measure side by side: the
// t.Remeasure fastest, and, when the space has a threads knob, the
// fastest of each thread count not among them.
func leaders(t Task, w tunedb.Workload) ([]tunedb.Record, error) {
	if t.Space == nil {
		return t.Store.TopK(w, t.Remeasure)
	}
	if _, ok := t.Space.Knob(threadsKnob); !ok {
		return t.Store.TopK(w, t.Remeasure)
	}
	all, err := t.Store.TopK(w, math.MaxInt)
	if err != nil {
		return nil, err
	}
	top := all[:min(t.Remeasure, len(all))]
	seen := map[int]bool{}
	for _, r := range top {
		seen[r.Config.Int(threadsKnob)] = true
	}
	for _, r := range all[len(top):] {
		if n := r.Config.Int(threadsKnob); !seen[n] {
			seen[n] = true
			top = append(top, r)
		}
	}
	return top, nil
}

// awaiting returns the leaders of w whose newest measurement was mostly
// disturbed: the configs a quieter run must measure again before the
// winner is settled.
func awaiting(t Task, w tunedb.Workload) ([]schedule.Config, error) {
	top, err := leaders(t, w)
	var out []schedule.Config
	for _, r := range top {
		if r.Disturbance.Contended() {
			out = append(out, r.Config)
		}
	}
	return out, err
}

// poolEvidence returns the evidence of several measurements of one config
// taken together: nil when none has any.
func poolEvidence(ds []*measure.Disturbance) *measure.Disturbance {
	var p *measure.Disturbance
	var share float64
	for _, d := range ds {
		if d == nil {
			continue
		}
		if p == nil {
			p = &measure.Disturbance{}
		}
		p.Samples += d.Samples
		p.Disturbed += d.Disturbed
		p.StealNS += d.StealNS
		p.InvoluntarySwitches += d.InvoluntarySwitches
		p.Probe = max(p.Probe, d.Probe)
		share += d.CPUShare * float64(d.Samples)
	}
	if p != nil && p.Samples > 0 {
		p.CPUShare = share / float64(p.Samples)
	}
	return p
}
