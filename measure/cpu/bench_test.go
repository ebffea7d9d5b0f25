package cpu

import (
	"context"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
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
