package neon_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/goasm/tiletest"
	"github.com/autotune-dev/autotune/codegen/neon"
	"github.com/autotune-dev/autotune/emul"
)

// TestTiles builds tiletest's tiles of 4 lanes into its program for
// arm64 and runs it: natively on arm64, elsewhere under user-mode
// emulation, skipped where there is none.
func TestTiles(t *testing.T) {
	wrapper, ok := emul.For("arm64")
	if !ok {
		t.Skip("not arm64, and no emulator: install qemu-user-static or set " + emul.Env)
	}
	cases := tiletest.Cases(neon.Lanes)
	files, err := tiletest.Program(cases)
	if err != nil {
		t.Fatal(err)
	}
	var tiles []goasm.Tile
	for _, c := range cases {
		tiles = append(tiles, c.Tile)
	}
	files["tiles_arm64.s"] = neon.File(tiles...)
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "tiles")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := append(wrapper, bin)
	out, err := exec.Command(run[0], run[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), tiletest.OK(cases)) {
		t.Fatalf("%s", out)
	}
}

func TestFilePanics(t *testing.T) {
	for _, tile := range []goasm.Tile{
		{Name: "T", Lanes: 8, MR: 1, NV: 1},
		{Name: "T", Lanes: 4, MR: 10, NV: 3}, // 30+3+2 registers
		{Lanes: 4, MR: 1, NV: 1},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("File(%+v) did not panic", tile)
				}
			}()
			neon.File(tile)
		}()
	}
}
