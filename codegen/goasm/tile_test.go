package goasm

import (
	"strings"
	"testing"
)

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
		{Name: "T", Lanes: 8, MR: 1, NV: 1, Dot: true},
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

// TestDPBF16PS checks the bytes of VDPBF16PS against an assembler's
// (llvm-mc --show-encoding), for registers with and without their fourth
// and fifth bits set, where EVEX's inverted bits go wrong first.
func TestDPBF16PS(t *testing.T) {
	for _, tt := range []struct {
		dst, src1, src2 int
		want            string
	}{
		{3, 2, 1, "BYTE $0x62; BYTE $0xf2; BYTE $0x6e; BYTE $0x48; BYTE $0x52; BYTE $0xd9"},
		{29, 18, 17, "BYTE $0x62; BYTE $0x22; BYTE $0x6e; BYTE $0x40; BYTE $0x52; BYTE $0xe9"},
		{25, 2, 9, "BYTE $0x62; BYTE $0x42; BYTE $0x6e; BYTE $0x48; BYTE $0x52; BYTE $0xc9"},
	} {
		got, _, _ := strings.Cut(dpbf16ps(tt.dst, tt.src1, tt.src2), " //")
		if got != tt.want {
			t.Errorf("dpbf16ps(%d, %d, %d) = %s, want %s", tt.dst, tt.src1, tt.src2, got, tt.want)
		}
	}
}

// TestCVTNEPS2BF16 compares the bytes with those GNU as writes for the
// same instructions.
func TestCVTNEPS2BF16(t *testing.T) {
	for _, tt := range []struct {
		dst, src int
		want     string
	}{
		{17, 8, "BYTE $0x62; BYTE $0xc2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc8"},
		{0, 17, "BYTE $0x62; BYTE $0xb2; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xc1"},
		{26, 25, "BYTE $0x62; BYTE $0x02; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xd1"},
		{9, 3, "BYTE $0x62; BYTE $0x72; BYTE $0x7e; BYTE $0x48; BYTE $0x72; BYTE $0xcb"},
	} {
		got, _, _ := strings.Cut(cvtneps2bf16(tt.dst, tt.src), " //")
		if got != tt.want {
			t.Errorf("cvtneps2bf16(%d, %d) = %s, want %s", tt.dst, tt.src, got, tt.want)
		}
	}
}
