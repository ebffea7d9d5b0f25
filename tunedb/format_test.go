package tunedb

import "testing"

func TestFormatNS(t *testing.T) {
	for _, tt := range []struct {
		ns   float64
		want string
	}{
		{0, "-"}, {-3, "-"}, {812, "812 ns"}, {411502, "412 µs"}, {14.4e3, "14.4 µs"}, {2.5e6, "2.5 ms"}, {3e9, "3 s"},
	} {
		if got := FormatNS(tt.ns); got != tt.want {
			t.Errorf("FormatNS(%v) = %q, want %q", tt.ns, got, tt.want)
		}
	}
}
