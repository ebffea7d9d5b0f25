package kerneltest

import "testing"

// unbumped finds a changed digest under an unchanged revision, also where
// several sets share a revision, and lets new lines and bumped revisions
// through.
func TestUnbumped(t *testing.T) {
	const recorded = "norm-5 aaaa\nnorm-2 bbbb\nnorm-5 cccc\n"
	tests := []struct {
		name, sum, want string
	}{
		{"unchanged", recorded, ""},
		{"first of a shared revision changed", "norm-5 dddd\nnorm-2 bbbb\nnorm-5 cccc\n", "norm-5"},
		{"second of a shared revision changed", "norm-5 aaaa\nnorm-2 bbbb\nnorm-5 dddd\n", "norm-5"},
		{"other revision changed", "norm-5 aaaa\nnorm-2 dddd\nnorm-5 cccc\n", "norm-2"},
		{"bumped", "norm-6 dddd\nnorm-2 bbbb\nnorm-6 eeee\n", ""},
		{"a set added", recorded + "norm-5 eeee\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unbumped(recorded, tt.sum); got != tt.want {
				t.Errorf("unbumped(%q, %q) = %q, want %q", recorded, tt.sum, got, tt.want)
			}
		})
	}
	if got := unbumped("", recorded); got != "" {
		t.Errorf("a sum file written for the first time: unbumped = %q, want \"\"", got)
	}
}
