package goasm

import "testing"

func TestFits(t *testing.T) {
	for _, tt := range []struct {
		lanes, mr, nv int
		want          bool
	}{
		{16, 12, 2, true}, {16, 14, 2, true}, {16, 15, 2, false}, {16, 6, 4, true}, {16, 7, 4, false},
		{8, 6, 2, true}, {8, 7, 2, false}, {8, 13, 1, true}, {8, 14, 1, false},
	} {
		if got := Fits(tt.lanes, tt.mr, tt.nv); got != tt.want {
			t.Errorf("Fits(%d, %d, %d) = %v, want %v", tt.lanes, tt.mr, tt.nv, got, tt.want)
		}
	}
}

func TestCheckPanics(t *testing.T) {
	for _, tile := range []Tile{
		{Lanes: 16, MR: 1, NV: 1},
		{Name: "T", Lanes: 4, MR: 1, NV: 1},
		{Name: "T", Lanes: 16, MR: 0, NV: 1},
		{Name: "T", Lanes: 8, MR: 8, NV: 2},
		{Name: "T", Lanes: 8, MR: 1, NV: 1, ReLU: true},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("File(%+v) did not panic", tile)
				}
			}()
			File(tile)
		}()
	}
}
