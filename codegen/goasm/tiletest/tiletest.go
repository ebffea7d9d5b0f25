// Package tiletest checks register tiles (goasm.Tile) of either
// architecture the same way: Cases is a table of tiles of every Init,
// fixed and run-time depths and strides, strided and contiguous operands,
// epilogues and columns of tiles; Program is a Go program that runs each
// on random inputs, with the rows of c between the tile's vectors
// poisoned, and compares with a float64 reference computed in the same
// program. The tests of codegen/goasm (amd64) and codegen/neon (arm64,
// under emulation where the host is not arm64) build it with their
// assembly.
package tiletest

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
)

// A Case is a tile to check, and Real the same tile with every stride a
// constant: the values the program passes for the strides Tile leaves to
// run time.
type Case struct{ Tile, Real goasm.Tile }

// Cases returns the tiles to check at lanes float32s a vector (4, 8 or
// 16), the larger ones only where there are 32 registers.
func Cases(lanes int) []Case {
	var cases []Case
	// runtime lists the strides of the next tiles added that come at run
	// time.
	var runtime []string
	// column makes the next tiles added columns of tiles (Tile.Tiles).
	column := false
	add := func(mr, nv, depth, aRow, aStep int, init goasm.Init, epi ...bool) {
		// b's steps and c's rows are padded by one vector so that a tile
		// writing past its nv vectors would be caught.
		tile := goasm.Tile{
			Name: fmt.Sprintf("T%d", len(cases)), Lanes: lanes, MR: mr, NV: nv, Depth: depth,
			ARow: 4 * aRow, AStep: 4 * aStep, BStep: 4 * (nv + 1) * lanes, CRow: 4 * (nv + 1) * lanes, Init: init,
			Bias: len(epi) > 0 && epi[0], ReLU: len(epi) > 1 && epi[1], Tiles: column,
		}
		real := tile
		for _, s := range runtime {
			switch s {
			case "arow":
				tile.ARow = goasm.Runtime
			case "astep":
				tile.AStep = goasm.Runtime
			case "bstep":
				tile.BStep = goasm.Runtime
			case "crow":
				tile.CRow = goasm.Runtime
			}
		}
		cases = append(cases, Case{tile, real})
	}
	for _, init := range []goasm.Init{goasm.Zero, goasm.Load, goasm.Scaled} {
		add(1, 1, 0, 1, 1, init)
		add(3, 2, 7, 9, 1, init)  // rows 9 apart, contiguous steps: attention's scores
		add(5, 1, 0, 1, 11, init) // contiguous rows, steps 11 apart: attention's output
	}
	add(2, 3, 0, 5, 1, goasm.Zero)
	add(4, 2, 0, 9, 1, goasm.Zero, true)       // gemm's epilogues
	add(4, 2, 0, 9, 1, goasm.Load, true, true) // (relu clamps about half)
	if goasm.Available(lanes) == 32 {
		add(12, 2, 0, 1, 40, goasm.Scaled)
		add(6, 4, 64, 64, 1, goasm.Zero)
		add(2, 9, 0, 3, 1, goasm.Load, true, true) // rows of more than 4 vectors
	}
	// Strides at run time, as shape-generic kernels call tiles: gemm's
	// rows of a and c (and b's steps in place) at every row count, with
	// and without the epilogue; attention's scores and output.
	runtime = []string{"arow", "bstep", "crow"}
	for mr := 1; mr <= 12; mr++ {
		if goasm.Fits(lanes, mr, 1) {
			add(mr, 1, 0, 2*mr+3, 1, goasm.Zero)
			add(mr, 1, 0, 7, 1, goasm.Load, mr%2 == 0, mr%4 == 0)
		}
	}
	runtime = []string{"arow", "crow"}
	add(4, 2, 0, 9, 1, goasm.Load, true)
	runtime = []string{"arow"}
	add(3, 2, 0, 9, 1, goasm.Zero) // attention's scores
	runtime = []string{"astep"}
	add(5, 1, 0, 1, 11, goasm.Scaled) // attention's output
	// Columns of tiles, as gemm's loop over the tiles of a strip calls
	// them: strides fixed and at run time, every Init, the epilogues.
	column = true
	runtime = nil
	add(4, 2, 0, 9, 1, goasm.Zero)
	add(3, 1, 5, 7, 1, goasm.Load, true)
	add(2, 2, 0, 1, 6, goasm.Scaled)
	runtime = []string{"arow", "bstep", "crow"}
	add(5, 1, 0, 11, 1, goasm.Zero)
	add(4, 2, 0, 9, 1, goasm.Load, true, true)
	add(2, 1, 0, 3, 1, goasm.Scaled)
	return cases
}

// Program returns the files of a module (go.mod, tiles.go, driver.go)
// whose program runs every case and prints OK(cases) when all are right;
// the caller adds the assembly of the tiles, named for its architecture.
func Program(cases []Case) (map[string][]byte, error) {
	f := golang.NewFile("main")
	for _, c := range cases {
		f.Add(c.Tile.Decl())
	}
	var rows []jen.Code
	for _, c := range cases {
		tile, real := c.Tile, c.Real
		depth := tile.Depth
		if depth == 0 {
			depth = 13
		}
		column := 1
		if tile.Tiles {
			column = columnTiles
		}
		rows = append(rows, jen.Values(jen.Lit(tile.Name), jen.Lit(tile.Lanes), jen.Lit(tile.MR*column), jen.Lit(tile.NV),
			jen.Lit(depth), jen.Lit(tile.Depth == 0), jen.Lit(real.ARow/4), jen.Lit(real.AStep/4), jen.Lit(int(tile.Init)),
			jen.Lit(tile.Bias), jen.Lit(tile.ReLU),
			jen.Func().Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b"), jen.Id("s"), jen.Id("bias")).Op("*").Float32(), jen.Id("n").Int()).Block(
				call(tile, real)),
		))
	}
	f.Var().Id("tiles").Op("=").Index().Id("tile").Values(rows...)
	src, err := golang.Render(f)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"go.mod":    []byte("module tiles\n\ngo 1.26\n"),
		"tiles.go":  src,
		"driver.go": []byte(driver),
	}, nil
}

// OK is what the program prints when every case is right.
func OK(cases []Case) string { return fmt.Sprintf("%d tiles ok", len(cases)) }

// call returns the call of tile's function from the driver's closure,
// with real's strides for those tile leaves to run time.
func call(tile, real goasm.Tile) jen.Code {
	args := []jen.Code{jen.Id("c"), jen.Id("a"), jen.Id("b")}
	if tile.Init == goasm.Scaled {
		args = append(args, jen.Id("s"))
	}
	if tile.Bias {
		args = append(args, jen.Id("bias"))
	}
	for _, s := range [][2]int{{tile.ARow, real.ARow}, {tile.AStep, real.AStep}, {tile.BStep, real.BStep}, {tile.CRow, real.CRow}} {
		if s[0] == goasm.Runtime {
			args = append(args, jen.Lit(s[1]/4))
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
