package cpu

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The harness of a fixed batch is checked in as testdata/harness.golden, so
// a change to the generated code shows in review. go test -update rewrites
// it. TestMeasureEveryFailure checks that a harness builds and is vet-clean.
func TestHarnessGolden(t *testing.T) {
	got, err := renderHarness(workload{inLens: []int{4096, 4096}, outLen: 4096, rel: 1e-5, abs: 1e-6}, []int{3, 0, 7})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.\n`).Match(got) {
		t.Errorf("the harness does not start with a generated-code header:\n%.100s", got)
	}
	golden := filepath.Join("testdata", "harness.golden")
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
		t.Errorf("the harness differs from %s; if that is intended, run go test -update", golden)
	}
}
