package cpu

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestParseBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want map[int][]string // candidate → substrings of its message
	}{
		{
			name: "compiler errors under package headers",
			out: "# autotuneharness/k001\nk001/k001.go:2:44: undefined: undefinedX\n" +
				"# autotuneharness/k003\nk003/k003.go:3:1: syntax error: unexpected EOF, expected expression\n" +
				"k003/k003.go:4:1: too many errors\n",
			want: map[int][]string{1: {"k001.go:2:44: undefined: undefinedX"}, 3: {"syntax error", "too many errors"}},
		},
		{
			name: "loader errors without headers, with continuation lines",
			out: "k001/k001.go:2:8: no required module provides package gonum.org/v1/gonum/floats; to add it:\n" +
				"\tgo get gonum.org/v1/gonum/floats\n" +
				"k012/k012.go:2:8: package foo/bar is not in std (/usr/local/go/src/foo/bar)\n",
			want: map[int][]string{1: {"no required module", "\tgo get gonum"}, 12: {"foo/bar is not in std"}},
		},
		{
			name: "a ./ prefix and four-digit candidates",
			out:  "# autotuneharness/k1234\n./k1234/k1234.go:7:2: declared and not used: x\n",
			want: map[int][]string{1234: {"declared and not used"}},
		},
		{
			name: "the harness's own errors blame no candidate",
			out:  "# autotuneharness\n./main.go:5:2: \"os\" imported and not used\n",
			want: map[int][]string{},
		},
		{
			name: "toolchain errors blame no candidate",
			out:  "go: go.mod requires go >= 1.26 (running go 1.25.1; GOTOOLCHAIN=local)\n",
			want: map[int][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseBuildErrors([]byte(tt.out))
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tt.want))) {
				t.Fatalf("blamed %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tt.want)))
			}
			for id, subs := range tt.want {
				for _, s := range subs {
					if !strings.Contains(got[id], s) {
						t.Errorf("candidate %d: %q does not contain %q", id, got[id], s)
					}
				}
				if strings.Contains(got[id], "# autotuneharness") {
					t.Errorf("candidate %d: message has the package header: %q", id, got[id])
				}
			}
		})
	}
}

func TestClip(t *testing.T) {
	short := "k001/k001.go:1:1: bad"
	if got := clip(short + "\n"); got != short {
		t.Errorf("clip(short) = %q", got)
	}
	long := strings.Repeat("k001/k001.go:1:1: a long message\n", 1000)
	got := clip(long)
	if len(got) > maxErrorBytes+10 || !strings.HasSuffix(got, "\n[...]") || !strings.HasPrefix(got, "k001/") {
		t.Errorf("clip(long) has %d bytes, ends %q", len(got), got[len(got)-20:])
	}
}
