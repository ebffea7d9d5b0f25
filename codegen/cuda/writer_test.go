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
