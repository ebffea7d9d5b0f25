package lab

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

// BenchmarkRetrain sets the cost model's refit after a batch against the
// time the batch took to measure, at 2,000 rows, the yardstick. The
// rows are GEMM's, as the tuner builds them: the 1,854 recorded configs of
// 64³ and 146 of the synthetic 128³ landscape. A batch's measurement time
// is the build and run time of 16 consecutive records of a recorded
// landscape (what the tuner spent on them, its own overhead aside), the
// median over the landscape.
//
//	go test ./tune/lab -run XXX -bench BenchmarkRetrain -benchtime 10x
//
// Each iteration times, one after the other so that both see the same
// load, a refit from scratch at 2,000 rows ("scratch") and a cycle of the
// registry's gbt, whose refits past 1,000 rows are incremental but for
// one in RefitEvery: the mean over the cycle's 8 refits, ending at 2,000
// rows ("gbt"). It reports the medians over the iterations, in ms per
// refit, as a share of each landscape's batch (share-LANDSCAPE, 0.05 is
// 5%), and the median ratio of the two (gbt/scratch).
func BenchmarkRetrain(b *testing.B) {
	const n, batch, cycle = 2000, 16, 8
	rows := gemmRows(b, n)
	type landscape struct {
		name string
		ns   float64
	}
	var batches []landscape
	for _, l := range []struct{ name, file string }{
		{"gemm64-epyc", "testdata/gemm-64x64x64-epyc.jsonl"},
		{"softmax1024-xeon", "testdata/softmax-1024x1024.jsonl"},
		{"softmax8192x128-epyc", "testdata/softmax-8192x128-epyc.jsonl"},
	} {
		batches = append(batches, landscape{l.name, medianBatchNS(readRecords(b, l.file), batch)})
	}
	gbt, err := costmodel.Lookup("gbt")
	if err != nil {
		b.Fatal(err)
	}
	fit := func(m costmodel.Model, rows []costmodel.Sample) {
		if err := m.Fit(rows); err != nil {
			b.Fatal(err)
		}
	}
	var scratch, warm, ratio []float64
	for b.Loop() {
		start := time.Now()
		fit(costmodel.NewGBT(costmodel.Options{}), rows)
		s := float64(time.Since(start))
		m := gbt.New(1)
		start = time.Now()
		for k := cycle - 1; k >= 0; k-- {
			fit(m, rows[:n-k*batch])
		}
		w := float64(time.Since(start)) / cycle
		scratch, warm, ratio = append(scratch, s), append(warm, w), append(ratio, w/s)
	}
	for _, x := range []struct {
		name string
		ns   []float64
	}{{"scratch", scratch}, {"gbt", warm}} {
		med := medianOf(x.ns)
		b.ReportMetric(med/1e6, "ms/fit-"+x.name)
		for _, l := range batches {
			b.ReportMetric(med/l.ns, "share-"+x.name+"-"+l.name)
		}
	}
	b.ReportMetric(medianOf(ratio), "gbt/scratch")
}

func medianOf(x []float64) float64 {
	x = slices.Sorted(slices.Values(x))
	if len(x)%2 == 1 {
		return x[len(x)/2]
	}
	return (x[len(x)/2-1] + x[len(x)/2]) / 2
}

// gemmRows returns n training rows of GEMM, as the tuner makes them.
func gemmRows(tb testing.TB, n int) []costmodel.Sample {
	a := recording(tb, "testdata/gemm-64x64x64-epyc.jsonl", gemm.Template, []int{64, 64, 64})
	c := syntheticRecording(tb, gemm.Template, []int{128, 128, 128}, 1)
	var rows []costmodel.Sample
	for _, r := range []Recording{a, c} {
		shape := r.Workload.Shape
		space := gemm.Template.Space(shape, r.Target)
		feats := gemm.Template.ModelFeatures(space, shape, r.Target)
		for _, rec := range r.Records {
			if len(rows) == n {
				break
			}
			cfg, err := space.Canonical(rec.Config)
			if err != nil {
				tb.Fatal(err)
			}
			rows = append(rows, costmodel.Sample{Features: feats(cfg), Group: r.Workload.Key(), Cost: cost(rec.Status == tunedb.StatusOK, rec.MedianNS)})
		}
	}
	if len(rows) < n {
		tb.Fatalf("%d rows, want %d", len(rows), n)
	}
	return rows
}

// medianBatchNS is the median over consecutive batches of recs of their
// build and run time.
func medianBatchNS(recs []tunedb.Record, batch int) float64 {
	var t []float64
	for i := 0; i+batch <= len(recs); i += batch {
		s := 0.0
		for _, r := range recs[i : i+batch] {
			s += float64(r.BuildNS + r.RunNS)
		}
		t = append(t, s)
	}
	slices.Sort(t)
	return t[len(t)/2]
}

// TestKinPrior checks transfer across ops that share the model's features:
// GEMM's records warm a run of GEMM with a bias and ReLU (recorded on the
// same machine, with the same best config, which the run then proposes
// first), while softmax's records, of another layout, are left out.
func TestKinPrior(t *testing.T) {
	gbr, ok := kernels.TemplateFor("gemm_bias_relu", kernels.CPU)
	if !ok {
		t.Fatal("no gemm_bias_relu template")
	}
	shape := []int{64, 64, 64}
	rec := recording(t, "testdata/gemm_bias_relu-64x64x64-epyc.jsonl", gbr, shape)
	gemmRecs := recording(t, "testdata/gemm-64x64x64-epyc.jsonl", gemm.Template, shape).Records
	softmaxRecs := recording(t, "testdata/softmax-8192x128-epyc.jsonl", softmax.Template, []int{8192, 128}).Records
	r, err := Simulate(context.Background(), Simulation{
		Template: gbr, Recording: rec, Prior: append(slices.Clone(gemmRecs), softmaxRecs...),
		Methods: []Method{{Strategy: "evolutionary", Model: "gbt"}}, Seeds: 2, Budget: 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Prior != len(gemmRecs) || !slices.Equal(r.PriorShape, []string{"gemm 64x64x64"}) {
		t.Errorf("prior: %d records of %q; want GEMM's %d, none of softmax", r.Prior, r.PriorShape, len(gemmRecs))
	}
	for _, run := range r.Methods[0].Runs {
		if run.TrialsTo1 != 1 {
			t.Errorf("seed %d: within 1%% of the best after %d trials, want 1: GEMM's best first", run.Seed, run.TrialsTo1)
		}
	}
}
