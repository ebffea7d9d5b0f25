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

// A bench entry's disturbed samples are left out when enough others are
// not; each entry is judged on its own samples.
func TestDropDisturbed(t *testing.T) {
	ms := time.Millisecond
	quiet, preempted, starved := harness.Sample{Wall: ms, CPU: ms}, harness.Sample{Wall: ms, CPU: ms, Involuntary: 1}, harness.Sample{Wall: 2 * ms, CPU: ms}
	usage := [][]harness.Sample{{quiet, quiet}, {preempted, quiet}, {quiet, starved}, {quiet, quiet}}
	res := []BenchResult{{SamplesNS: []float64{1, 9, 1, 1}}, {SamplesNS: []float64{2, 2, 8, 2}}}
	dropDisturbed(res, usage, 3)
	for i, want := range [][]float64{{1, 1, 1}, {2, 2, 2}} {
		if !slices.Equal(res[i].SamplesNS, want) || res[i].Dropped != 1 || res[i].Rounds != 4 {
			t.Errorf("entry %d: %v, %d of %d dropped; want %v, 1 of 4", i, res[i].SamplesNS, res[i].Dropped, res[i].Rounds, want)
		}
	}
	// Too few would be left: every sample stays.
	res = []BenchResult{{SamplesNS: []float64{1, 9, 1, 1}}, {SamplesNS: []float64{2, 2, 8, 2}}}
	dropDisturbed(res, usage, 4)
	if len(res[0].SamplesNS) != 4 || res[0].Dropped != 0 {
		t.Errorf("minSamples 4: %v, %d dropped; want all kept", res[0].SamplesNS, res[0].Dropped)
	}
	// A round without usage: nothing is judged.
	res = []BenchResult{{SamplesNS: []float64{1, 9, 1, 1}}, {SamplesNS: []float64{2, 2, 8, 2}}}
	dropDisturbed(res, [][]harness.Sample{usage[0], nil, usage[2], usage[3]}, 1)
	if len(res[0].SamplesNS) != 4 {
		t.Errorf("unknown usage: %v kept; want all", res[0].SamplesNS)
	}
}
