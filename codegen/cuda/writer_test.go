package cuda

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/dtype"
)

func TestWriter(t *testing.T) {
	var w Writer
	w.Open("if (%s)", "ok")
	w.Line("x = %d;", 1)
	w.Line("")
	w.Scope()
	w.Line("float y;")
	w.Close()
	w.Close()
	w.Raw("// end\n")
	want := "if (ok) {\n\tx = 1;\n\n\t{\n\t\tfloat y;\n\t}\n}\n// end\n"
	if got := w.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestHalfHelpers checks that the helpers of each 16-bit dtype define its
// four conversions and none of the other's, and that f32 has none. Their
// values are checked under emulation (package measure/cuda/emu).
func TestHalfHelpers(t *testing.T) {
	for dt, other := range map[dtype.DType]dtype.DType{dtype.BF16: dtype.F16, dtype.F16: dtype.BF16} {
		src := HalfHelpers(dt)
		for _, f := range []string{"float at_%s_to_float(", "short at_float_to_%s(", "float2 at_%sx2_to_float2(", "unsigned at_float2_to_%sx2("} {
			mine, theirs := fmt.Sprintf(f, dt), fmt.Sprintf(f, other)
			if !strings.Contains(src, mine) || strings.Contains(src, theirs) {
				t.Errorf("%s: defines %q: %v; defines %q: %v", dt, mine, strings.Contains(src, mine), theirs, strings.Contains(src, theirs))
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("HalfHelpers(f32) did not panic")
		}
	}()
	HalfHelpers(dtype.F32)
}
