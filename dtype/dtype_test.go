package dtype

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want DType
		err  string
	}{
		{"f32", F32, ""},
		{"", Default, ""},
		{"F32", "", `unknown dtype "F32" (known: f32, bf16, f16)`},
		{"float32", "", "unknown dtype"},
		{"bf16 ", "", "unknown dtype"},
		{"bf16", BF16, ""},
		{"f16", F16, ""},
		{"fp16", "", "unknown dtype"},
	} {
		got, err := Parse(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) = %v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestKnown(t *testing.T) {
	for _, d := range Known() {
		if d.Size() == 0 {
			t.Errorf("%s has no size", d)
		}
		if got, err := Parse(d.String()); err != nil || got != d {
			t.Errorf("Parse(%s) = %v, %v", d, got, err)
		}
		if x := float32(1.0 / 3); d.Round(d.Round(x)) != d.Round(x) {
			t.Errorf("%s: Round is not idempotent", d)
		}
	}
	if DType("x").Size() != 0 {
		t.Error("an unknown dtype has a size")
	}
}
