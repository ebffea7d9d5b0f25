package goasm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
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

// TestTiles builds tiles of every Init, with fixed and run-time depths,
// strided and contiguous operands, at 8 lanes and (on AVX-512 hosts) 16,
// into a program that runs each on random inputs, with the rows of c
// between the tile's vectors poisoned, and compares with a float64
// reference computed in the same program.
func TestTiles(t *testing.T) {
	isa := device.Host().CPU.ISA
	if !isa.AVX2 || !isa.FMA {
		t.Skip("the host has no AVX2 and FMA")
	}
	var tiles, real []Tile // real has the strides that tiles may leave to run time
	// runtime lists the strides of the next tiles added that come at run
	// time, as strides() names them.
	var runtime []string
	// column makes the next tiles added columns of tiles (Tile.Tiles).
	column := false
	add := func(lanes, mr, nv, depth, aRow, aStep int, init Init, epi ...bool) {
		// b's steps and c's rows are padded by one vector so that a tile
		// writing past its nv vectors would be caught.
		tile := Tile{
			Name: fmt.Sprintf("T%d", len(tiles)), Lanes: lanes, MR: mr, NV: nv, Depth: depth,
			ARow: 4 * aRow, AStep: 4 * aStep, BStep: 4 * (nv + 1) * lanes, CRow: 4 * (nv + 1) * lanes, Init: init,
			Bias: len(epi) > 0 && epi[0], ReLU: len(epi) > 1 && epi[1], Tiles: column,
		}
		real = append(real, tile)
		for _, s := range runtime {
			switch s {
			case "arow":
				tile.ARow = Runtime
			case "astep":
				tile.AStep = Runtime
			case "bstep":
				tile.BStep = Runtime
			case "crow":
				tile.CRow = Runtime
			}
		}
		tiles = append(tiles, tile)
	}
	lanes := []int{8}
	if isa.AVX512 {
		lanes = append(lanes, 16)
	}
	for _, l := range lanes {
		for _, init := range []Init{Zero, Load, Scaled} {
			add(l, 1, 1, 0, 1, 1, init)
			add(l, 3, 2, 7, 9, 1, init)  // rows 9 apart, contiguous steps: attention's scores
			add(l, 5, 1, 0, 1, 11, init) // contiguous rows, steps 11 apart: attention's output
		}
		add(l, 2, 3, 0, 5, 1, Zero)
		add(l, 4, 2, 0, 9, 1, Zero, true)       // gemm's epilogues
		add(l, 4, 2, 0, 9, 1, Load, true, true) // (relu clamps about half)
		if l == 16 {
			add(l, 12, 2, 0, 1, 40, Scaled)
			add(l, 6, 4, 64, 64, 1, Zero)
		}
		// Strides at run time, as shape-generic kernels call tiles: gemm's
		// rows of a and c (and b's steps in place) at every row count, with
		// and without the epilogue; attention's scores and output.
		runtime = []string{"arow", "bstep", "crow"}
		for mr := 1; mr <= 12; mr++ {
			if Fits(l, mr, 1) {
				add(l, mr, 1, 0, 2*mr+3, 1, Zero)
				add(l, mr, 1, 0, 7, 1, Load, mr%2 == 0, mr%4 == 0)
			}
		}
		runtime = []string{"arow", "crow"}
		add(l, 4, 2, 0, 9, 1, Load, true)
		runtime = []string{"arow"}
		add(l, 3, 2, 0, 9, 1, Zero) // attention's scores
		runtime = []string{"astep"}
		add(l, 5, 1, 0, 1, 11, Scaled) // attention's output
		// Columns of tiles, as gemm's loop over the tiles of a strip
		// calls them: strides fixed and at run time, every Init, the
		// epilogues.
		column = true
		runtime = nil
		add(l, 4, 2, 0, 9, 1, Zero)
		add(l, 3, 1, 5, 7, 1, Load, true)
		add(l, 2, 2, 0, 1, 6, Scaled)
		runtime = []string{"arow", "bstep", "crow"}
		add(l, 5, 1, 0, 11, 1, Zero)
		add(l, 4, 2, 0, 9, 1, Load, true, true)
		add(l, 2, 1, 0, 3, 1, Scaled)
		column = false
		runtime = nil
	}
	dir := t.TempDir()
	f := golang.NewFile("main")
	for _, tile := range tiles {
		f.Add(tile.Decl())
	}
	var rows []jen.Code
	for i, tile := range tiles {
		depth := tile.Depth
		if depth == 0 {
			depth = 13
		}
		column := 1
		if tile.Tiles {
			column = columnTiles
		}
		rows = append(rows, jen.Values(jen.Lit(tile.Name), jen.Lit(tile.Lanes), jen.Lit(tile.MR*column), jen.Lit(tile.NV),
			jen.Lit(depth), jen.Lit(tile.Depth == 0), jen.Lit(real[i].ARow/4), jen.Lit(real[i].AStep/4), jen.Lit(int(tile.Init)),
			jen.Lit(tile.Bias), jen.Lit(tile.ReLU),
			jen.Func().Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b"), jen.Id("s"), jen.Id("bias")).Op("*").Float32(), jen.Id("n").Int()).Block(
				call(tile, real[i])),
		))
	}
	f.Var().Id("tiles").Op("=").Index().Id("tile").Values(rows...)
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"go.mod":    []byte("module tiles\n\ngo 1.26\n"),
		"tiles.go":  src,
		"tiles.s":   File(tiles...),
		"driver.go": []byte(driver),
	}
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
	if !strings.Contains(string(out), fmt.Sprintf("%d tiles ok", len(tiles))) {
		t.Fatalf("%s", out)
	}
}

// call returns the call of tile's function from the driver's closure,
// with real's strides for those tile leaves to run time.
func call(tile, real Tile) jen.Code {
	args := []jen.Code{jen.Id("c"), jen.Id("a"), jen.Id("b")}
	if tile.Init == Scaled {
		args = append(args, jen.Id("s"))
	}
	if tile.Bias {
		args = append(args, jen.Id("bias"))
	}
	for i, s := range tile.strides() {
		if s.bytes == Runtime {
			args = append(args, jen.Lit(real.strides()[i].bytes/4))
		}
	}
	if tile.Tiles {
		args = append(args, jen.Lit(columnTiles))
	}
	if tile.Depth == 0 {
		args = append(args, jen.Id("n"))
	}
	return jen.Id(tile.Name).Call(args...)
}

// columnTiles is the number of tiles the test's columns of tiles
// (Tile.Tiles) compute: to the driver, one tile of columnTiles·MR rows.
const columnTiles = 3

// driver runs every tile of the generated table and checks it.
const driver = `package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

type tile struct {
	name                     string
	lanes, mr, nv, depth     int
	runtimeDepth             bool
	aRow, aStep, init        int
	bias, relu               bool
	run                      func(c, a, b, s, bias *float32, depth int)
}

func main() {
	r := rand.New(rand.NewPCG(1, 2))
	val := func() float32 { return float32(r.Float64()*3.5+0.5) * float32(1-2*r.IntN(2)) }
	for _, t := range tiles {
		for _, depth := range []int{t.depth, 0} {
			if depth == 0 && !t.runtimeDepth {
				continue
			}
			stride := (t.nv + 1) * t.lanes // one poisoned vector after each row and step
			a := make([]float32, (t.mr-1)*t.aRow+max(depth-1, 0)*t.aStep+1)
			b := make([]float32, max(depth, 1)*stride)
			c := make([]float32, t.mr*stride)
			s := make([]float32, t.nv*t.lanes)
			bias := make([]float32, t.nv*t.lanes)
			for _, x := range [][]float32{a, b, c, s, bias} {
				for i := range x {
					x[i] = val()
				}
			}
			want := make([]float64, len(c))
			for i := range c {
				if i%stride >= t.nv*t.lanes {
					c[i] = float32(math.NaN())
					continue
				}
				switch t.init {
				case 1:
					want[i] = float64(c[i])
				case 2:
					want[i] = float64(c[i]) * float64(s[i%stride])
				}
			}
			for row := range t.mr {
				for x := range t.nv * t.lanes {
					for step := range depth {
						want[row*stride+x] += float64(a[row*t.aRow+step*t.aStep]) * float64(b[step*stride+x])
					}
				}
			}
			for row := range t.mr {
				for x := range t.nv * t.lanes {
					if t.bias {
						want[row*stride+x] += float64(bias[x])
					}
					if t.relu {
						want[row*stride+x] = max(want[row*stride+x], 0)
					}
				}
			}
			t.run(&c[0], &a[0], &b[0], &s[0], &bias[0], depth)
			for i := range c {
				if i%stride >= t.nv*t.lanes {
					if !math.IsNaN(float64(c[i])) {
						fmt.Printf("%s depth %d: wrote c[%d], past its row\n", t.name, depth, i)
						os.Exit(1)
					}
					continue
				}
				if e := math.Abs(float64(c[i]) - want[i]); e > 1e-5*(1+math.Abs(want[i]))*float64(depth+1) {
					fmt.Printf("%s depth %d: c[%d] = %g, want %g\n", t.name, depth, i, c[i], want[i])
					os.Exit(1)
				}
			}
		}
	}
	fmt.Printf("%d tiles ok\n", len(tiles))
}
`
