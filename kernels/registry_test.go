package kernels

import (
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/schedule"
)

// testOp returns a complete op of the given name; the registry is global, so
// every test registers names of its own.
func testOp(name string, variants ...Variant) Op {
	return Op{
		Name: name, Dims: []string{"N"}, Example: "16", Summary: "test op", Variants: variants,
		Args:      func(shape []int) ([]int, int) { return []int{shape[0]}, shape[0] },
		Reference: func(shape []int, ins [][]float32, out []float64) {},
		Tolerance: func([]int, dtype.DType) (float64, float64) { return 0, 0 },
		FLOPs:     func(shape []int) float64 { return float64(shape[0]) },
		Bytes:     func(shape []int) float64 { return 8 * float64(shape[0]) },
	}
}

func testTemplate(op Op, b Backend) Template {
	t := Template{Op: op, Backend: b, Version: "t-1",
		Space: func([]int, device.Target) *schedule.Space { return schedule.NewSpace(nil) }}
	if b == CUDA {
		t.CUDA = CUDAFunc(func(Kernel) CUDAKernel { return CUDAKernel{} })
	}
	return t
}

func mustPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Errorf("%s did not panic", what)
			return
		}
		if msg, _ := r.(string); !strings.Contains(msg, want) {
			t.Errorf("%s panicked with %v, want %q", what, r, want)
		}
	}()
	f()
}

func TestRegistry(t *testing.T) {
	a := testOp("regtest_a", Variant{Flag: "regtest_flag", Op: "regtest_b", Doc: "b instead of a"})
	b := testOp("regtest_b", Variant{Flag: "regtest_flag", Op: "regtest_b"})
	RegisterOp(a)
	RegisterOp(b)
	Register(testTemplate(b, CUDA))

	if got, err := Lookup("regtest_a"); err != nil || got.Name != "regtest_a" || !slices.Equal(got.Dims, a.Dims) {
		t.Errorf("Lookup(regtest_a) = %+v, %v", got, err)
	}
	if _, err := Lookup("regtest_none"); err == nil || !strings.Contains(err.Error(), "regtest_a, regtest_b") {
		t.Errorf("Lookup of an unknown op: %v, want the known ones listed", err)
	}
	if names := Names(); !slices.IsSorted(names) || !slices.Contains(names, "regtest_a") {
		t.Errorf("Names() = %v, want sorted with regtest_a", names)
	}
	if _, ok := TemplateFor("regtest_b", CUDA); !ok {
		t.Error("TemplateFor(regtest_b, cuda) not found")
	}
	if _, ok := TemplateFor("regtest_b", CPU); ok {
		t.Error("TemplateFor(regtest_b, cpu) found a template that was never registered")
	}
	if got := Backends("regtest_b"); !slices.Equal(got, []Backend{CUDA}) {
		t.Errorf("Backends(regtest_b) = %v", got)
	}

	// Variants: the flag selects b from a, leaves b as it is, and is
	// refused elsewhere with the ops that take it.
	for _, name := range []string{"regtest_a", "regtest_b"} {
		if op, err := Resolve(name, "regtest_flag"); err != nil || op.Name != "regtest_b" {
			t.Errorf("Resolve(%s, regtest_flag) = %s, %v; want regtest_b", name, op.Name, err)
		}
	}
	if op, err := Resolve("regtest_a"); err != nil || op.Name != "regtest_a" {
		t.Errorf("Resolve(regtest_a) = %s, %v", op.Name, err)
	}
	RegisterOp(testOp("regtest_c"))
	if _, err := Resolve("regtest_c", "regtest_flag"); err == nil || err.Error() != "--regtest_flag applies to --op regtest_a only, not regtest_c" {
		t.Errorf("Resolve(regtest_c, regtest_flag) error = %v", err)
	}
	if !slices.ContainsFunc(VariantFlags(), func(v Variant) bool { return v.Flag == "regtest_flag" && v.Doc == "b instead of a" }) {
		t.Errorf("VariantFlags() = %v, want regtest_flag with a's doc", VariantFlags())
	}

	// Changing what Ops returns changes nothing registered.
	for _, op := range Ops() {
		if op.Name == "regtest_a" {
			op.Dims[0] = "Z"
			op.Variants[0].Op = "elsewhere"
		}
	}
	if got, _ := Lookup("regtest_a"); got.Dims[0] != "N" || got.Variants[0].Op != "regtest_b" {
		t.Errorf("Ops() let a caller change the registry: %+v", got)
	}
}

func TestRegisterMistakes(t *testing.T) {
	RegisterOp(testOp("regtest_dup"))
	incomplete := testOp("regtest_incomplete")
	incomplete.Reference = nil
	badExample := testOp("regtest_example")
	badExample.Example = "0"
	noCode := testTemplate(testOp("regtest_dup"), CPU)
	noBackend := testTemplate(testOp("regtest_dup"), "")
	noCUDA := testTemplate(testOp("regtest_dup"), CUDA)
	noCUDA.CUDA = nil
	for _, tt := range []struct {
		what, want string
		f          func()
	}{
		{"a second op of one name", "registered twice", func() { RegisterOp(testOp("regtest_dup")) }},
		{"an op without a reference", "are required", func() { RegisterOp(incomplete) }},
		{"an op with a bad example", "example shape", func() { RegisterOp(badExample) }},
		{"an unnamed op", "bad op name", func() { RegisterOp(testOp("")) }},
		{"a template of an unknown op", "is not registered", func() { Register(testTemplate(testOp("regtest_unknown"), CUDA)) }},
		{"a CPU template without a Go emitter", "needs a Go emitter", func() { Register(noCode) }},
		{"a template without a backend", "no backend", func() { Register(noBackend) }},
		{"a CUDA template without a CUDA emitter", "needs a CUDA emitter", func() { Register(noCUDA) }},
	} {
		mustPanic(t, tt.what, tt.want, tt.f)
	}
	Register(testTemplate(testOp("regtest_dup"), CUDA))
	mustPanic(t, "a second template of one op and backend", "registered already", func() {
		Register(testTemplate(testOp("regtest_dup"), CUDA))
	})
}

func TestBackendOf(t *testing.T) {
	sm86, _ := device.Lookup("sm_86")
	if BackendOf(sm86) != CUDA || BackendOf(device.Host()) != CPU {
		t.Errorf("BackendOf(sm_86) = %s, BackendOf(host) = %s", BackendOf(sm86), BackendOf(device.Host()))
	}
}
