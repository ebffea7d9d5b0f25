package kernels

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
)

// Op is what an operator computes, independent of any backend: its name,
// the dimensions of its shape, the sizes of its arguments, the float64
// reference that decides whether a kernel is correct, the tolerance of that
// check and the work one call does. Each op package (kernels/<op>) declares
// its ops and registers them with RegisterOp; the templates that implement
// an op on a backend embed it (see Template).
//
// Every kernel, whatever the op and backend, is called as fn(out, in0, in1,
// ...): the output first, then the inputs in the order Args gives, all
// slices of the workload's dtype (DTypes): []float32 for f32, []uint16
// holding the 16 bits of bf16 or f16 (GoElem).
type Op struct {
	Name    string
	Dims    []string // dimension letters in shape order, e.g. {"M", "N", "K"}
	Summary string   // one line for listings
	Example string   // a typical shape, for help texts

	// Variants name related ops by a command-line flag: attention's
	// {Flag: "causal", Op: "attention_causal"} makes `--op attention
	// --causal` mean attention_causal. An op that is its own variant lists
	// it too, so that the flag is accepted and changes nothing.
	Variants []Variant

	// DTypes are the element types the op has kernels for; nil means f32
	// only. A template may support fewer: it embeds a copy of the op, and
	// narrows that copy's DTypes; callers check the template's
	// (Template.CheckDType) where they have one. See SupportsDType.
	DTypes []dtype.DType

	// Args returns the element counts of the kernel's inputs, in argument
	// order, and of its output.
	Args func(shape []int) (ins []int, out int)
	// Reference computes the output in float64 from the inputs as stored:
	// the harness rounds every input to the workload's dtype
	// (dtype.DType.Round, the identity for f32) before it hands the same
	// values to the kernel and to Reference, so the reference never
	// credits a kernel with precision its inputs do not have, and the
	// tolerance covers only what the kernel itself rounds.
	Reference func(shape []int, ins [][]float32, out []float64)
	// Tolerance bounds the error of a correct kernel of dtype dt: an
	// output is wrong where |got-want| > abs + rel*|want|. It depends on
	// the shape because rounding error grows with the reduction length,
	// and on dt because the output is rounded to it (OutputRounding);
	// accumulation is float32 whatever dt.
	Tolerance func(shape []int, dt dtype.DType) (rel, abs float64)
	// FLOPs is the floating-point work of one call; Bytes the minimum bytes
	// one call must move (each input read and the output written once), for
	// GB/s and the roofline.
	FLOPs func(shape []int) float64
	Bytes func(shape []int) float64

	// Inputs are the input sets every candidate is checked on, each with
	// its reference output: the distributions of the inputs are part of
	// the op's semantics (softmax logits in the hundreds, rows with -Inf).
	// Candidates are timed on the first. Nil means DefaultInputs.
	Inputs []InputSet

	// EmitReference, when set, adds to f a function with the given name
	// that computes what Reference computes, in plain Go float64 loops
	// that import only the standard library:
	//
	//	func name(shape []int, ins [][]float32, out []float64)
	//
	// Generated packages (autotune gen) check their kernels with it in
	// their own tests, which cannot import autotune.
	EmitReference func(f *jen.File, name string)

	// API names the op in generated packages: see API. Zero fields are
	// derived from Name and Dims.
	API API
}

// API is how a generated package (autotune gen) names an op: its exported
// function, its arguments (the output, then the inputs in the order of
// Args) and its extents (in the order of Dims).
type API struct {
	Func string   // "GemmBiasReLU"; default: Name in camel case
	Args []string // {"c", "a", "b", "bias"}; default: out, in0, in1, ...
	Dims []string // {"m", "n", "k"}; default: Dims in lower case
}

// GoAPI returns op.API with its zero fields filled in.
func (op Op) GoAPI() API {
	api := API{Func: op.API.Func, Args: slices.Clone(op.API.Args), Dims: slices.Clone(op.API.Dims)}
	if api.Func == "" {
		for _, part := range strings.Split(op.Name, "_") {
			if part != "" {
				api.Func += strings.ToUpper(part[:1]) + part[1:]
			}
		}
	}
	if api.Args == nil {
		ins, _ := op.Args(op.mustExample())
		api.Args = []string{"out"}
		for i := range ins {
			api.Args = append(api.Args, fmt.Sprintf("in%d", i))
		}
	}
	if api.Dims == nil {
		for _, d := range op.Dims {
			api.Dims = append(api.Dims, strings.ToLower(d))
		}
	}
	return api
}

func (op Op) mustExample() []int {
	shape, err := op.ParseShape(op.Example)
	if err != nil {
		panic(fmt.Sprintf("kernels: op %s: example shape: %v", op.Name, err))
	}
	return shape
}

// BytesOf is Bytes for a workload of dtype dt. Bytes counts float32
// elements; every argument of a kernel has the workload's dtype, so the
// bytes scale with its size. It is 0 when the op has no Bytes.
func (op Op) BytesOf(shape []int, dt dtype.DType) float64 {
	if op.Bytes == nil {
		return 0
	}
	return op.Bytes(shape) * float64(cmp.Or(dt, dtype.Default).Size()) / 4
}

// Rates returns the throughput of one call on shape in dtype dt that takes
// ns nanoseconds: GB/s from BytesOf and GFLOP/s from FLOPs (bytes and
// FLOPs per nanosecond). Both are 0 when ns is not positive, each when the
// op lacks its count.
func (op Op) Rates(shape []int, dt dtype.DType, ns float64) (gbps, gflops float64) {
	if !(ns > 0) {
		return 0, 0
	}
	if op.Bytes != nil {
		gbps = op.BytesOf(shape, dt) / ns
	}
	if op.FLOPs != nil {
		gflops = op.FLOPs(shape) / ns
	}
	return gbps, gflops
}

// A Variant is an op named by another op and a flag; see Op.Variants.
type Variant struct {
	Flag string // the flag's name without dashes: "causal"
	Doc  string // what the flag means, for --help
	Op   string // the op it selects
}

// SupportsDType reports whether op has kernels of dt (DTypes; nil means
// f32 only).
func (op Op) SupportsDType(dt dtype.DType) bool {
	return slices.Contains(op.DTypesOrDefault(), dt)
}

// DTypesOrDefault returns op.DTypes, or {f32} when the op names none.
func (op Op) DTypesOrDefault() []dtype.DType {
	if len(op.DTypes) == 0 {
		return []dtype.DType{dtype.F32}
	}
	return slices.Clone(op.DTypes)
}

// CheckDType returns an error of one line when op has no kernels of dt,
// naming those it has: "op softmax has no bf16 kernels (it has: f32)".
func (op Op) CheckDType(dt dtype.DType) error {
	if op.SupportsDType(dt) {
		return nil
	}
	return fmt.Errorf("op %s has no %s kernels (it has: %s)", op.Name, dt, dtype.List(op.DTypesOrDefault()))
}

// OutputRoundingAbs is the absolute error of storing a float32 result
// below dt's normal range as dt, which OutputRounding does not bound:
// half dt's smallest subnormal (2^-25 for f16), 0 for f32. Ops whose
// outputs can be that small add it to their abs tolerance.
func OutputRoundingAbs(dt dtype.DType) float64 {
	if cmp.Or(dt, dtype.Default) == dtype.F32 {
		return 0
	}
	return dt.AbsEpsilon()
}

// GoElem returns the element type of a Go kernel's slices of dtype dt:
// float32 for f32, uint16 for bf16 and f16, which Go stores as their 16
// bits (package dtype converts).
func GoElem(dt dtype.DType) *jen.Statement {
	if dt.Size() == 2 {
		return jen.Uint16()
	}
	return jen.Float32()
}

// OutputRounding is the relative error of storing a float32 result as dt,
// beyond the float32 rounding every op's error model already counts: 0
// for f32. Ops add it to their rel tolerance.
func OutputRounding(dt dtype.DType) float64 {
	return max(0, dt.Epsilon()-dtype.F32.Epsilon())
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
	product := int64(1) // int64: MaxProduct overflows a 32-bit int
	for _, n := range shape {
		if product > MaxProduct/int64(n) {
			return nil, fmt.Errorf("invalid shape %q: the product of its extents is over 2^53; no workload is that large", s)
		}
		product *= int64(n)
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
