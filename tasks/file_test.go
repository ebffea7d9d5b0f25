package tasks

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
)

func TestParse(t *testing.T) {
	specs, err := Parse(strings.NewReader(`[
		{"op": "gemm", "shape": "128x768x768", "weight": 4, "name": "qkv"},
		{"op": "attention", "shape": "1x12x128x64", "causal": true},
		{"op": "attention", "shape": "1x12x128x64", "causal": true, "dtype": "x16"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 3 || specs[0].Weight != 4 || specs[0].Name != "qkv" || specs[1].Weight != 1 || !specs[1].Causal {
		t.Errorf("got %+v", specs)
	}
	// A task without a dtype is f32; one with a dtype keeps it, for the
	// op to accept or refuse, and is another workload.
	if specs[0].DType != dtype.F32 || specs[2].DType != "x16" {
		t.Errorf("dtypes %q, %q; want f32 and x16", specs[0].DType, specs[2].DType)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, "not JSON"},
		{`[{"op": "gemm", "shape": "1x2x3"},`, "not JSON"},
		{`{"op": "gemm"}`, "want a list"},
		{`[]`, "the list is empty"},
		{`[{"shape": "1x2x3"}]`, "task 1 has no op"},
		{`[{"op": "gemm"}]`, "task 1 (gemm) has no shape"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": 0}]`, "has weight 0"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": -2}]`, "has weight -2"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": "2"}]`, "weight must be float64"},
		{`[{"op": "gemm", "shape": "1x2x3", "weigth": 2}]`, `unknown field "weigth"`},
		{`[{"op": "gemm", "shape": "1x2x3"}, {"op": "gemm", "shape": "1x2x3"}]`, "tasks 1 and 2 are the same workload"},
		{`[{"op": "gemm", "shape": "1x2x3"}, {"op": "gemm", "shape": "1x2x3", "dtype": "f32"}]`, "tasks 1 and 2 are the same workload (gemm 1x2x3 f32)"},
		{`[{"op": "gemm", "shape": "1x2x3"}] []`, "more than one JSON value"},
	} {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tt.in, err, tt.want)
		}
	}
}
