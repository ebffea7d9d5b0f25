package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteBench(t *testing.T) {
	b := Bench{Workload: "gemm 1024x1024x1024 f32", Machine: "AMD EPYC, 2 logical cores", Tuned: "mr=12 (template gemm-3)", Samples: 30,
		PeakGFLOPs: 230, FloorGBps: 40, Notes: []string{"tuned is 15.0× faster than gonum and runs at 83% of the FMA peak (230.0 GFLOP/s)."},
		Rows: []BenchRow{
			{Name: "tuned", MedianNS: 1.0e7, P20NS: 0.99e7, P80NS: 1.02e7, GBps: 1.2, GFLOPs: 214.7, VsTuned: 1},
			{Name: "gonum", Doc: "gonum's blas32.Gemm", MedianNS: 1.5e8, P20NS: 1.49e8, P80NS: 1.52e8, GBps: 0.08, GFLOPs: 14.3, VsTuned: 15},
			{Name: "peak", MedianNS: 1e6, GFLOPs: 230, NoGBps: true, VsTuned: 0.1},
			{Name: "floor", MedianNS: 3e5, GBps: 40, NoGFLOPs: true, VsTuned: 0.03},
		}}
	var buf bytes.Buffer
	if err := WriteBench(&buf, b); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	wellFormed(t, page)
	selfContained(t, page)
	for _, want := range []string{
		"<td>tuned</td><td class=\"n\">10 ms</td><td class=\"n\">9.9 ms – 10.2 ms</td><td class=\"n\">1.2</td><td class=\"n\">214.7</td>",
		"<td>peak</td><td class=\"n\">1 ms</td>", "<td class=\"n\">-</td>",
		"FMA peak 230.0 GFLOP/s", "copy floor 40.0 GB/s", b.Notes[0],
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the bench page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg "); n != 3 {
		t.Errorf("%d charts, want 3 (time, GFLOP/s, GB/s)", n)
	}
}
