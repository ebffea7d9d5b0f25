package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/autotune-dev/autotune/dtype"
)

// Spec is one workload of a tasks file (docs/tasks.md):
//
//	[{"op": "gemm_bias_relu", "shape": "128x3072x768", "weight": 1},
//	 {"op": "attention", "shape": "1x12x128x64", "causal": true, "dtype": "f32"}]
//
// Op, Shape and DType are as autotune tune's --op, --shape and --dtype (a
// missing dtype is dtype.Default); Causal is its --causal. Weight is how many times a model's forward pass calls the
// workload; it scales the workload's latency in the weighted total.
type Spec struct {
	Op     string  `json:"op"`
	Shape  string  `json:"shape"`
	Weight float64 `json:"weight"` // absent in the file means 1
	Causal bool    `json:"causal,omitempty"`
	Name   string  `json:"name,omitempty"` // optional label, e.g. "ffn up"
	// DType is checked by whoever resolves the op, as Op and Shape are.
	DType dtype.DType `json:"dtype,omitempty"`
}

// Parse reads a tasks file: a JSON list of Specs, unknown fields refused.
// A missing weight becomes 1. The op and shape are checked by whoever
// resolves them (they know the ops); here only that they are there.
func Parse(r io.Reader) ([]Spec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw []struct {
		Spec
		Weight *float64 `json:"weight"`
	}
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("tasks: not JSON: the file ends early (want a list of {op, shape, weight, causal})")
		case errors.As(err, &se):
			return nil, fmt.Errorf("tasks: not JSON at line %d: %v", line(data, se.Offset), err)
		case errors.As(err, &te):
			return nil, fmt.Errorf("tasks: line %d: %s must be %s, not %s (want a list of {op, shape, weight, causal})", line(data, te.Offset), fieldName(te.Field), te.Type, te.Value)
		}
		return nil, fmt.Errorf("tasks: %v (want a list of {op, shape, weight, causal})", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, errors.New("tasks: more than one JSON value; want one list")
	}
	specs := make([]Spec, len(raw))
	for i, r := range raw {
		specs[i] = r.Spec
		specs[i].Weight = 1
		if specs[i].DType == "" {
			specs[i].DType = dtype.Default
		}
		if r.Weight != nil {
			specs[i].Weight = *r.Weight
		}
	}
	if len(specs) == 0 {
		return nil, errors.New("tasks: the list is empty")
	}
	seen := map[string]int{}
	for i := range specs {
		s := &specs[i]
		switch {
		case s.Op == "":
			return nil, fmt.Errorf("tasks: task %d has no op", i+1)
		case s.Shape == "":
			return nil, fmt.Errorf("tasks: task %d (%s) has no shape", i+1, s.Op)
		case !(s.Weight > 0) || math.IsInf(s.Weight, 0):
			return nil, fmt.Errorf("tasks: task %d (%s %s) has weight %g; want a positive number", i+1, s.Op, s.Shape, s.Weight)
		}
		key := fmt.Sprintf("%s %s %v %s", s.Op, s.Shape, s.Causal, s.DType)
		if j, ok := seen[key]; ok {
			return nil, fmt.Errorf("tasks: tasks %d and %d are the same workload (%s %s %s); add their weights instead", j+1, i+1, s.Op, s.Shape, s.DType)
		}
		seen[key] = i
	}
	return specs, nil
}

func fieldName(f string) string {
	if f == "" {
		return "the file"
	}
	return f
}

// line is the line of data at byte offset off, counting from 1.
func line(data []byte, off int64) int {
	return bytes.Count(data[:min(int(off), len(data))], []byte("\n")) + 1
}
