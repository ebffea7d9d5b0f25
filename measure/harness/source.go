package harness

import (
	"bytes"
	"embed"
	"io/fs"
	"strings"
)

// ImportPath is the import path of this package in autotune.
const ImportPath = "github.com/autotune-dev/autotune/measure/harness"

//go:embed *.go
var source embed.FS

// Files returns the source files of this package, tests left out, by
// name, for a harness's module to hold a copy.
func Files() map[string][]byte {
	files := make(map[string][]byte)
	entries, _ := fs.ReadDir(source, ".")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, _ := source.ReadFile(e.Name())
		files[e.Name()] = b
	}
	return files
}

// Relocate returns src, a Go file of a harness, with its imports of
// packages of autotune under prefix (this module's path and a slash, or a
// directory of it) pointing at path + the rest: after Relocate(src,
// "github.com/autotune-dev/autotune/", m+"/"), a harness built in module m
// imports its copy of this package as m/measure/harness.
func Relocate(src []byte, prefix, path string) []byte {
	return bytes.ReplaceAll(src, []byte(`"`+prefix), []byte(`"`+path))
}
