package lab

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

var shipFlag = flag.Bool("ship", false, "train the shipped cost models (TestShipPriors) and write them to tune/shipped")

// shipTraining are the landscapes each shipped model is trained on, by
// template revision. softmax-2's are the EPYC's of that revision: the
// Xeon's softmax landscapes and GEMM 64³ stay out, so that the suite
// measures those models on a machine (the Xeon) and a shape (GEMM 64³)
// they never saw. Today's softmax (testdata/today) is trained on both
// ISA levels of the EPYC; TestShippedTransfer measures it on one level
// when trained on the other.
var shipTraining = []struct {
	tmpl  kernels.Template
	files []string
	shape [][]int
}{
	{softmax.Template, []string{
		"testdata/softmax-8192x128-epyc.jsonl", "testdata/softmax-64x16384-epyc.jsonl", "testdata/tasks/softmax-1536x128-epyc.jsonl",
	}, [][]int{{8192, 128}, {64, 16384}, {1536, 128}}},
	{gemm.Template, []string{
		"testdata/tasks/gemm-128x128x64-epyc.jsonl", "testdata/tasks/gemm-64x192x64-epyc.jsonl",
		"testdata/tasks/gemm-32x256x96-epyc.jsonl", "testdata/tasks/gemm-128x96x48-epyc.jsonl",
	}, [][]int{{128, 128, 64}, {64, 192, 64}, {32, 256, 96}, {128, 96, 48}}},
	{softmax.Template, append(slices.Clip(todayAVX512), todayAVX2...), append(slices.Clip(todayAVX512Shapes), todayAVX2Shapes...)},
}

// The landscapes of today's softmax on the EPYC at its two ISA levels
// (testdata/README.md).
var (
	todayAVX512 = []string{
		"testdata/today/softmax-8192x128-avx512.jsonl", "testdata/today/softmax-64x16384-avx512.jsonl", "testdata/today/softmax-1024x1024-avx512.jsonl",
	}
	todayAVX512Shapes = [][]int{{8192, 128}, {64, 16384}, {1024, 1024}}
	todayAVX2         = []string{
		"testdata/today/softmax-1024x1024-avx2.jsonl", "testdata/today/softmax-512x2048-avx2.jsonl", "testdata/today/softmax-8192x128-avx2.jsonl",
	}
	todayAVX2Shapes = [][]int{{1024, 1024}, {512, 2048}, {8192, 128}}
)

// TestShipPriors trains the shipped models when -ship is given:
//
//	go test ./tune/lab -run TestShipPriors -ship
//
// one costmodel.GBT per template revision (shipModel), written as
// ../shipped/<version>.atcm.
func TestShipPriors(t *testing.T) {
	if !*shipFlag {
		t.Skip("writes the shipped models with -ship")
	}
	for _, s := range shipTraining {
		version, m, rows := shipModel(t, s.tmpl, s.files, s.shape)
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "shipped", version+".atcm")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rows, %d bytes", out, rows, len(b))
	}
}

// shipModel trains a costmodel.GBT (default options, seed 1) on every
// record of the landscapes in files, of tmpl's revision at the shapes,
// with the features a tuner of them computes (kernels.Template.ModelFeatures
// of the search space of the recorded dtype), and returns the revision's
// version, the model and its number of rows.
func shipModel(t *testing.T, tmpl kernels.Template, files []string, shapes [][]int) (string, *costmodel.GBT, int) {
	t.Helper()
	var rows []costmodel.Sample
	version := ""
	for i, file := range files {
		rec := recording(t, file, tmpl, shapes[i])
		rev, err := rec.revision(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if version != "" && rev.Version != version {
			t.Fatalf("%s: version %s, want %s as the others", file, rev.Version, version)
		}
		version = rev.Version
		space := rev.SearchSpace(rec.Workload.Shape, rec.Workload.DType, rec.Target)
		feats := rev.ModelFeatures(space, rec.Workload.Shape, rec.Target)
		for _, r := range rec.Records {
			c, err := space.Canonical(r.Config)
			if err != nil || !space.Valid(c) {
				continue
			}
			cost := math.Inf(1)
			if r.Status == tunedb.StatusOK {
				cost = r.MedianNS
			}
			rows = append(rows, costmodel.Sample{Features: feats(c), Group: rec.Workload.Key(), Cost: cost})
		}
	}
	m := costmodel.NewGBT(costmodel.Options{Rand: rand.New(rand.NewPCG(1, 0))})
	if err := m.Fit(rows); err != nil {
		t.Fatal(err)
	}
	return version, m, len(rows)
}

// TestShippedTransfer measures today's shipped softmax model on a machine
// outside its training set when -suite is given:
//
//	go test ./tune/lab -run TestShippedTransfer -suite -v
//
// The EPYC's two ISA levels stand in for two machines (their fingerprints,
// spaces and best configs differ; the silicon does not): a model trained
// as TestShipPriors trains the shipped one, on one level's landscapes
// only, ranks the first batches of the other level's, against the
// template's estimate (analytic) and random search, 20 seeds each. It
// prints, per landscape and search, the median best of the first batch
// (16 trials) and of the first two as a ratio to the landscape's best,
// and the median trials to within 5% of it.
func TestShippedTransfer(t *testing.T) {
	if !*suiteFlag {
		t.Skip("runs with -suite")
	}
	methods := make([]Method, 0, 3)
	for _, s := range []string{"shipped/gbt", "analytic/gbt", "random"} {
		m, err := ParseMethod(s)
		if err != nil {
			t.Fatal(err)
		}
		methods = append(methods, m)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeds, batch 16; medians over the seeds.\n\n", *suiteSeeds)
	b.WriteString("| landscape (model trained on) | configs | search | best@16 | best@32 | trials to 5% |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, side := range []struct {
		train, test         []string
		trainShape, shape   [][]int
		trainName, testName string
	}{
		{todayAVX512, todayAVX2, todayAVX512Shapes, todayAVX2Shapes, "AVX-512", "AVX2"},
		{todayAVX2, todayAVX512, todayAVX2Shapes, todayAVX512Shapes, "AVX2", "AVX-512"},
	} {
		_, model, _ := shipModel(t, softmax.Template, side.train, side.trainShape)
		for i, file := range side.test {
			rec := recording(t, file, softmax.Template, side.shape[i])
			r, err := Simulate(context.Background(), Simulation{
				Template: softmax.Template, Recording: rec, Methods: methods, Seeds: *suiteSeeds,
				Budget: len(rec.Records), StopEarly: true, Shipped: model,
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range r.Methods {
				fmt.Fprintf(&b, "| softmax %s %s (%s) | %d | %s | %.3f | %.3f | %s |\n", kernels.FormatShape(side.shape[i]), side.testName,
					side.trainName, r.Recorded, m.Method, m.BestAt[0], m.BestAt[1], trials(m.TrialsTo5))
			}
		}
	}
	t.Log("\n" + b.String())
}

// TestTodayLandscapes checks that the landscapes today's shipped softmax
// model is trained on are whole landscapes of today's float32 search
// space: every valid config recorded, none outside. A change to the
// softmax space or revision fails here; record them again
// (testdata/README.md) and ship a new model.
func TestTodayLandscapes(t *testing.T) {
	files := append(slices.Clip(todayAVX512), todayAVX2...)
	shapes := append(slices.Clip(todayAVX512Shapes), todayAVX2Shapes...)
	for i, file := range files {
		rec := recording(t, file, softmax.Template, shapes[i])
		space := softmax.Template.SearchSpace(shapes[i], rec.Workload.DType, rec.Target)
		results, outside := replayable(space, rec.Records)
		if n := validConfigs(space); len(results) != n || outside != 0 {
			t.Errorf("%s: %d configs replay, %d outside the space, which has %d valid", file, len(results), outside, n)
		}
	}
}
