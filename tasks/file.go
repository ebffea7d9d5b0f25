package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/autotune-dev/autotune/dtype"
)

// Spec is one workload of a tasks file (docs/tasks.md):
//
//	[{"op": "gemm_bias_relu", "shape": "128x3072x768", "weight": 1},
//	 {"op": "attention", "shape": "1x12x128x64", "causal": true, "dtype": "f32"}]
//
// Op, Shape and DType are as autotune tune's --op, --shape and --dtype (a
// missing dtype is dtype.Default; a Shape with ranges, "1..64x768",
// stands for the range's first buckets, which share its Weight, and
// which autotune then extends as it tunes a range alone); Causal is its --causal. Weight is how many times a model's forward pass calls the
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

// rawSpec is a Spec as written: a nil Weight was absent.
type rawSpec struct {
	Spec
	Weight *float64 `json:"weight"`
}

// want says what a tasks file is, for the end of an error message.
const want = `want a list of {op, shape, weight, causal}, or {"tasks": [...]}`

// Parse reads a tasks file: a JSON list of Specs, or an object whose
// "tasks" field is that list; unknown fields are refused. A missing weight
// becomes 1. The op and shape are checked by whoever resolves them (they
// know the ops); here only that they are there.
func Parse(r io.Reader) ([]Spec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	var raw []rawSpec
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		var obj struct {
			Tasks *[]rawSpec `json:"tasks"`
		}
		if err := decode(data, &obj); err != nil {
			return nil, err
		}
		if obj.Tasks == nil {
			return nil, errors.New(`tasks: the object has no "tasks" list (` + want + ")")
		}
		raw = *obj.Tasks
	} else if err := decode(data, &raw); err != nil {
		return nil, err
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

// decode reads data, one JSON value, into v, refusing unknown fields. Its
// errors name the line and say what was expected in words, never in Go
// types.
func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return errors.New("tasks: not JSON: the file ends early (" + want + ")")
		case errors.As(err, &se):
			return fmt.Errorf("tasks: not JSON at line %d: %v", line(data, se.Offset), err)
		case errors.As(err, &te):
			return fmt.Errorf("tasks: line %d: %s must be %s, not %s (%s)", line(data, te.Offset), fieldName(te.Field), kindOf(te.Type), valueOf(te.Value), want)
		}
		return fmt.Errorf("tasks: %v (%s)", strings.TrimPrefix(err.Error(), "json: "), want)
	}
	if dec.More() {
		return errors.New("tasks: more than one JSON value; want one list or one object")
	}
	return nil
}

// fieldName names the field of a type error as the file spells it:
// "weight", not encoding/json's path "tasks.Spec.weight"; "the file" for
// the whole.
func fieldName(f string) string {
	if f == "" {
		return "the file"
	}
	return f[strings.LastIndexByte(f, '.')+1:]
}

// kindOf says in JSON's words what a Go type is decoded from.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return kindOf(t.Elem())
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// valueOf turns encoding/json's description of a value ("array", "number
// -5") into words: "a list", "the number -5".
func valueOf(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + n
	}
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "number":
		return "a number"
	}
	return v
}

// line is the line of data at byte offset off, counting from 1.
func line(data []byte, off int64) int {
	return bytes.Count(data[:min(int(off), len(data))], []byte("\n")) + 1
}
