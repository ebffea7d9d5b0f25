package autotune

import (
	"strings"
	"testing"
)

func TestRequire(t *testing.T) {
	goMod := "module m\n\ngo 1.26\n\nrequire example.com/one v1.2.3\n\nrequire (\n\texample.com/two v0.1.0 // indirect\n\texample.com/three v3.0.0\n)\n"
	goSum := "example.com/one v1.2.3 h1:a=\nexample.com/one v1.2.3/go.mod h1:b=\nexample.com/one v1.2.2/go.mod h1:old=\n" +
		"example.com/two v0.1.0 h1:c=\nexample.com/two v0.1.0/go.mod h1:d=\nexample.com/three v3.0.0/go.mod h1:e=\n"
	req, sum, err := requireFrom(goMod, goSum, []string{"example.com/two", "example.com/one", "example.com/two"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "require (\n\texample.com/one v1.2.3\n\texample.com/two v0.1.0\n)\n"; req != want {
		t.Errorf("require block %q, want %q", req, want)
	}
	if want := "example.com/one v1.2.3 h1:a=\nexample.com/one v1.2.3/go.mod h1:b=\nexample.com/two v0.1.0 h1:c=\nexample.com/two v0.1.0/go.mod h1:d=\n"; sum != want {
		t.Errorf("go.sum %q, want %q", sum, want)
	}
	for path, msg := range map[string]string{
		"example.com/four":  "not a requirement",
		"example.com/three": "lacks the checksums",
	} {
		if _, _, err := requireFrom(goMod, goSum, []string{path}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", path, err, msg)
		}
	}
}

// The embedded files are the module's.
func TestEmbedded(t *testing.T) {
	if !strings.HasPrefix(GoMod, "module github.com/autotune-dev/autotune\n") || !strings.Contains(GoSum, " h1:") {
		t.Errorf("GoMod %.40q, GoSum %.40q", GoMod, GoSum)
	}
	if _, _, err := Require("gonum.org/v1/gonum"); err != nil {
		t.Error(err)
	}
}
