package main

import (
	"strings"
	"testing"
)

// TestRun runs small shapes once and checks that each line names the
// kernel Variant reports, and that a wrong result fails the run.
func TestRun(t *testing.T) {
	var out strings.Builder
	small := []call{softmax(512, 1024), softmax(3, 70), gemm(5, 7, 9), gemmBias(4, 6, 8, true), attention(1, 2, 9, 8, true)}
	if err := run(&out, small, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"softmax512x1024", "(exact)", "(nearest 64x4096)", "gemmG", "gemmBiasReLUG1", "attentionCausalG1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	broken := gemm(5, 7, 9)
	fast := broken.fast
	broken.fast = func(a [][]float32) { fast(a); a[0][3] += 1 }
	if err := run(&out, []call{broken}, 1); err == nil || !strings.Contains(err.Error(), "differs from plain Go") {
		t.Errorf("a wrong result: error %v, want one saying it differs", err)
	}
}
