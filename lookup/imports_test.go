package lookup_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyLookup keeps this package's tests free of op packages
// (kernels/softmax, kernels/all, ...): the tests find softmax in the
// registry only because lookup imports the ops itself, which is what a
// program that imports only lookup relies on.
func TestImportsOnlyLookup(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test files found")
	}
	const kernels = "github.com/autotune-dev/autotune/kernels"
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			if strings.HasPrefix(path, kernels+"/") {
				t.Errorf("%s imports %s: the tests would no longer show that importing lookup is enough", file, path)
			}
		}
	}
}
