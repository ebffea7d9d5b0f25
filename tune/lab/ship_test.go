package lab

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

var shipFlag = flag.Bool("ship", false, "train the shipped cost models (TestShipPriors) and write them to tune/shipped")

// shipTraining are the landscapes each shipped model is trained on, by
// template: those of the AMD EPYC. The Xeon's softmax landscapes and GEMM
// 64³ stay out, so that the suite measures the shipped models on a machine
// (the Xeon) and a shape (GEMM 64³) they never saw.
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
}

// TestShipPriors trains the shipped models when -ship is given:
//
//	go test ./tune/lab -run TestShipPriors -ship
//
// one costmodel.GBT (default options, seed 1) per template revision, on
// every record of its landscapes, with the tuner's features
// (kernels.Template.ModelFeatures), written as ../shipped/<version>.atcm.
func TestShipPriors(t *testing.T) {
	if !*shipFlag {
		t.Skip("writes the shipped models with -ship")
	}
	for _, s := range shipTraining {
		var rows []costmodel.Sample
		version := ""
		for i, file := range s.files {
			rec := recording(t, file, s.tmpl, s.shape[i])
			rev, err := rec.revision(s.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if version != "" && rev.Version != version {
				t.Fatalf("%s: version %s, want %s as the others", file, rev.Version, version)
			}
			version = rev.Version
			space := rev.Space(rec.Workload.Shape, rec.Target)
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
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join("..", "shipped", version+".atcm")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rows, %d bytes", out, len(rows), len(b))
	}
}
