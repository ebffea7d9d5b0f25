package cpu

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
	"github.com/autotune-dev/autotune/schedule"
)

// BenchmarkMeasure measures batches of 64 candidates of about a millisecond
// each with the default options, each batch with new sources (so the build
// cache does not hide the build), and reports the throughput the tuner gets
// and where the time goes.
func BenchmarkMeasure(b *testing.B) {
	const batch = 64
	m := New(&Options{Seed: 1})
	var n, salt int
	var build, run, median time.Duration
	for b.Loop() {
		cfgs := make([]schedule.Config, batch)
		for i := range cfgs {
			cfgs[i] = testConfig("ok", 100, salt%1000)
			salt++
		}
		res, err := m.Measure(context.Background(), batchOf([]int{4096}, cfgs...))
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Status != measure.StatusOK {
				b.Fatalf("%s: %s: %s", r.Config, r.Status, r.Error)
			}
			build += time.Duration(r.BuildNS)
			run += time.Duration(r.RunNS)
			median += time.Duration(r.MedianNS)
			n++
		}
	}
	b.ReportMetric(float64(n)/(build+run).Minutes(), "candidates/min")
	b.ReportMetric(build.Seconds()/float64(n/batch), "build-s/batch")
	b.ReportMetric(run.Seconds()/float64(n/batch), "run-s/batch")
	b.ReportMetric(median.Seconds()*1e3/float64(n), "kernel-ms")
}

// A bench's rounds in which any entry's sample was disturbed are left out
// when enough others are not, whole, so that every entry keeps as many
// samples.
func TestDropDisturbed(t *testing.T) {
	ms := time.Millisecond
	quiet, starved := harness.Sample{Wall: ms, CPU: ms}, harness.Sample{Wall: 2 * ms, CPU: ms}
	// A preemption that cost 10 µs of a millisecond leaves its round in;
	// one that cost 300 µs does not.
	brief, stalled := harness.Sample{Wall: ms, CPU: ms - 10*time.Microsecond, Involuntary: 1}, harness.Sample{Wall: ms, CPU: 7 * ms / 10, Involuntary: 1}
	usage := [][]harness.Sample{{quiet, quiet}, {stalled, quiet}, {quiet, starved}, {brief, quiet}, {quiet, quiet}}
	fresh := func() []BenchResult {
		return []BenchResult{{SamplesNS: []float64{1, 9, 1, 1, 1}}, {SamplesNS: []float64{2, 2, 8, 2, 2}}}
	}
	res := fresh()
	dropDisturbed(res, usage, 3)
	for i, want := range [][]float64{{1, 1, 1}, {2, 2, 2}} {
		if !slices.Equal(res[i].SamplesNS, want) || res[i].Dropped != 2 || res[i].Rounds != 5 {
			t.Errorf("entry %d: %v, %d of %d rounds dropped; want %v, 2 of 5", i, res[i].SamplesNS, res[i].Dropped, res[i].Rounds, want)
		}
	}
	// Too few would be left: every round stays.
	res = fresh()
	dropDisturbed(res, usage, 4)
	if len(res[0].SamplesNS) != 5 || res[0].Dropped != 0 {
		t.Errorf("minSamples 4: %v, %d dropped; want all kept", res[0].SamplesNS, res[0].Dropped)
	}
	// A round without usage: nothing is judged.
	res = fresh()
	dropDisturbed(res, [][]harness.Sample{usage[0], nil, usage[2], usage[3], usage[4]}, 1)
	if len(res[0].SamplesNS) != 5 {
		t.Errorf("unknown usage: %v kept; want all", res[0].SamplesNS)
	}
}
