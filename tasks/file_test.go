package tasks

import (
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
)

func TestParse(t *testing.T) {
	const list = `[
		{"op": "gemm", "shape": "128x768x768", "weight": 4, "name": "qkv"},
		{"op": "attention", "shape": "1x12x128x64", "causal": true},
		{"op": "attention", "shape": "1x12x128x64", "causal": true, "dtype": "x16"}
	]`
	// The same tasks as a list and as an object holding the list.
	for name, in := range map[string]string{"list": list, "object": "\n {\"tasks\": " + list + "}"} {
		t.Run(name, func(t *testing.T) {
			specs, err := Parse(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != 3 || specs[0].Weight != 4 || specs[0].Name != "qkv" || specs[1].Weight != 1 || !specs[1].Causal {
				t.Errorf("got %+v", specs)
			}
			// A task without a dtype is f32; one with a dtype keeps it, for
			// the op to accept or refuse, and is another workload.
			if specs[0].DType != dtype.F32 || specs[2].DType != "x16" {
				t.Errorf("dtypes %q, %q; want f32 and x16", specs[0].DType, specs[2].DType)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{``, "not JSON"},
		{`[{"op": "gemm", "shape": "1x2x3"},`, "not JSON"},
		{`{"op": "gemm"}`, `unknown field "op"`},
		{`{}`, `the object has no "tasks" list`},
		{`{"tasks": null}`, `the object has no "tasks" list`},
		{`{"tasks": []}`, "the list is empty"},
		{`{"tasks": {"op": "gemm"}}`, "line 1: tasks must be a list, not an object"},
		{`{"tasks": [{"op": "gemm", "shape": "1x2x3", "weight": "2"}]}`, "line 1: weight must be a number, not a string"},
		{`{"tasks": [{"op": "gemm", "shape": "1x2x3"}], "model": "bert"}`, `unknown field "model"`},
		{`"gemm"`, "line 1: the file must be a list, not a string"},
		{`7`, "the file must be a list, not a number"},
		{`[{"op": "gemm", "shape": [1, 2, 3]}]`, "shape must be a string, not a list"},
		{`[{"op": "gemm", "shape": "1x2x3", "causal": 1}]`, "line 1: causal must be true or false, not a number"},
		{`[]`, "the list is empty"},
		{`[{"shape": "1x2x3"}]`, "task 1 has no op"},
		{`[{"op": "gemm"}]`, "task 1 (gemm) has no shape"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": 0}]`, "has weight 0"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": -2}]`, "has weight -2"},
		{`[{"op": "gemm", "shape": "1x2x3", "weight": "2"}]`, "weight must be a number, not a string"},
		{`[{"op": "gemm", "shape": "1x2x3", "weigth": 2}]`, `unknown field "weigth"`},
		{`[{"op": "gemm", "shape": "1x2x3"}, {"op": "gemm", "shape": "1x2x3"}]`, "tasks 1 and 2 are the same workload"},
		{`[{"op": "gemm", "shape": "1x2x3"}, {"op": "gemm", "shape": "1x2x3", "dtype": "f32"}]`, "tasks 1 and 2 are the same workload (gemm 1x2x3 f32)"},
		{`[{"op": "gemm", "shape": "1x2x3"}] []`, "more than one JSON value"},
	} {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tt.in, err, tt.want)
		}
		// A user reads these: no Go type may show through.
		if err != nil && (strings.Contains(err.Error(), "struct") || strings.Contains(err.Error(), "float64") || strings.Contains(err.Error(), "[]")) {
			t.Errorf("Parse(%q) = %v: names a Go type", tt.in, err)
		}
	}
}
