package golang

import (
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// TestRowSplit renders the row dealing of a specialised and a generic
// kernel, with one thread and with three, and checks the calls each
// makes: the softmax and norm golden files hold the whole code.
func TestRowSplit(t *testing.T) {
	for _, tt := range []struct {
		threads, chunk, rows int
		want, not            []string
	}{
		{1, 1, 5, []string{"R(a, b, 0, rows)"}, []string{"sync", "C("}},
		{1, 1, 0, []string{"R(a, b, cols, 0, rows)"}, []string{"sync"}},
		{3, 1, 5, []string{"for t := 1; t < 3; t++", "C(a, b, t)", "C(a, b, 0)", "func C(a, b []float32, t int)", "const rows = 5",
			"for lo := t; lo < rows; lo += 3", "R(a, b, lo, min(lo+1, rows))", "rows t, t+3, t+6, …"}, []string{"workers"}},
		{3, 4, 0, []string{"workers := min(3, (rows+3)/4)", "t < workers", "C(a, b, rows, cols, t)", "func C(a, b []float32, rows, cols, t int)",
			"for lo := t * 4; lo < rows; lo += 12", "R(a, b, cols, lo, min(lo+4, rows))", "chunks t, t+3, t+6, … of 4 rows"}, nil},
	} {
		s := RowSplit{Threads: tt.threads, Chunk: tt.chunk, Rows: tt.rows, Slices: []jen.Code{jen.Id("a"), jen.Id("b")},
			RowsFn: "R", ChunksFn: "C", Goroutine: Float32(1).Goroutine}
		f := NewFile("k")
		f.Func().Id("K").Params().Block(s.Run()...)
		if tt.threads > 1 {
			f.Add(s.ChunksFunc())
		}
		src, err := Render(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(src), w) {
				t.Errorf("threads %d, chunk %d, rows %d: no %q in\n%s", tt.threads, tt.chunk, tt.rows, w, src)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(string(src), w) {
				t.Errorf("threads %d, chunk %d, rows %d: %q in\n%s", tt.threads, tt.chunk, tt.rows, w, src)
			}
		}
	}
}
