package neon

import (
	"fmt"
	"strings"
)

// A Rows writes the assembly of a kernel that sweeps rows of float32s
// (softmax's, the norms'): a row is Groups groups of Unroll vectors, then
// Vecs single vectors, then a partial vector of Tail elements (1 to 3, or
// none), each count in a general register that the kernel sets once per
// call. NEON has no masked loads, so the partial vector moves a lane at a
// time (Lanes).
type Rows struct {
	Unroll             int
	Groups, Vecs, Tail string // registers of the counts
	Count              string // register a loop counts down in
	b                  strings.Builder
}

// Line writes one instruction.
func (r *Rows) Line(format string, args ...any) { fmt.Fprintf(&r.b, "\t"+format+"\n", args...) }

// Label writes a label.
func (r *Rows) Label(l string) { fmt.Fprintf(&r.b, "%s:\n", l) }

// Text writes s as it is (a header, a comment, a TEXT line).
func (r *Rows) Text(s string) { r.b.WriteString(s) }

// Bytes returns what was written.
func (r *Rows) Bytes() []byte { return []byte(r.b.String()) }

// Load writes the loads of n vectors from the address in ptr into the
// registers from base, advancing ptr past them: VLD1 takes four at most.
func (r *Rows) Load(ptr string, base, n int) {
	for i := 0; i < n; i += 4 {
		c := min(4, n-i)
		r.Line("VLD1.P %d(%s), %s", 16*c, ptr, list(base+i, c))
	}
}

// Store writes the stores of the n vectors from base to the address in
// ptr, advancing ptr past them.
func (r *Rows) Store(ptr string, base, n int) {
	for i := 0; i < n; i += 4 {
		c := min(4, n-i)
		r.Line("VST1.P %s, %d(%s)", list(base+i, c), 16*c, ptr)
	}
}

// list returns the register list of n vectors from base, at most four.
func list(base, n int) string {
	regs := make([]string, n)
	for u := range regs {
		regs[u] = reg(base + u)
	}
	return "[" + strings.Join(regs, ", ") + "]"
}

// Sweep writes the loops of one pass over a row named name: group(n) is
// the body of n whole vectors (Unroll, then 1), part that of the partial
// vector.
func (r *Rows) Sweep(name string, group func(n int), part func()) {
	loops := []struct {
		count, label string
		n            int
	}{{r.Groups, "group", r.Unroll}}
	if r.Unroll > 1 {
		loops = append(loops, struct {
			count, label string
			n            int
		}{r.Vecs, "vec", 1})
	}
	for _, l := range loops {
		loop := name + "_" + l.label
		r.Line("MOVD %s, %s", l.count, r.Count)
		r.Line("CBZ %s, %s_end", r.Count, loop)
		r.Label(loop)
		group(l.n)
		r.Line("SUBS $1, %s", r.Count)
		r.Line("BNE %s", loop)
		r.Label(loop + "_end")
	}
	r.Line("CBZ %s, %s_tail_end", r.Tail, name)
	part()
	r.Label(name + "_tail_end")
}

// Lanes writes op(i) for the lanes i of the partial vector, then the
// label name.
func (r *Rows) Lanes(name string, op func(i int) string) {
	for i := range Lanes - 1 {
		r.Line("%s", op(i))
		if i < Lanes-2 {
			r.Line("CMP $%d, %s", i+1, r.Tail)
			r.Line("BEQ %s", name)
		}
	}
	r.Label(name)
}

// Counts writes the instructions that set the counts from the elements
// of a row in the register cols, through the register tmp.
func (r *Rows) Counts(cols, tmp string) {
	r.Line("MOVD $%d, %s", Lanes*r.Unroll, tmp)
	r.Line("UDIV %s, %s, %s // groups of %d vectors", tmp, cols, r.Groups, r.Unroll)
	if r.Unroll > 1 {
		r.Line("LSR $2, %s, %s", cols, r.Vecs)
		r.Line("MOVD $%d, %s", r.Unroll, tmp)
		r.Line("MUL %s, %s, %s", r.Groups, tmp, tmp)
		r.Line("SUB %s, %s, %s // single vectors", tmp, r.Vecs, r.Vecs)
	}
	r.Line("AND $%d, %s, %s // elements of the partial vector", Lanes-1, cols, r.Tail)
}

// Reduce folds the Unroll accumulators from acc into acc with op, then
// acc's four lanes into each of them with pairwise, op's pairwise form.
func (r *Rows) Reduce(acc int, op, pairwise Op) {
	for step := 1; step < r.Unroll; step *= 2 {
		for u := 0; u+step < r.Unroll; u += 2 * step {
			r.Line("%s", op.Word(acc+u, acc+u, acc+u+step))
		}
	}
	r.Line("%s", pairwise.Word(acc, acc, acc))
	r.Line("%s", pairwise.Word(acc, acc, acc))
}
