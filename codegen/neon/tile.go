package neon

import (
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/codegen/goasm"
)

// Lanes is the number of float32 lanes of a NEON vector, the Lanes of
// every tile File takes.
const Lanes = 4

// vec is the bytes of a vector.
const vec = 4 * Lanes

// File returns the arm64 assembly source of the tiles, one .s file of
// package code; nil for no tiles. It panics on a tile whose Lanes is not
// 4 or that Tile.Decl would refuse.
func File(tiles ...goasm.Tile) []byte {
	if len(tiles) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(goasm.Header)
	for _, t := range tiles {
		if t.Lanes != Lanes {
			panic(fmt.Sprintf("neon: %s: %d lanes, NEON vectors have %d", t.Name, t.Lanes, Lanes))
		}
		_ = t.Decl() // checks the tile
		b.WriteString("\n")
		emit(&b, t)
	}
	return []byte(b.String())
}

// Registers of the tiles' functions.
const (
	rC      = "R0"  // c, moving down the tiles of a column
	rA      = "R1"  // a, advancing a step at a time
	rB      = "R2"  // b, advancing a step at a time
	rScale  = "R3"  // scale
	rBias   = "R4"  // bias
	rSteps  = "R5"  // steps left
	rARow   = "R6"  // bytes between rows of a
	rAStep  = "R7"  // bytes a advances per step
	rBStep  = "R8"  // bytes b advances per step
	rCRow   = "R9"  // bytes between rows of c
	rTiles  = "R10" // tiles of the column left
	rBStart = "R11" // b at the start of every tile of a column
	rARows  = "R12" // a's row of a step, walking down the rows
	rCRows  = "R13" // c's row, walking down the rows
	rTmp    = "R14" // a pointer into a row longer than one load
	rAStart = "R15" // a at the start of the tile
)

// tile is the state of emitting one Tile.
type tile struct {
	goasm.Tile
	b *strings.Builder
}

func (t tile) w(format string, args ...any) { fmt.Fprintf(t.b, "\t"+format+"\n", args...) }

func (t tile) label(name string) { t.b.WriteString(name + ":\n") }

// reg returns vector register n as a NEON vector of four float32s.
func reg(n int) string { return fmt.Sprintf("V%d.S4", n) }

// acc returns the register number of accumulator (r, j); a row's
// accumulators are consecutive, so that one VLD1 or VST1 moves up to
// four of them.
func (t tile) acc(r, j int) int { return t.NV + 2 + r*t.NV + j }

// emit writes the TEXT block of t. Vectors 0…NV-1 hold the step's b (and
// the scale or bias vectors outside the loop), NV and NV+1 the
// broadcasts, the accumulators after them.
func emit(b *strings.Builder, g goasm.Tile) {
	t := tile{g, b}
	params := params(g)
	fmt.Fprintf(b, "// func %s(%s)\n", t.Name, strings.Join(params, ", "))
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $0-%d\n", t.Name, 8*len(params))
	t.loadArgs(params)
	if t.Tiles {
		t.w("CBZ %s, end", rTiles)
		t.w("MOVD %s, %s", rB, rBStart)
		t.label("tile")
	}
	t.w("MOVD %s, %s", rA, rAStart)
	t.initAcc()
	if t.Depth == 0 {
		t.w("MOVD depth+%d(FP), %s", 8*(len(params)-1), rSteps)
		t.w("CBZ %s, done", rSteps)
	} else {
		t.w("MOVD $%d, %s", t.Depth, rSteps)
	}
	t.label("loop")
	t.rows(rB, func(int) []int { return seq(0, t.NV) }, 1, "", "VLD1")
	t.w("MOVD %s, %s", rA, rARows)
	for r := range t.MR {
		x := t.NV + r%2
		t.w("VLD1R.P (%s)(%s), [%s]", rARows, rARow, reg(x))
		for j := range t.NV {
			t.w("VFMLA %s, %s, %s", reg(j), reg(x), reg(t.acc(r, j)))
		}
	}
	t.w("ADD %s, %s", rAStep, rA)
	t.w("ADD %s, %s", rBStep, rB)
	t.w("SUBS $1, %s", rSteps)
	t.w("BNE loop")
	if t.Depth == 0 {
		t.label("done")
	}
	t.epilogue()
	t.rows(rC, t.accRow, t.MR, rCRow, "VST1")
	if t.Tiles {
		t.nextTile()
		t.label("end")
	}
	t.w("RET")
}

// params returns the names of the Go parameters of t, in order, all 8
// bytes: Tile.Decl's.
func params(t goasm.Tile) []string {
	p := []string{"c", "a", "b"}
	if t.Init == goasm.Scaled {
		p = append(p, "scale")
	}
	if t.Bias {
		p = append(p, "bias")
	}
	for _, s := range []struct {
		name  string
		bytes int
	}{{"arow", t.ARow}, {"astep", t.AStep}, {"bstep", t.BStep}, {"crow", t.CRow}} {
		if s.bytes == goasm.Runtime {
			p = append(p, s.name)
		}
	}
	if t.Tiles {
		p = append(p, "tiles")
	}
	if t.Depth == 0 {
		p = append(p, "depth")
	}
	return p
}

// loadArgs loads the pointers, the tile count and every stride, in bytes:
// a constant with MOVD, an argument (in float32s) shifted by 2. Depth is
// loaded for each tile.
func (t tile) loadArgs(params []string) {
	regs := map[string]string{"c": rC, "a": rA, "b": rB, "scale": rScale, "bias": rBias,
		"arow": rARow, "astep": rAStep, "bstep": rBStep, "crow": rCRow, "tiles": rTiles}
	for i, p := range params {
		if r, ok := regs[p]; ok {
			t.w("MOVD %s+%d(FP), %s", p, 8*i, r)
		}
	}
	for _, s := range []struct {
		reg   string
		bytes int
	}{{rARow, t.ARow}, {rAStep, t.AStep}, {rBStep, t.BStep}, {rCRow, t.CRow}} {
		if s.bytes == goasm.Runtime {
			t.w("LSL $2, %s, %s", s.reg, s.reg)
		} else {
			t.w("MOVD $%d, %s", s.bytes, s.reg)
		}
	}
}

// seq returns from, from+1, …, to-1.
func seq(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// accRow returns the accumulators of row r.
func (t tile) accRow(r int) []int { return seq(t.acc(r, 0), t.acc(r, 0)+t.NV) }

// rows writes op (VLD1 or VST1) of the registers regsOf(r) of each of n
// rows to or from the NV contiguous vectors of the row at base, the rows
// rowStride apart (a register; unused when n is 1). Four vectors at most
// move per instruction; a longer row goes through rTmp.
func (t tile) rows(base string, regsOf func(r int) []int, n int, rowStride, op string) {
	ptr := base
	if n > 1 {
		ptr = rCRows
		t.w("MOVD %s, %s", base, ptr)
	}
	for r := range n {
		regs := regsOf(r)
		p := ptr
		if len(regs) > 4 {
			t.w("MOVD %s, %s", ptr, rTmp)
			p = rTmp
		}
		for i := 0; i < len(regs); i += 4 {
			chunk := regs[i:min(i+4, len(regs))]
			list := make([]string, len(chunk))
			for k, v := range chunk {
				list[k] = reg(v)
			}
			mem := fmt.Sprintf("(%s)", p)
			suffix := ""
			if len(regs) > 4 && i+4 < len(regs) {
				mem, suffix = fmt.Sprintf("%d(%s)", vec*len(chunk), p), ".P" // post-increment by the bytes moved
			}
			if op == "VST1" {
				t.w("VST1%s [%s], %s", suffix, strings.Join(list, ", "), mem)
			} else {
				t.w("VLD1%s %s, [%s]", suffix, mem, strings.Join(list, ", "))
			}
		}
		if r < n-1 {
			t.w("ADD %s, %s", rowStride, ptr)
		}
	}
}

// initAcc starts the accumulators: at zero, from c, or from c times the
// vectors at scale.
func (t tile) initAcc() {
	switch t.Init {
	case goasm.Zero:
		for r := range t.MR {
			for _, a := range t.accRow(r) {
				t.w("VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
			}
		}
	case goasm.Load:
		t.rows(rC, t.accRow, t.MR, rCRow, "VLD1")
	case goasm.Scaled:
		t.rows(rScale, func(int) []int { return seq(0, t.NV) }, 1, "", "VLD1")
		t.rows(rC, t.accRow, t.MR, rCRow, "VLD1")
		for r := range t.MR {
			for j := range t.NV {
				t.vectorOp(FMUL, t.acc(r, j), t.acc(r, j), j)
			}
		}
	}
}

// epilogue adds the bias vectors to every row and, with ReLU, clamps at
// zero; the step's registers are free by then.
func (t tile) epilogue() {
	if !t.Bias {
		return
	}
	t.rows(rBias, func(int) []int { return seq(0, t.NV) }, 1, "", "VLD1")
	zero := t.NV
	if t.ReLU {
		t.w("VEOR V%d.B16, V%d.B16, V%d.B16", zero, zero, zero)
	}
	for r := range t.MR {
		for j := range t.NV {
			a := t.acc(r, j)
			t.vectorOp(FADD, a, a, j)
			if t.ReLU {
				t.vectorOp(FMAX, a, a, zero)
			}
		}
	}
}

// nextTile moves to the next tile of a column: b back to its start, a
// and c down MR rows from where the tile started.
func (t tile) nextTile() {
	t.w("MOVD %s, %s", rBStart, rB)
	t.w("MOVD $%d, R19", t.MR)
	t.w("MUL %s, R19, R20", rARow)
	t.w("ADD R20, %s, %s", rAStart, rA)
	t.w("MUL %s, R19, R20", rCRow)
	t.w("ADD R20, %s", rC)
	t.w("SUBS $1, %s", rTiles)
	t.w("BNE tile")
}

// vectorOp writes Vd.4S = o(Vn.4S, Vm.4S) as a WORD (Op.Word).
func (t tile) vectorOp(o Op, d, n, m int) { t.w("%s", o.Word(d, n, m)) }
