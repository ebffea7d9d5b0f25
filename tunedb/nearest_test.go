package tunedb

import (
	"math"
	"slices"
	"testing"
)

func TestShapeDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b []int
		want float64
	}{
		{[]int{1024, 1024}, []int{1024, 1024}, 0},
		{[]int{1024, 1024}, []int{2048, 1024}, 1},
		{[]int{1024, 1024}, []int{1024, 512}, 1},
		{[]int{1024, 1024}, []int{512, 2048}, 2},
		{[]int{64}, []int{128}, 1},
		{[]int{4096}, []int{8192}, 1},
		{[]int{1, 1, 1}, []int{8, 8, 8}, 9},
		{[]int{1024, 1024}, []int{1024, 1024, 1}, math.Inf(1)},
		{nil, []int{1}, math.Inf(1)},
	} {
		if got := ShapeDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("ShapeDistance(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := ShapeDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("ShapeDistance(%v, %v) = %v, want %v (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	at := func(shape ...int) Workload {
		w := softmax
		w.Shape = shape
		return w
	}
	other := func(change func(*Workload)) Workload {
		w := at(1024, 1024)
		change(&w)
		return w
	}
	shapes := func(ws []Workload) []string {
		var s []string
		for _, w := range ws {
			s = append(s, w.ShapeString())
		}
		return s
	}
	w := at(1024, 1024)
	for _, tt := range []struct {
		name       string
		candidates []Workload
		n          int
		want       []string
	}{
		{"no candidates", nil, 3, nil},
		{"n is 0", []Workload{at(512, 1024)}, 0, nil},
		{"nearest first", []Workload{at(128, 1024), at(1024, 2048), at(512, 512)}, 3, []string{"1024x2048", "512x512", "128x1024"}},
		{"n bounds", []Workload{at(128, 1024), at(1024, 2048), at(512, 512)}, 1, []string{"1024x2048"}},
		{"own shape first", []Workload{at(2048, 1024), at(1024, 1024)}, 2, []string{"1024x1024", "2048x1024"}},
		// 2048x1024, 1024x512 and 512x1024 are all one doubling away: the
		// smaller shapes first, then the smaller first dimension.
		{"ties", []Workload{at(2048, 1024), at(1024, 512), at(512, 1024)}, 3, []string{"512x1024", "1024x512", "2048x1024"}},
		{"ties in another order", []Workload{at(512, 1024), at(2048, 1024), at(1024, 512)}, 3, []string{"512x1024", "1024x512", "2048x1024"}},
		{"other ranks left out", []Workload{at(1024), at(1024, 1024, 1), at(4096, 4096)}, 3, []string{"4096x4096"}},
		{"other workloads left out", []Workload{
			other(func(w *Workload) { w.Op = "gemm" }),
			other(func(w *Workload) { w.DType = "f16" }),
			other(func(w *Workload) { w.Device = "sm_86" }),
			other(func(w *Workload) { w.Template = "t2" }),
		}, 4, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.candidates)
			got := Nearest(w, tt.candidates, tt.n)
			if !slices.Equal(shapes(got), tt.want) {
				t.Errorf("Nearest = %q, want %q", shapes(got), tt.want)
			}
			if !slices.EqualFunc(before, tt.candidates, Workload.equal) {
				t.Error("Nearest reordered its candidates")
			}
		})
	}
}

// Serve goes exact → bucket → nearest → default; a bucket without a
// tuned shape serves nothing, and nearest skips what generic refuses.
func TestServe(t *testing.T) {
	tuned := [][]int{{1, 64}, {8, 64}, {64, 64}, {23, 64}, {100, 64}}
	rng := Range{Workload: Workload{Shape: []int{1, 64}}, Hi: []int{64, 64}, Buckets: [][]int{{1, 64}, {16, 64}, {64, 64}}}
	notFirst := func(i int) bool { return i != 0 }
	for _, tt := range []struct {
		shape   []int
		generic func(int) bool
		want    Serving
	}{
		{[]int{23, 64}, nil, Serving{Tuned: 3, Exact: true, Range: -1}},
		{[]int{20, 64}, nil, Serving{Tuned: 2, Range: 0}}, // 16x64 has no record; 23x64 is nearer but no bucket
		{[]int{2, 64}, nil, Serving{Tuned: 0, Range: 0}},
		{[]int{90, 64}, nil, Serving{Tuned: 4, Range: -1}},
		{[]int{1, 65}, notFirst, Serving{Tuned: 1, Range: -1}}, // outside: nearest, 1x64 refused
		{[]int{1, 2, 3}, nil, Serving{Tuned: -1, Range: -1}},
	} {
		if got := Serve(tt.shape, tuned, []Range{rng}, tt.generic); got != tt.want {
			t.Errorf("Serve(%v) = %+v, want %+v", tt.shape, got, tt.want)
		}
	}
}
