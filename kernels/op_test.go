package kernels

import (
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
)

func TestParseShape(t *testing.T) {
	softmax := Op{Name: "softmax", Dims: []string{"R", "C"}, Example: "4096x1024"}
	gemm := Op{Name: "gemm", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024"}
	attention := Op{Name: "attention", Dims: []string{"B", "H", "S", "D"}, Example: "1x8x1024x64"}
	good := []struct {
		op   Op
		in   string
		want []int
	}{
		{softmax, "4096x1024", []int{4096, 1024}},
		{softmax, "1x1", []int{1, 1}},
		{softmax, "2147483647x3", []int{2147483647, 3}},
		{gemm, "1023x517x259", []int{1023, 517, 259}},
		{attention, "1x8x1024x64", []int{1, 8, 1024, 64}},
	}
	for _, tt := range good {
		got, err := tt.op.ParseShape(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s.ParseShape(%q) = %v, %v", tt.op.Name, tt.in, got, err)
		}
		if FormatShape(got) != tt.in {
			t.Errorf("FormatShape(%v) = %q", got, FormatShape(got))
		}
	}
	bad := []struct {
		op       Op
		in, want string
	}{
		{softmax, "4096x", "C is empty"},
		{softmax, "x4096", "R is empty"},
		{softmax, "", "1 dimensions"},
		{softmax, "0x5", "R is 0"},
		{softmax, "-1x3", `R="-1" is not a positive integer`},
		{softmax, "+1x3", "not a positive integer"},
		{softmax, "axb", `R="a" is not a positive integer`},
		{softmax, "4096 x1024", "not a positive integer"},
		{softmax, "2147483648x1", "over the limit 2147483647"},
		{softmax, "99999999999999999999999x1", "over the limit"},
		{softmax, "4096x1024x3", "3 dimensions, want RxC for softmax"},
		{gemm, "64x64", "2 dimensions, want MxNxK for gemm"},
		{attention, "1x8x1024", "want BxHxSxD for attention"},
		{attention, "2147483647x2147483647x2147483647x2147483647", "product of its extents is over 2^53"},
		{gemm, "2147483647x2147483647x4096", "product of its extents is over 2^53"},
	}
	for _, tt := range bad {
		_, err := tt.op.ParseShape(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s.ParseShape(%q) error = %v, want %q", tt.op.Name, tt.in, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error for %q spans lines: %q", tt.in, err)
		}
	}
}

func FuzzParseShape(f *testing.F) {
	for _, s := range []string{"4096x1024", "0x5", "-1x3", "x", "1x2x3x4"} {
		f.Add(s)
	}
	ops := []Op{
		{Name: "softmax", Dims: []string{"R", "C"}},
		{Name: "gemm", Dims: []string{"M", "N", "K"}},
		{Name: "attention", Dims: []string{"B", "H", "S", "D"}},
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, op := range ops {
			shape, err := op.ParseShape(s)
			if err != nil {
				continue
			}
			// Leading zeros ("007x1") parse, so compare shapes, not text.
			again, err := op.ParseShape(FormatShape(shape))
			if len(shape) != len(op.Dims) || err != nil || !slices.Equal(again, shape) {
				t.Fatalf("%s.ParseShape(%q) = %v; reparsed %v, %v", op.Name, s, shape, again, err)
			}
			for _, n := range shape {
				if n < 1 || n > MaxDim {
					t.Fatalf("%s.ParseShape(%q) accepted extent %d", op.Name, s, n)
				}
			}
		}
	})
}

func TestRates(t *testing.T) {
	op := Op{FLOPs: func(s []int) float64 { return 2e9 }, Bytes: func(s []int) float64 { return 4e6 }}
	if gbps, gflops := op.Rates(nil, dtype.F32, 1e6); gbps != 4 || gflops != 2000 {
		t.Errorf("Rates at 1 ms = %v GB/s, %v GFLOP/s; want 4, 2000", gbps, gflops)
	}
	if gbps, gflops := op.Rates(nil, dtype.F32, 0); gbps != 0 || gflops != 0 {
		t.Errorf("Rates at 0 ns = %v, %v; want zeros", gbps, gflops)
	}
	if gbps, gflops := (Op{}).Rates(nil, dtype.F32, 5); gbps != 0 || gflops != 0 {
		t.Errorf("Rates without counts = %v, %v; want zeros", gbps, gflops)
	}
}

func TestOpDTypes(t *testing.T) {
	const bf16 = dtype.BF16
	for _, tt := range []struct {
		name   string
		dtypes []dtype.DType
		dt     dtype.DType
		err    string // "" when supported
	}{
		{"nil is f32", nil, dtype.F32, ""},
		{"nil is f32 only", nil, bf16, "op x has no bf16 kernels (it has: f32)"},
		{"declared", []dtype.DType{dtype.F32, bf16}, bf16, ""},
		{"narrowed", []dtype.DType{bf16}, dtype.F32, "op x has no f32 kernels (it has: bf16)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op := Op{Name: "x", DTypes: tt.dtypes}
			err := op.CheckDType(tt.dt)
			if got := op.SupportsDType(tt.dt); got != (tt.err == "") {
				t.Errorf("SupportsDType(%s) = %v", tt.dt, got)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
				t.Errorf("CheckDType(%s) = %v, want %q", tt.dt, err, tt.err)
			}
		})
	}
	if r := OutputRounding(dtype.F32); r != 0 {
		t.Errorf("OutputRounding(f32) = %g, want 0: f32 tolerances already count its rounding", r)
	}
}
