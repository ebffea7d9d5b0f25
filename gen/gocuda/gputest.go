package gocuda

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
)

// gpuTestFile is the package's GPU test: the harness (gpu_test.go.txt)
// and, per op, its cases: its tuned shapes and shapes never tuned, with
// the lengths and tolerance there.
func (w *writer) gpuTestFile() string {
	var b strings.Builder
	b.WriteString(gpuTestSource)
	b.WriteString("\nvar gpuCases = []gpuCase{\n")
	for _, op := range w.ops {
		a := op.api
		var args, dims []string
		for i := range a.Args {
			args = append(args, fmt.Sprintf("p[%d]", i))
		}
		for i := range a.Dims {
			dims = append(dims, fmt.Sprintf("d[%d]", i))
		}
		fmt.Fprintf(&b, "\t{op: %q, run: func(p []uintptr, d []int) error { return %s(0, %s, %s) },\n", op.op.Name, a.Func, strings.Join(args, ", "), strings.Join(dims, ", "))
		fmt.Fprintf(&b, "\t\tfill: fill%s, reference: reference%s, shapes: []gpuShape{\n", a.Func, a.Func)
		for _, shape := range w.testShapes(op) {
			ins, out := op.op.Args(shape)
			rel, abs := op.op.Tolerance(shape, dtype.F32)
			fmt.Fprintf(&b, "\t\t\t{shape: %#v, ins: %#v, out: %d, rel: %v, abs: %v, tuned: %v},\n", shape, ins, out, rel, abs, w.tuned(op, shape))
		}
		b.WriteString("\t\t}},\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// testShapes are the shapes TestGPU runs op at: every tuned shape, the
// op's example, and odd ones (every extent 1; primes).
func (w *writer) testShapes(op *opPlan) [][]int {
	var shapes [][]int
	add := func(s []int) {
		if !slices.ContainsFunc(shapes, func(t []int) bool { return slices.Equal(s, t) }) {
			shapes = append(shapes, s)
		}
	}
	for _, arch := range w.o.Archs {
		for _, e := range op.archs[arch].entries {
			add(e.shape)
		}
	}
	example, _ := op.op.ParseShape(op.op.Example)
	add(example)
	ones, odd := make([]int, len(example)), make([]int, len(example))
	primes := []int{3, 37, 61, 7}
	for i := range ones {
		ones[i], odd[i] = 1, primes[i%len(primes)]
	}
	add(ones)
	add(odd)
	return shapes
}

// tuned says whether a record of some architecture chose op's kernel for
// shape.
func (w *writer) tuned(op *opPlan, shape []int) bool {
	for _, arch := range w.o.Archs {
		for _, e := range op.archs[arch].entries {
			if slices.Equal(e.shape, shape) {
				return true
			}
		}
	}
	return false
}

// referenceFile is the ops' float64 references and input fills, in plain
// Go (kernels.Op.EmitReference, InputSet.EmitFill), for TestGPU.
func (w *writer) referenceFile() ([]byte, error) {
	f := jen.NewFile(w.o.Pkg)
	f.HeaderComment(strings.TrimSuffix(w.header(), "\n\n"))
	for _, op := range w.ops {
		op.op.EmitReference(f, "reference"+op.api.Func)
		name := "fill" + op.api.Func
		if sets := op.op.InputSetsFor(dtype.F32); len(sets) > 0 && sets[0].EmitFill != nil {
			sets[0].EmitFill(f, name)
			continue
		}
		return nil, fmt.Errorf("gocuda: %s's first input set cannot be emitted", op.op.Name)
	}
	return golang.Render(f)
}
