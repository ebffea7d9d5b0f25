package gemm

import (
	"math"
	"testing"
)

func TestFeatures(t *testing.T) {
	target := cpu(2, avx512)
	target.CPU.L1D, target.CPU.L2 = 48<<10, 2<<20
	feature := func(shape []int, text string) map[string]float64 {
		t.Helper()
		sp := Template.Space(shape, target)
		cfg, err := sp.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		f := Template.Features(shape, target, cfg)
		if len(f) != len(featureNames) {
			t.Fatalf("%d features, want %d", len(f), len(featureNames))
		}
		m := map[string]float64{}
		for i, name := range featureNames {
			m[name] = f[i]
		}
		return m
	}
	big := []int{1024, 1024, 1024}
	f := feature(big, "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=false,convert=copy")
	want := map[string]float64{
		"log2_tile":               math.Log2(12 * 32),
		"l1_bytes_per_flop":       2 * (12 + 32) / (12.0 * 32),
		"l2_bytes_per_flop":       2/32.0 + 4/256.0,
		"mem_bytes_per_flop":      2/1024.0 + 2/516.0, // 1024 rows in runs of whole 12-row tiles: 43 tiles, 516 rows
		"b_strip_fits_l1":         1,                  // 32 KiB
		"a_block_l2_share":        4 * 96 * 256 / float64(2<<20),
		"log2_work_per_goroutine": math.Log2(2 * 516 * 1024 * 1024),
		"edge_share":              4.0 / 1024, // 1024 = 85·12 + 4 rows
	}
	for name, w := range want {
		if math.Abs(f[name]-w) > 1e-12 {
			t.Errorf("%s = %g, want %g", name, f[name], w)
		}
	}
	// A strip of B too deep for L1; a matrix-vector product split by columns.
	if f := feature(big, "vec=16,mr=4,nr_vecs=2,kc=512,mc=96,nc=1024,pack_b=true,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=false,convert=copy"); f["b_strip_fits_l1"] != 0 {
		t.Errorf("a 512×32 strip (64 KiB) fits a 48 KiB L1")
	}
	mv := feature([]int{1, 4096, 4096}, "vec=16,mr=1,nr_vecs=2,kc=256,mc=24,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=n,chunks=1,pack_a=false,convert=copy")
	if got, w := mv["log2_work_per_goroutine"], math.Log2(2*2048*4096); got != w {
		t.Errorf("split=n: log2_work_per_goroutine = %g, want %g (half the columns)", got, w)
	}
	// Runs from a counter pack B once per run, not per goroutine.
	dealt := feature(big, "vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=4,pack_a=false,convert=copy")
	if got, w := dealt["mem_bytes_per_flop"], 2/1024.0+2/132.0; math.Abs(got-w) > 1e-12 { // 86 tiles in 8 runs: 11 tiles, 132 rows
		t.Errorf("chunks=4: mem_bytes_per_flop = %g, want %g", got, w)
	}
	if dealt["log2_work_per_goroutine"] != f["log2_work_per_goroutine"] {
		t.Errorf("chunks=4: log2_work_per_goroutine = %g, want %g as with chunks=1,pack_a=false,convert=copy", dealt["log2_work_per_goroutine"], f["log2_work_per_goroutine"])
	}
	if mv["edge_share"] != 0 {
		t.Errorf("1x4096 in 1×32 tiles: edge_share = %g, want 0", mv["edge_share"])
	}
}
