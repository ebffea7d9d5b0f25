package cpu

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The tables of a tuning batch and of a bench, all the code a build
// generates besides the kernels, are checked in as testdata/table.golden,
// so that a change shows in review; go test -update rewrites it.
// TestMeasureEveryFailure builds and vets a whole harness.
func TestTableGolden(t *testing.T) {
	tune, err := renderTable([]tableRow{{id: 0, pkg: pkgName(0), inputs: 2, threads: 1}, {id: 7, pkg: pkgName(7), inputs: 2, threads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	bench, err := renderTable([]tableRow{
		{id: 0, name: BenchTuned, verify: true, pkg: "tuned", inputs: 1},
		{id: 1, name: "naive", verify: true, pkg: "base0", inputs: 1},
		{id: 2, name: BenchPeak, fn: jen.Id("peakKernel").Call(jen.Lit(16), jen.Lit(2), jen.Lit(peakSteps))},
		{id: 3, name: BenchFloor, fn: jen.Id("floorKernel").Call(jen.Lit(4096), jen.Lit(2))},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range [][]byte{tune, bench} {
		if !regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.\n`).Match(src) {
			t.Errorf("a table does not start with a generated-code header:\n%.100s", src)
		}
	}
	got := append(append(tune, "\n// ---- a bench's table.go ----\n\n"...), bench...)
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the tables differ from %s; if that is intended, run go test -update", golden)
	}
}

// The harness's module holds the program, its table aside, and copies of
// the packages it imports, with the imports pointed at the copies.
func TestWriteHarness(t *testing.T) {
	dir := t.TempDir()
	if err := writeHarness(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"main.go", "tune.go", "bench.go", "measure/harness/check.go", "measure/harness/event.go", "measure/cpu/peak/peak.go", "measure/cpu/peak/peak_amd64.s"} {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Error(err)
			continue
		}
		if strings.Contains(string(src), `"github.com/autotune-dev/`) {
			t.Errorf("%s imports a package of autotune instead of its copy", name)
		}
	}
	for _, name := range []string{"harness_test.go", "measure/harness/harness_test.go", "measure/cpu/peak/peak_test.go", "table.go"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
			t.Errorf("the module holds %s", name)
		}
	}
	main, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	if !strings.Contains(string(main), `"`+harnessModule+`/measure/harness"`) {
		t.Errorf("main.go does not import %s/measure/harness", harnessModule)
	}
}
