package costmodel_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/autotune-dev/autotune/costmodel"
)

func ExampleGBT() {
	// Features: log2 of a tile size, then log2 of the workload's size.
	// Small workloads like tile 4, large ones tile 16; tile 64 fails.
	var rows []costmodel.Sample
	for _, size := range []float64{10, 20} {
		best := 2.0
		if size == 20 {
			best = 4
		}
		for tile := 0.0; tile <= 6; tile++ {
			cost := math.Exp2(size) * (1 + (tile-best)*(tile-best))
			if tile == 6 {
				cost = math.Inf(1)
			}
			rows = append(rows, costmodel.Sample{
				Features: []float64{tile, size},
				Group:    fmt.Sprintf("2^%g", size),
				Cost:     cost,
			})
		}
	}
	m := costmodel.NewGBT(costmodel.Options{MinLeaf: 1, Rand: rand.New(rand.NewPCG(1, 2))})
	if err := m.Fit(rows); err != nil {
		fmt.Println(err)
		return
	}
	// Rank the tiles for the large workload.
	var feats [][]float64
	for tile := 0.0; tile <= 6; tile++ {
		feats = append(feats, []float64{tile, 20})
	}
	scores := m.Predict(feats)
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	fmt.Printf("%v predicts tile %g best for 2^20\n", m, math.Exp2(float64(best)))
	// Output:
	// GBT(rank, 100 trees, 2 features) predicts tile 16 best for 2^20
}
