package lab

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

var crossOpFlag = flag.Bool("suite.crossop", false, "with -suite, run TestSuiteCrossOp: how well a model trained on another landscape picks a first batch")

// opFeatures are features that mean the same for every template (issue 16,
// part 4): the workload's log2 FLOPs, bytes and arithmetic intensity, and
// the config's log2 vector width, threads and unroll (knobs most CPU
// templates share; 0 where a template has none) and log2 bytes per thread.
// The cache sizes are left out: the replayed targets do not know them, and
// they are constant within a landscape.
func opFeatures(tmpl kernels.Template, shape []int, c schedule.Config) []float64 {
	knob := func(name string) float64 {
		if v, ok := c.Lookup(name); ok {
			return math.Log2(float64(v.Int()))
		}
		return 0
	}
	flops, bytes := tmpl.FLOPs(shape), tmpl.Bytes(shape)
	return []float64{math.Log2(flops), math.Log2(bytes), math.Log2(flops / bytes),
		knob("vec"), knob("threads"), knob("unroll"), math.Log2(bytes) - knob("threads")}
}

type crossLandscape struct {
	name string
	tmpl kernels.Template
	rec  Recording
}

func (l crossLandscape) rows() ([]costmodel.Sample, []schedule.Config) {
	space := l.tmpl.Space(l.rec.Workload.Shape, l.rec.Target)
	var rows []costmodel.Sample
	var cfgs []schedule.Config
	for _, r := range l.rec.Records {
		c, err := space.Canonical(r.Config)
		if err != nil {
			continue
		}
		cfgs = append(cfgs, c)
		rows = append(rows, costmodel.Sample{Features: opFeatures(l.tmpl, l.rec.Workload.Shape, c),
			Group: l.rec.Workload.Key(), Cost: cost(r.Status == tunedb.StatusOK, r.MedianNS)})
	}
	return rows, cfgs
}

// TestSuiteCrossOp measures, on the recorded landscapes, whether a model
// trained on another op's landscape, through opFeatures, would pick a
// better first batch than a random one: per target landscape and source,
// the model's Kendall τ on the target's configs, and the median over 20
// seeds of the best of the 16 configs it ranks first (ties broken at
// random), as a ratio to the target's best, against 16 random configs.
//
//	go test ./tune/lab -run TestSuiteCrossOp -suite -suite.crossop -v
func TestSuiteCrossOp(t *testing.T) {
	if !*suiteFlag || !*crossOpFlag {
		t.Skip("runs with -suite -suite.crossop")
	}
	gbr, ok := kernels.TemplateFor("gemm_bias_relu", kernels.CPU)
	if !ok {
		t.Fatal("no gemm_bias_relu template")
	}
	a, _ := landscape(t, landscapes[0].file, landscapes[0].shape)
	b, _ := landscape(t, landscapes[1].file, landscapes[1].shape)
	ls := []crossLandscape{
		{"softmax 1024x1024 Xeon", softmax.Template, a},
		{"softmax 512x2048 Xeon", softmax.Template, b},
		{"softmax 8192x128 EPYC", softmax.Template, recording(t, "testdata/softmax-8192x128-epyc.jsonl", softmax.Template, []int{8192, 128})},
		{"softmax 64x16384 EPYC", softmax.Template, recording(t, "testdata/softmax-64x16384-epyc.jsonl", softmax.Template, []int{64, 16384})},
		{"gemm 64³ EPYC", gemm.Template, recording(t, "testdata/gemm-64x64x64-epyc.jsonl", gemm.Template, []int{64, 64, 64})},
		{"gemm_bias_relu 64³ EPYC", gbr, recording(t, "testdata/gemm_bias_relu-64x64x64-epyc.jsonl", gbr, []int{64, 64, 64})},
	}
	const seeds, batch = 20, 16
	fmt.Printf("| target | source | τ | best of first %d, median | worst |\n| --- | --- | --- | --- | --- |\n", batch)
	for _, target := range ls {
		rows, _ := target.rows()
		speed := make([]float64, len(rows))
		best := math.Inf(1)
		for i, r := range rows {
			speed[i] = 1 / r.Cost
			best = min(best, r.Cost)
		}
		feats := make([][]float64, len(rows))
		for i, r := range rows {
			feats[i] = r.Features
		}
		firstBatch := func(score []float64) (median, worst float64) {
			var got []float64
			for seed := range uint64(seeds) {
				r := rand.New(rand.NewPCG(seed+1, 9))
				idx := r.Perm(len(rows)) // random order breaks ties
				if score != nil {
					slices.SortStableFunc(idx, func(i, j int) int {
						switch {
						case score[i] > score[j]:
							return -1
						case score[i] < score[j]:
							return 1
						}
						return 0
					})
				}
				b := math.Inf(1)
				for _, i := range idx[:batch] {
					b = min(b, rows[i].Cost)
				}
				got = append(got, b/best)
			}
			slices.Sort(got)
			median, worst = (got[seeds/2-1]+got[seeds/2])/2, got[seeds-1]
			if got[0] < 1 {
				// The best of a batch drawn from the landscape cannot beat
				// the landscape's best: the rows or their costs are wrong.
				t.Errorf("%s: a first batch reached %.3f of the best", target.name, got[0])
			}
			return median, worst
		}
		m, w := firstBatch(nil)
		fmt.Printf("| %s | none (random) | | %.3f | %.3f |\n", target.name, m, w)
		for _, src := range ls {
			if src.name == target.name {
				continue
			}
			srcRows, _ := src.rows()
			model := costmodel.NewGBT(costmodel.Options{})
			if err := model.Fit(srcRows); err != nil {
				t.Fatal(err)
			}
			score := model.Predict(feats)
			m, w := firstBatch(score)
			tau := costmodel.KendallTau(score, speed)
			if !(tau >= -1 && tau <= 1) {
				t.Errorf("%s from %s: τ = %v, outside [-1, 1]", target.name, src.name, tau)
			}
			fmt.Printf("| %s | %s | %.2f | %.3f | %.3f |\n", target.name, src.name, tau, m, w)
		}
	}
}
