package emu

import (
	"context"
	"math"
	"testing"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/measure"
)

// TestCausalSkips checks that the causal CUDA kernels, specialised and
// shape-generic, never read a key tile above the diagonal: K and V are
// NaN from key 128 on, in every head, so that a block of rows below 128
// that loaded or used such a tile would have a NaN in its output (a
// masked key has weight 0, but 0·NaN is NaN, and a NaN score poisons the
// running maximum's rescaling). Rows from 128 on attend to the NaN keys
// and are NaN, in the reference too. Every br and bc divides 128, so no
// block of rows straddles it.
func TestCausalSkips(t *testing.T) {
	const poisonFrom = 128
	shape := []int{1, 2, 256, 64}
	tg := target(t, "sm_90")
	c := checker(t, false)
	c.Orders = Orders[:2]
	sp := attention.CUDATemplateCausal.Space(shape, tg)
	cfgs := parseValid(sp, []string{
		"br=16,bc=64,warps=2,tn=4,kv_copy=cp_async",
		"br=64,bc=16,warps=4,tn=2,kv_copy=sync",
		"br=32,bc=128,warps=4,tn=4,kv_copy=cp_async",
		"br=128,bc=32,warps=8,tn=4,kv_copy=sync",
	})
	if len(cfgs) != 4 {
		t.Fatalf("%d of the 4 configs are valid at %v", len(cfgs), shape)
	}
	set := measure.Inputs(attention.CausalOp, shape, "", 5)[0]
	s, d := shape[2], shape[3]
	for bh := range shape[0] * shape[1] {
		for _, in := range set.Ins[1:] { // K and V
			for i := (bh*s + poisonFrom) * d; i < (bh+1)*s*d; i++ {
				in[i] = float32(math.NaN())
			}
		}
	}
	attention.CausalOp.Reference(shape, set.Ins, set.Want)
	for _, cfg := range cfgs {
		for _, generic := range []bool{false, true} {
			k := kernels.Kernel{Name: "k", Shape: shape, Config: cfg}
			var at []int
			if generic {
				k.Shape, at = nil, shape
			}
			o, err := c.EmulateAt(context.Background(), attention.CUDATemplateCausal.CUDA.EmitCUDA(k), at, "sm_90", []measure.InputSet{set})
			if err != nil {
				t.Fatal(err)
			}
			if !o.OK {
				t.Errorf("%s (generic %v): %s", cfg, generic, o)
			}
		}
	}
}
