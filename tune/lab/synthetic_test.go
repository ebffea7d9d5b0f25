package lab

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// recordingMachine is the 2-core AVX-512 Xeon the checked-in landscapes
// were recorded on; its GEMM 256³ space has 9270 valid configs.
const recordingMachine = "cpu/Intel(R) Xeon(R) Processor @ 2.80GHz/sse4.2+avx2+fma+avx512/2c"

// syntheticRecording is a full landscape of tmpl at shape on the recording
// machine with made-up timings: every valid config once, its median the
// product of a factor per knob value (drawn from seed) and of a little
// noise, so that a model can learn it and the best is unique. It stands in
// for a recording too large to check in.
func syntheticRecording(tb testing.TB, tmpl kernels.Template, shape []int, seed uint64) Recording {
	tb.Helper()
	target, err := device.FromFingerprint(recordingMachine)
	if err != nil {
		tb.Fatal(err)
	}
	space := tmpl.Space(shape, target)
	r := rand.New(rand.NewPCG(seed, 0))
	factor := map[string]float64{} // "knob=value" → log cost
	for _, k := range space.Knobs() {
		for _, v := range k.Values {
			factor[k.Name+"="+v.String()] = r.Float64()
		}
	}
	w := tune.Workload(tmpl, shape, target)
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	var recs []tunedb.Record
	for i := range space.Size() {
		c := space.At(i)
		if !space.Valid(c) {
			continue
		}
		e := 0.05 * r.NormFloat64()
		for j := range c.Len() {
			e += factor[c.Name(j)+"="+c.At(j).String()]
		}
		ns := 1e5 * math.Exp(e)
		recs = append(recs, tunedb.Record{
			Schema: tunedb.SchemaVersion, Workload: w, Config: c, Status: tunedb.StatusOK,
			SamplesNS: []float64{ns}, MedianNS: ns, P20NS: ns, P80NS: ns,
			Time: t0.Add(time.Duration(len(recs))), Tool: "synthetic",
		})
	}
	return Recording{Workload: w, Target: target, Records: recs}
}

// TestSimulateDefaultBudget: without a budget a run stops after
// DefaultSimBudget trials on a landscape larger than that, and after the
// landscape on a smaller one.
func TestSimulateDefaultBudget(t *testing.T) {
	big := syntheticRecording(t, gemm.Template, []int{256, 256, 256}, 1)
	if len(big.Records) <= DefaultSimBudget {
		t.Fatalf("the synthetic landscape has %d configs, not more than %d", len(big.Records), DefaultSimBudget)
	}
	small, _ := landscape(t, landscapes[0].file, landscapes[0].shape)
	for _, tt := range []struct {
		name string
		tmpl kernels.Template
		rec  Recording
		want int
	}{
		{"gemm 256³, synthetic", gemm.Template, big, DefaultSimBudget},
		{"softmax 1024x1024", softmax.Template, small, len(small.Records)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Simulate(context.Background(), Simulation{Template: tt.tmpl, Recording: tt.rec,
				Methods: []Method{{Strategy: "random"}}, Seeds: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Budget != tt.want || r.Methods[0].Runs[0].Trials != tt.want {
				t.Errorf("budget %d, %d trials; want %d", r.Budget, r.Methods[0].Runs[0].Trials, tt.want)
			}
		})
	}
}

// BenchmarkSimulate times what `autotune simulate` does by default, 20
// seeds of every search with the default budget, on a synthetic landscape
// the size of the recorded GEMM 256³ one (docs/benchmarks.md).
func BenchmarkSimulate(b *testing.B) {
	rec := syntheticRecording(b, gemm.Template, []int{256, 256, 256}, 1)
	b.Logf("landscape of %d configs", len(rec.Records))
	sim := Simulation{Template: gemm.Template, Recording: rec, Methods: allSearches, Seeds: 20}
	for b.Loop() {
		if _, err := Simulate(context.Background(), sim); err != nil {
			b.Fatal(err)
		}
	}
}
