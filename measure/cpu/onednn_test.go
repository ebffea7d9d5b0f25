//go:build onednn

package cpu

import (
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
)

// TestBenchOneDNNHalf checks that a bench of a bf16 workload lists
// oneDNN's bf16 baseline beside the float32 one on the decoded values,
// for each op with one, where this CPU's oneDNN has the primitives (the
// baseline's Skip says why not), and never the f16 one; and that a bench
// of an f32 workload lists neither.
func TestBenchOneDNNHalf(t *testing.T) {
	for _, c := range []struct {
		tmpl  kernels.Template
		shape []int
	}{{softmax.Template, []int{37, 129}}, {gemm.BiasReLUTemplate, []int{17, 33, 65}}, {attention.Template, []int{1, 2, 37, 64}}} {
		b := BenchBatch{Template: c.tmpl, Shape: c.shape, Target: testTarget()}
		cfg, err := c.tmpl.DefaultConfig(c.shape, b.Target)
		if err != nil {
			t.Fatal(err)
		}
		b.Config = cfg
		names := func(dt dtype.DType) []string {
			b.DType = dt
			entries, err := benchEntries(b)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range entries {
				out = append(out, e.name)
			}
			return out
		}
		want := "onednn-bf16"
		i := slices.IndexFunc(c.tmpl.Baselines, func(b kernels.Baseline) bool { return b.Name == want })
		if i < 0 {
			t.Fatalf("%s has no %s baseline", c.tmpl.Op.Name, want)
		}
		if why := c.tmpl.Baselines[i].Skipped(c.shape); why != "" {
			t.Logf("%s: %s left out: %s", c.tmpl.Op.Name, want, why)
			want = "onednn"
		}
		bf16, f32 := names(dtype.BF16), names(dtype.F32)
		if !slices.Contains(bf16, "onednn") || !slices.Contains(bf16, want) || slices.Contains(bf16, "onednn-f16") {
			t.Errorf("%s bf16 bench: %v; want onednn and %s, not onednn-f16", c.tmpl.Op.Name, bf16, want)
		}
		if !slices.Contains(f32, "onednn") || slices.ContainsFunc(f32, func(n string) bool { return n == "onednn-bf16" || n == "onednn-f16" }) {
			t.Errorf("%s f32 bench: %v; want onednn and no 16-bit one", c.tmpl.Op.Name, f32)
		}
	}
}
