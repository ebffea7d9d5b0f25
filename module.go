// Package autotune holds the module's own go.mod and go.sum, embedded when
// autotune is built. autotune bench builds a throw-away module of its own;
// a baseline that imports a library (gonum's BLAS) gets it there at the
// version autotune was built and tested with, and its checksums with it
// (Require), so that the build needs no network once the module is in the
// module cache, as after go mod download.
//
// The commands are in cmd/autotune; the package documentation of each
// subdirectory describes its part.
package autotune

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
)

// GoMod is the text of the module's go.mod.
//
//go:embed go.mod
var GoMod string

// GoSum is the text of the module's go.sum.
//
//go:embed go.sum
var GoSum string

// Require returns what another module needs to import packages of the
// modules paths at the versions GoMod requires: a require block for its
// go.mod and the lines of GoSum for those versions (the module's checksum
// and its go.mod's). Go's module graph pruning loads no more than the
// required modules' go.mod files, so their own dependencies need no lines
// as long as none of their packages is imported. A path GoMod does not
// require, or whose checksums GoSum lacks, is an error.
func Require(paths ...string) (require, sum string, err error) {
	return requireFrom(GoMod, GoSum, paths)
}

func requireFrom(goMod, goSum string, paths []string) (require, sum string, err error) {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	versions := requirements(goMod)
	var req, sums strings.Builder
	req.WriteString("require (\n")
	for _, path := range paths {
		v, ok := versions[path]
		if !ok {
			return "", "", fmt.Errorf("autotune: module %s is not a requirement of autotune's go.mod (go get %s)", path, path)
		}
		fmt.Fprintf(&req, "\t%s %s\n", path, v)
		n := 0
		for _, line := range strings.Split(goSum, "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == path && (f[1] == v || f[1] == v+"/go.mod") {
				sums.WriteString(line + "\n")
				n++
			}
		}
		if n != 2 {
			return "", "", fmt.Errorf("autotune: go.sum lacks the checksums of %s %s (go mod tidy)", path, v)
		}
	}
	req.WriteString(")\n")
	return req.String(), sums.String(), nil
}

// requirements returns the version of every module a go.mod requires, in
// a require block or on a require line of its own.
func requirements(goMod string) map[string]string {
	versions := make(map[string]string)
	block := false
	for _, line := range strings.Split(goMod, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case block && f[0] == ")":
			block = false
		case block && len(f) == 2:
			versions[f[0]] = f[1]
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			block = true
		case f[0] == "require" && len(f) == 3:
			versions[f[1]] = f[2]
		}
	}
	return versions
}
