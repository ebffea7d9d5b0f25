package cuda

import "testing"

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
			if !strings.Contains(src, fmt.Sprintf(f, dt)) || strings.Contains(src, fmt.Sprintf(f, other)) {
				t.Errorf("%s: %q defined: %v; of %s: %v", dt, fmt.Sprintf(f, dt), strings.Contains(src, fmt.Sprintf(f, dt)), other, strings.Contains(src, fmt.Sprintf(f, other)))
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
