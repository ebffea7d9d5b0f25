package cpu

import (
	"math"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure/harness"
)

// The experiment's figures of a set: one goroutine, ten 1 ms samples, of
// which one was preempted and lost 40% and one had steal.
func TestEvidenceStats(t *testing.T) {
	ms := time.Millisecond
	s := EvidenceSet{Goroutines: 1, Length: ms}
	for i := range 10 {
		u := harness.Sample{Wall: ms, CPU: ms}
		if i == 3 {
			u.CPU, u.Involuntary = 6*ms/10, 1
		}
		s.Samples = append(s.Samples, u)
		s.StealNS = append(s.StealNS, int64(i/9)*int64(10*ms))
	}
	st := s.Stats()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(st.Preempted, 0.1) || !near(st.Stolen, 0.1) || !near(st.Disturbed, 0.1) ||
		st.Lost[0] != 0 || !near(st.Lost[3], 0.4) || !near(st.PooledLost, 0.04) {
		t.Errorf("stats %+v", st)
	}
	if st := (EvidenceSet{Goroutines: 2}).Stats(); st != (EvidenceStats{}) {
		t.Errorf("no samples: %+v", st)
	}
}
