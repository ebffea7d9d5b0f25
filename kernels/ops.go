package kernels

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Op describes one operator: its name and the dimensions of its shape.
type Op struct {
	Name    string
	Dims    []string // dimension letters in shape order, e.g. {"M", "N", "K"}
	Summary string   // one line for listings
	Example string   // a typical shape, for help texts
}

// ops is the list of known operators. Keep it in the order listings show.
var ops = []Op{
	{Name: "softmax", Dims: []string{"R", "C"}, Example: "4096x1024",
		Summary: "row-wise softmax over the last axis of an R×C matrix"},
	{Name: "gemm", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
		Summary: "C = A·B for row-major M×K and K×N matrices"},
	{Name: "gemm_bias", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
		Summary: "C = A·B + bias for row-major M×K and K×N matrices and an N-vector bias added to every row"},
	{Name: "gemm_bias_relu", Dims: []string{"M", "N", "K"}, Example: "1024x1024x1024",
		Summary: "C = max(0, A·B + bias) for row-major M×K and K×N matrices and an N-vector bias"},
	{Name: "attention", Dims: []string{"B", "H", "S", "D"}, Example: "1x8x1024x64",
		Summary: "softmax(Q·Kᵀ/√D)·V over [B][H][S][D] tensors"},
	{Name: "attention_causal", Dims: []string{"B", "H", "S", "D"}, Example: "1x8x1024x64",
		Summary: "softmax(Q·Kᵀ/√D + causal mask)·V over [B][H][S][D] tensors: query i attends to keys j ≤ i"},
}

// Ops returns every known operator.
func Ops() []Op {
	out := make([]Op, len(ops))
	for i, op := range ops {
		op.Dims = append([]string(nil), op.Dims...)
		out[i] = op
	}
	return out
}

// Names returns the names of the known operators.
func Names() []string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}
	return names
}

// Lookup returns the named operator or an error listing the known ones.
func Lookup(name string) (Op, error) {
	for _, op := range Ops() {
		if op.Name == name {
			return op, nil
		}
	}
	return Op{}, fmt.Errorf("unknown op %q (known: %s)", name, strings.Join(Names(), ", "))
}

// ShapeForm is how the op's shape is written, e.g. "MxNxK".
func (op Op) ShapeForm() string { return strings.Join(op.Dims, "x") }

// MaxDim is the largest extent of one dimension: kernels index with int32
// arithmetic on the GPU, and a larger extent is a typo, not a workload.
const MaxDim = math.MaxInt32

// MaxProduct bounds the product of a shape's extents, so that no tensor
// size or work count derived from it can overflow an int.
const MaxProduct = 1 << 53

// ParseShape reads a shape such as "4096x1024": exactly len(op.Dims)
// positive decimal extents joined by 'x', each at most MaxDim.
func (op Op) ParseShape(s string) ([]int, error) {
	want := fmt.Sprintf("want %s for %s, e.g. %s", op.ShapeForm(), op.Name, op.Example)
	parts := strings.Split(s, "x")
	if len(parts) != len(op.Dims) {
		return nil, fmt.Errorf("invalid shape %q: %d dimensions, %s", s, len(parts), want)
	}
	shape := make([]int, len(parts))
	for i, p := range parts {
		dim := op.Dims[i]
		if p == "" {
			return nil, fmt.Errorf("invalid shape %q: %s is empty; %s", s, dim, want)
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return nil, fmt.Errorf("invalid shape %q: %s=%q is not a positive integer; %s", s, dim, p, want)
			}
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n > MaxDim {
			return nil, fmt.Errorf("invalid shape %q: %s=%s is over the limit %d; %s", s, dim, p, MaxDim, want)
		}
		if n == 0 {
			return nil, fmt.Errorf("invalid shape %q: %s is 0, extents start at 1; %s", s, dim, want)
		}
		shape[i] = int(n)
	}
	product := 1
	for _, n := range shape {
		if product > MaxProduct/n {
			return nil, fmt.Errorf("invalid shape %q: the product of its extents is over 2^53; no workload is that large", s)
		}
		product *= n
	}
	return shape, nil
}

// FormatShape writes a shape the way ParseShape reads it.
func FormatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "x")
}
