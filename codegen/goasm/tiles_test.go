package goasm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/goasm/tiletest"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestTiles builds tiletest's tiles at 8 lanes and (on AVX-512 hosts) 16
// into its program and runs it.
func TestTiles(t *testing.T) {
	isa := device.Host().CPU.ISA
	if !isa.AVX2 || !isa.FMA {
		t.Skip("the host has no AVX2 and FMA")
	}
	lanes := []int{8}
	if isa.AVX512 {
		lanes = append(lanes, 16)
	}
	for _, l := range lanes {
		cases := tiletest.Cases(l)
		files, err := tiletest.Program(cases)
		if err != nil {
			t.Fatal(err)
		}
		var tiles []goasm.Tile
		for _, c := range cases {
			tiles = append(tiles, c.Tile)
		}
		files["tiles_amd64.s"] = goasm.File(tiles...)
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(dir, "tiles")
		kerneltest.Go(t, dir, "build", "-o", bin, ".")
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(string(out), tiletest.OK(cases)) {
			t.Fatalf("%s", out)
		}
	}
}
