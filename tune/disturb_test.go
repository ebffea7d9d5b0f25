package tune

import (
	"context"
	"fmt"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// contendedMeasurer is fakeMeasurer with evidence: the first left[c]
// measurements of config c come back with every sample disturbed, and
// all others with none.
type contendedMeasurer struct {
	fakeMeasurer
	left    map[string]int
	batches int
}

func (m *contendedMeasurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	m.batches++
	res, err := m.fakeMeasurer.Measure(ctx, b)
	for i := range res {
		d := &measure.Disturbance{Samples: 3}
		if c := res[i].Config.String(); m.left[c] > 0 {
			m.left[c]--
			d.Disturbed = 3
		}
		res[i].Disturbance = d
	}
	return res, err
}

// A leader whose re-measurement was mostly disturbed cannot win on it: it
// is measured again, and a winner still contended after maxRemeasures is
// reported as unsettled.
func TestContendedLeaderIsRemeasured(t *testing.T) {
	for _, tt := range []struct {
		name       string
		contended  int // measurements of the fastest config that come back contended
		remeasures int
		unsettled  bool
	}{
		{"quiet", 0, 1, false},
		{"its trial and first re-measurement", 1 + RemeasureRounds, 2, false},
		{"always", 100, maxRemeasures, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			m := &contendedMeasurer{left: map[string]int{"vec=16,unroll=1": tt.contended}}
			task := testTask(t, db, m)
			task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 12, 12, 2
			s, err := Run(context.Background(), task)
			if err != nil {
				t.Fatal(err)
			}
			if s.Remeasures != tt.remeasures || m.batches != 1+tt.remeasures || s.Unsettled != tt.unsettled {
				t.Errorf("re-measured %d times in %d batches, unsettled %v; want %d, %d, %v",
					s.Remeasures, m.batches, s.Unsettled, tt.remeasures, 1+tt.remeasures, tt.unsettled)
			}
			// 12 trials: 4 fail, 8 ok with evidence, the fastest contended
			// unless the machine was quiet. Re-measurements are not trials.
			wantContended := min(tt.contended, 1)
			if s.Evidenced != 8 || s.Contended != wantContended {
				t.Errorf("evidenced %d, contended %d; want 8, %d", s.Evidenced, s.Contended, wantContended)
			}
			if s.Best == nil || s.Best.Config.String() != "vec=16,unroll=1" || s.Best.Disturbance.Contended() != tt.unsettled {
				t.Errorf("best %+v", s.Best)
			}
			// A provisional winner names what awaits a quieter machine.
			if got := fmt.Sprint(s.Awaiting); tt.unsettled && got != "[vec=16,unroll=1]" || !tt.unsettled && len(s.Awaiting) > 0 {
				t.Errorf("awaiting %s, unsettled %v", got, tt.unsettled)
			}
			// The pooled record keeps the evidence of every round.
			if d := s.Best.Disturbance; d == nil || d.Samples != 3*RemeasureRounds {
				t.Errorf("the winner's evidence %+v, want %d samples", d, 3*RemeasureRounds)
			}
		})
	}
}

// threadsMeasurer times configs of a space with a threads knob as a busy
// machine does: a config measured alone (its first measurement) on two
// goroutines reads twenty times its true time, with nothing in the
// evidence to say so (records of an older autotune, or load the probe
// missed); measured again, beside the others, it reads its true time,
// half of what one goroutine takes.
type threadsMeasurer struct {
	seen    map[string]bool
	batches [][]string
}

func (m *threadsMeasurer) Measure(_ context.Context, b measure.Batch) ([]measure.Result, error) {
	var batch []string
	var out []measure.Result
	for _, c := range b.Configs {
		batch = append(batch, c.String())
		ns := float64(1000 * (17 - c.Int("vec")) / c.Int("threads"))
		if c.Int("threads") == 2 && !m.seen[c.String()] {
			ns *= 20
		}
		out = append(out, measure.Result{Config: c, Status: measure.StatusOK, SamplesNS: []float64{ns}, MedianNS: ns, P20NS: ns, P80NS: ns})
	}
	for _, c := range b.Configs {
		m.seen[c.String()] = true
	}
	m.batches = append(m.batches, batch)
	return out, nil
}

// Configs that differ in thread count are compared side by side before a
// winner is declared: the fastest of each thread count joins the leaders,
// even when history ranks it below them.
func TestThreadCountsArePaired(t *testing.T) {
	space := func([]int, device.Target) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{schedule.Choice("vec", 1, 8, 16), schedule.Choice("threads", 1, 2)})
	}
	db := openDB(t)
	m := &threadsMeasurer{seen: map[string]bool{}}
	task := testTask(t, db, m)
	task.Template = kernels.Template{Op: kernels.Op{Name: "gemm"}, Version: "t1", Space: space}
	task.Space = space(nil, device.Target{})
	task.Strategy, task.Trials, task.BatchSize, task.Remeasure = "grid", 6, 6, 2
	s, err := Run(context.Background(), task)
	if err != nil {
		t.Fatal(err)
	}
	// History: vec=16,threads=1 at 1µs, vec=8,threads=1 at 9µs, and
	// vec=16,threads=2 at 10µs, below them. The two fastest and the
	// fastest on two goroutines are re-measured together, interleaved.
	want := []string{"vec=16,threads=1", "vec=8,threads=1", "vec=16,threads=2"}
	if len(m.batches) < 2 {
		t.Fatalf("batches %v: nothing re-measured", m.batches)
	}
	remeasured := m.batches[1]
	if len(remeasured) != len(want)*RemeasureRounds {
		t.Fatalf("re-measured %v, want %v %d times, interleaved", remeasured, want, RemeasureRounds)
	}
	for i, c := range remeasured {
		if c != want[i%len(want)] {
			t.Fatalf("re-measured %v, want %v %d times, interleaved", remeasured, want, RemeasureRounds)
		}
	}
	if s.Best == nil || s.Best.Config.String() != "vec=16,threads=2" {
		t.Errorf("best %v, want vec=16,threads=2 (0.5µs side by side)", s.Best)
	}
}
