package kernels

import (
	"slices"
	"strings"
	"testing"
)

func TestParseShapeRange(t *testing.T) {
	gemm := Op{Name: "gemm", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024"}
	good := []struct {
		in     string
		lo, hi []int
	}{
		{"1..4096x768x768", []int{1, 768, 768}, []int{4096, 768, 768}},
		{"64x1..8x2..2", []int{64, 1, 2}, []int{64, 8, 2}},
		{"64x64x64", []int{64, 64, 64}, []int{64, 64, 64}},
	}
	for _, tt := range good {
		r, err := gemm.ParseShapeRange(tt.in)
		if err != nil || !slices.Equal(r.Lo, tt.lo) || !slices.Equal(r.Hi, tt.hi) {
			t.Errorf("ParseShapeRange(%q) = %v, %v", tt.in, r, err)
			continue
		}
		if want := strings.ReplaceAll(tt.in, "2..2", "2"); r.String() != want {
			t.Errorf("ParseShapeRange(%q).String() = %q, want %q", tt.in, r.String(), want)
		}
		if !r.Contains(tt.lo) || !r.Contains(tt.hi) {
			t.Errorf("%v does not contain its ends", r)
		}
		if r.Single() != slices.Equal(tt.lo, tt.hi) {
			t.Errorf("%v.Single() = %v", r, r.Single())
		}
	}
	bad := []struct{ in, want string }{
		{"4096..1x768x768", "M runs from 4096 down to 1"},
		{"0..64x768x768", "M is 0"},
		{"1..x768x768", `M="1.." needs both ends`},
		{"..64x768x768", "needs both ends"},
		{"a..64x768x768", `M="a" is not a positive integer`},
		{"1..64..128x768x768", "not a positive integer"},
		{"1..-3x768x768", "not a positive integer"},
		{"1..64x768", "2 dimensions"},
		{"1..2147483648x1x1", "over the limit"},
		{"1..2147483647x2147483647x4096", "over 2^53"},
	}
	for _, tt := range bad {
		_, err := gemm.ParseShapeRange(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseShapeRange(%q) error = %v, want %q", tt.in, err, tt.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "invalid shape range") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseShapeRange(%q) error %q: want one line starting with 'invalid shape range'", tt.in, err)
		}
	}
	r, _ := gemm.ParseShapeRange("1..4096x768x768")
	for _, s := range [][]int{{0, 768, 768}, {4097, 768, 768}, {64, 767, 768}, {64, 768}} {
		if r.Contains(s) {
			t.Errorf("%v contains %v", r, s)
		}
	}
}

func FuzzParseShapeRange(f *testing.F) {
	gemm := Op{Name: "gemm", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024"}
	for _, s := range []string{"1..4096x768x768", "1x2x3", "..x..x..", "3..1x1x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := gemm.ParseShapeRange(s)
		if err != nil {
			return
		}
		back, err := gemm.ParseShapeRange(r.String())
		if err != nil || !slices.Equal(back.Lo, r.Lo) || !slices.Equal(back.Hi, r.Hi) {
			t.Fatalf("%q parses to %v, which reads back as %v, %v", s, r, back, err)
		}
		if !r.Contains(r.Lo) || !r.Contains(r.Hi) {
			t.Fatalf("%v does not contain its ends", r)
		}
	})
}
