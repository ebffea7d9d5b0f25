package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// An InputSet is one set of a workload's inputs, in argument order, as
// stored in the workload's dtype, with the reference output the template
// computes from them in float64 and the tolerance of a kernel of that
// dtype on them.
type InputSet struct {
	Name     string
	Ins      [][]float32
	Want     []float64
	Rel, Abs float64
}

// Inputs returns the input sets every backend checks kernels of op for
// shape and dtype dt on (op.InputSets, in that order), set i drawn from a
// PCG seeded with (seed, i) and rounded to dt, each with its reference and
// tolerance: the same seed gives the same sets on every backend. The
// reference sees the rounded inputs, as the kernel does (see
// kernels.Op.Reference).
func Inputs(t kernels.Op, shape []int, dt dtype.DType, seed uint64) []InputSet {
	sizes, outLen := t.Args(slices.Clone(shape))
	type stream struct {
		i    int // the PCG stream of the set: its place among all of op's
		spec kernels.InputSet
	}
	var streams []stream // the sets of dt, in order
	for i, spec := range t.InputSets() {
		if spec.For(dt) {
			streams = append(streams, stream{i, spec}) // the others' streams are skipped, so other dtypes' sets draw the same values
		}
	}
	// The sets are drawn at once, one goroutine each: drawing and rounding
	// are sequential within a set, and a workload people tune on GPUs
	// (softmax 16384×16384) draws a quarter of a billion values a set.
	sets := make([]InputSet, len(streams))
	var wg sync.WaitGroup
	for s, st := range streams {
		wg.Go(func() {
			sets[s] = inputSet(t, st.spec, shape, sizes, outLen, dt, rand.New(rand.NewPCG(seed, uint64(st.i))))
		})
	}
	wg.Wait()
	return sets
}

// inputSet draws one set of spec from r, rounds it to dt and computes its
// reference and tolerance.
func inputSet(t kernels.Op, spec kernels.InputSet, shape, sizes []int, outLen int, dt dtype.DType, r *rand.Rand) InputSet {
	set := InputSet{Name: spec.Name, Ins: make([][]float32, len(sizes)), Want: make([]float64, outLen)}
	for j, n := range sizes {
		set.Ins[j] = make([]float32, n)
	}
	spec.Fill(slices.Clone(shape), r, set.Ins)
	for _, in := range set.Ins {
		for k, x := range in {
			in[k] = dt.Round(x)
		}
	}
	t.Reference(slices.Clone(shape), set.Ins, set.Want)
	tol := t.Tolerance
	if spec.Tolerance != nil {
		tol = spec.Tolerance
	}
	set.Rel, set.Abs = tol(slices.Clone(shape), dt)
	return set
}

// InputsContext is Inputs, given up when ctx is done. A float64 reference
// can take minutes (attention over 100000 positions), far longer than a
// Ctrl-C may wait; the abandoned computation goes on in the background
// until it ends or the process exits, which a command stopped by a signal
// does at once.
func InputsContext(ctx context.Context, t kernels.Op, shape []int, dt dtype.DType, seed uint64) ([]InputSet, error) {
	done := make(chan []InputSet, 1)
	go func() { done <- Inputs(t, shape, dt, seed) }()
	select {
	case sets := <-done:
		return sets, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("computing the reference: %w", ctx.Err())
	}
}
