package kernels

import (
	"strings"
	"testing"
)

func TestCUDALaunch(t *testing.T) {
	// A softmax-like launch: a block per 4 rows, a row of 2-byte elements
	// shifted by up to 7 and rounded to 8 in shared memory; an
	// attention-like grid of ⌈s/64⌉ × b·h with d at most 128 and rows of
	// a multiple of 4.
	l := CUDALaunch{
		Block:    [3]int{128, 1, 1},
		Grid:     [3][]CUDAFactor{{{Dim: 2, Div: 64}}, {{Dim: 0, Div: 1}, {Dim: 1, Div: 1}}},
		Shared:   CUDASize{Base: 16, Per: 8, Dim: 3, Add: 7, Round: 8},
		Multiple: []int{0, 0, 0, 4},
		Max:      []int{0, 0, 0, 128},
	}
	for _, tt := range []struct {
		d      []int
		grid   [3]int
		shared int
		err    string
	}{
		{[]int{1, 1, 1, 4}, [3]int{1, 1, 1}, 16 + 8*16, ""},
		{[]int{2, 3, 65, 128}, [3]int{2, 6, 1}, 16 + 8*136, ""},
		{[]int{2, 3, 65, 130}, [3]int{}, 0, "not a multiple of 4"},
		{[]int{2, 3, 65, 132}, [3]int{}, 0, "more than the kernel's 128"},
		{[]int{0, 3, 65, 4}, [3]int{}, 0, "outside"},
		{[]int{300, 300, 65, 4}, [3]int{}, 0, "larger than CUDA launches"},
	} {
		grid, shared, err := l.At(tt.d)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("At(%v): %v", tt.d, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("At(%v) = %v, want an error with %q", tt.d, err, tt.err)
		case grid != tt.grid || shared != tt.shared:
			t.Errorf("At(%v) = %v, %d; want %v, %d", tt.d, grid, shared, tt.grid, tt.shared)
		}
		if (l.Serves(tt.d) == "") != (tt.err == "") {
			t.Errorf("Serves(%v) = %q", tt.d, l.Serves(tt.d))
		}
	}
}
