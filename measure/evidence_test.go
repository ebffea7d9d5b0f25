package measure

import "testing"

func TestContended(t *testing.T) {
	for _, tt := range []struct {
		d    *Disturbance
		want bool
	}{
		{nil, false}, // unknown is not contended
		{&Disturbance{}, false},
		{&Disturbance{Samples: 10, Disturbed: 5}, false},
		{&Disturbance{Samples: 10, Disturbed: 6}, true},
	} {
		if got := tt.d.Contended(); got != tt.want {
			t.Errorf("%+v: contended %v, want %v", tt.d, got, tt.want)
		}
	}
}
