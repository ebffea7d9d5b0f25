package gemm

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/schedule"
)

// With micro=asm the full mr×nr micro-kernel is Go assembly from
// codegen/goasm (see the package doc); the edge tiles of M%mr rows and
// N%nr columns stay archsimd Go. The assembly has no first/last flags: a
// tile starts at zero or from c, and applies the epilogue or not, so
// there is one function per combination the loop nest calls, chosen in Go
// per call.

// emitAsm returns the assembly of the kernel of cfg, or nil for micro=go.
func emitAsm(name string, shape []int, cfg schedule.Config, e epilogue) []byte {
	return goasm.File(newKernel(name, shape, cfg, e).asmTiles()...)
}

// emitAsmGeneric returns the assembly of the shape-generic kernel of cfg,
// or nil for micro=go: the same tiles, with the strides of a, b in place
// and c arguments (goasm.Runtime).
func emitAsmGeneric(name string, cfg schedule.Config, e epilogue) []byte {
	return goasm.File(newGenericKernel(name, cfg, e).asmTiles()...)
}

// asmTile returns the name of the full tile starting at zero (first) or
// from c, with the epilogue (last) or not.
func (k kernel) asmTile(first, last bool) string {
	s := k.tileFn(false, false)
	if first {
		s += "Zero"
	} else {
		s += "Acc"
	}
	if last {
		s += "Epilogue"
	}
	return s
}

// asmTiles returns the assembly tiles of k: the full tile from zero and
// from c, each also with the epilogue when k has one. Nil for micro=go.
func (k kernel) asmTiles() []goasm.Tile {
	if !k.asm {
		return nil
	}
	bStep := 4 * k.n // B read in place: a step is a row of b
	if k.pack {
		bStep = 4 * k.nr // a step is a row of the packed strip
	}
	var tiles []goasm.Tile
	lasts := []bool{false}
	if k.epi.bias {
		lasts = append(lasts, true)
	}
	for _, last := range lasts {
		for _, first := range []bool{true, false} {
			t := goasm.Tile{
				Name: k.asmTile(first, last), Lanes: k.lanes, MR: k.mr, NV: k.nv,
				ARow: 4 * k.k, AStep: 4, BStep: bStep, CRow: 4 * k.n, Init: goasm.Load,
				Bias: last,
			}
			if last && k.epi.act != nil {
				k.epi.act.asm(&t)
			}
			if first {
				t.Init = goasm.Zero
			}
			if k.generic {
				t.ARow, t.CRow = goasm.Runtime, goasm.Runtime
				if !k.pack {
					t.BStep = goasm.Runtime
				}
			}
			if k.packA {
				// A tile of the packed block: a step's mr elements are
				// contiguous.
				t.ARow, t.AStep = 4, 4*k.mr
			}
			if k.packed16() {
				// Packed A and B (steps of pairs with dot) into the
				// float32 block of c (packhalf.go).
				t.ARow, t.AStep, t.BStep, t.CRow, t.Dot = 4, 4*k.mr, 4*k.nr, 4*k.halfStride(), k.dot
				if k.dot {
					// A's tiles row by row (emitDotPackA).
					t.ARow, t.AStep = 4*k.maxSteps(), 4
				}
			}
			t.Tiles = k.asmColumn()
			tiles = append(tiles, t)
			if k.packed16() && (last || !k.epi.bias) {
				// The last slice's full tiles store into c, rounded.
				n := t
				n.Name, n.Out, n.ORow = k.narrowTile(first), k.half.DType, 2*k.n
				tiles = append(tiles, n)
			}
		}
	}
	return tiles
}

// narrowTile returns the name of a packed 16-bit kernel's full tile of
// the last slice of K, starting at zero (first) or from the float32
// block, which stores into c rounded to the 16-bit type (goasm.Tile.Out),
// with the epilogue when k has one.
func (k kernel) narrowTile(first bool) string { return k.asmTile(first, k.epi.bias) + "Narrow" }

// asmCall returns the code that calls the full assembly tile for the tiles
// of rows i… and columns jc+jr…: the bounds the assembly does not check,
// checked here, then the tile for the first slice of K (from zero) or a
// later one (from c), with the epilogue on the last. With A in place the
// tile is a column of tiles (goasm.Tile.Tiles), called once for every full
// tile of the block, rows i to end-1, which leaves i at the first row
// after them; with A packed it is called in the loop over the tiles, for
// the tile of rows i to i+mr-1.
func (k kernel) asmCall() jen.Code {
	id := jen.Id
	bStride := id("n") // B in place
	if k.pack {
		bStride = id("nr")
	}
	column := k.asmColumn()
	rows := id("mr") // the rows the call computes
	if column {
		rows = id("tiles").Op("*").Id("mr")
	}
	aAt := id("i").Op("*").Id("k").Op("+").Id("pc")
	aEnd := jen.Parens(id("i").Op("+").Add(rows).Op("-").Lit(1)).Op("*").Id("k").Op("+").Id("pc").Op("+").Id("depth").Op("-").Lit(1)
	aOf := id("a")
	if k.packA {
		// The tile's depth×mr in the packed block.
		aAt = jen.Parens(id("i").Op("-").Id("ic")).Op("*").Id("depth")
		aEnd = jen.Parens(id("i").Op("-").Id("ic").Op("+").Id("mr")).Op("*").Id("depth").Op("-").Lit(1)
		aOf = id("ap")
	}
	args := func() []jen.Code {
		return []jen.Code{
			jen.Op("&").Id("c").Index(id("i").Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr")),
			jen.Op("&").Add(aOf).Index(aAt),
			jen.Op("&").Id("s").Index(jen.Lit(0)),
		}
	}
	call := func(first, last bool) jen.Code {
		a := args()
		if last {
			a = append(a, jen.Op("&").Id("bias").Index(id("jc").Op("+").Id("jr")))
		}
		if k.generic {
			// The strides: a's rows (in place), b's steps in place, c's rows.
			if !k.packA {
				a = append(a, id("k"))
			}
			if !k.pack {
				a = append(a, id("n"))
			}
			a = append(a, id("n"))
		}
		if column {
			a = append(a, id("tiles"))
		}
		return id(k.asmTile(first, last)).Call(append(a, id("depth"))...)
	}
	checks := []jen.Code{
		jen.Id("_").Op("=").Id("c").Index(jen.Parens(id("i").Op("+").Add(rows).Op("-").Lit(1)).Op("*").Id("n").Op("+").Id("jc").Op("+").Id("jr").Op("+").Id("nr").Op("-").Lit(1)).
			Comment("the tile reads and writes unchecked"),
		jen.Id("_").Op("=").Add(aOf).Index(aEnd),
		jen.Id("_").Op("=").Id("s").Index(jen.Parens(id("depth").Op("-").Lit(1)).Op("*").Add(bStride).Op("+").Id("nr").Op("-").Lit(1)),
	}
	if k.epi.bias {
		checks = append(checks, jen.Id("_").Op("=").Id("bias").Index(id("jc").Op("+").Id("jr").Op("+").Id("nr").Op("-").Lit(1)))
	}
	pick := k.pickTile(call)
	if column {
		return jen.If(id("tiles").Op(":=").Parens(id("end").Op("-").Id("i")).Op("/").Id("mr"), id("tiles").Op(">").Lit(0)).Block(
			append(checks, pick, id("i").Op("+=").Id("tiles").Op("*").Id("mr"))...)
	}
	return jen.Block(append(checks, pick)...)
}

// asmColumn reports whether k's full assembly tile is a column of tiles
// (goasm.Tile.Tiles): with A in place, whose tiles are mr rows apart; a
// packed block of A has its tiles depth·mr floats apart.
func (k kernel) asmColumn() bool { return k.asm && !k.packA }

// pickTile calls the tile function the K slice at pc needs: the first
// slice sets the accumulators (the others add to what is there), and with
// a bias the last one applies the epilogue.
func (k kernel) pickTile(call func(first, last bool) jen.Code) jen.Code {
	id := jen.Id
	first := id("pc").Op("==").Lit(0)
	if !k.epi.bias {
		return jen.If(first).Block(call(true, false)).Else().Block(call(false, false))
	}
	last := id("pc").Op("+").Id("depth").Op("==").Id("k")
	return jen.Switch().Block(
		jen.Case(jen.Add(first).Op("&&").Add(last)).Block(call(true, true)),
		jen.Case(first.Clone()).Block(call(true, false)),
		jen.Case(last.Clone()).Block(call(false, true)),
		jen.Default().Block(call(false, false)),
	)
}
