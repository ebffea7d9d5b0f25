package dtype

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed *.go
var source embed.FS

// Files returns the source files of this package, tests left out, by
// name: the CPU harness, built in a module of its own, holds a copy,
// because it encodes and decodes the inputs and outputs of 16-bit kernels
// with the same conversions as the rest of autotune.
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
