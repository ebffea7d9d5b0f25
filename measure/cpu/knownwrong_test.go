package cpu

import (
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// TestKnownWrong checks which input sets a baseline's check leaves out
// (kernels.Baseline.KnownWrong), that its doc says so, and that the timed
// set (but for a 16-bit baseline) or an unknown name is refused.
func TestKnownWrong(t *testing.T) {
	tmpl := kernels.Template{Op: kernels.Op{Name: "op", Inputs: []kernels.InputSet{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}
	skip, doc, err := knownWrong(tmpl, kernels.Baseline{Name: "lib", Doc: "a library", KnownWrong: []string{"c", "b"}}, dtype.F32)
	if err != nil || !slices.Equal(skip, []int{2, 1}) || !strings.Contains(doc, "not checked on the inputs c, b") {
		t.Errorf("skip %v, doc %q, err %v; want [2 1], a doc that names c and b, no error", skip, doc, err)
	}
	if skip, doc, err := knownWrong(tmpl, kernels.Baseline{Doc: "plain"}, dtype.F32); err != nil || skip != nil || doc != "plain" {
		t.Errorf("no KnownWrong: skip %v, doc %q, err %v", skip, doc, err)
	}
	// A 16-bit baseline may be wrong on every set, the timed one too.
	if skip, _, err := knownWrong(tmpl, kernels.Baseline{Name: "lib-bf16", DType: dtype.BF16, KnownWrong: []string{"a", "b", "c"}}, dtype.BF16); err != nil || !slices.Equal(skip, []int{0, 1, 2}) {
		t.Errorf("a bf16 baseline wrong on every set: skip %v, err %v; want [0 1 2], no error", skip, err)
	}
	for _, bad := range []string{"a", "d"} {
		if _, _, err := knownWrong(tmpl, kernels.Baseline{Name: "lib", KnownWrong: []string{bad}}, dtype.F32); err == nil {
			t.Errorf("KnownWrong %q accepted", bad)
		}
	}
}
