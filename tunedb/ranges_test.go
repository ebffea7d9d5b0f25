package tunedb

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// rangeStore is what DB and Memory have in common for ranges.
type rangeStore interface {
	SaveRange(r Range) error
	Ranges() ([]Range, error)
}

func TestRanges(t *testing.T) {
	lo := softmax
	lo.Shape = []int{1, 64}
	r := Range{
		Workload: lo, Hi: []int{64, 64},
		Buckets: [][]int{{1, 64}, {8, 64}, {64, 64}},
		HeldOut: []HeldOut{{Shape: []int{3, 64}, Nearest: []int{1, 64}, Regret: 0.05}, {Shape: []int{23, 64}, Nearest: []int{8, 64}, Regret: math.Inf(1)}},
		Trials:  40, Time: t0, Tool: "test",
	}
	other := r
	other.Hi = []int{128, 64}
	other.Buckets = [][]int{{128, 64}}
	other.HeldOut = nil
	for _, st := range []struct {
		name string
		s    rangeStore
	}{{"db", openTemp(t)}, {"memory", NewMemory()}} {
		t.Run(st.name, func(t *testing.T) {
			if got, err := st.s.Ranges(); err != nil || got != nil {
				t.Fatalf("an empty store's Ranges() = %v, %v", got, err)
			}
			replaced := r
			replaced.Trials = 1
			for _, x := range []Range{replaced, other, r} {
				if err := st.s.SaveRange(x); err != nil {
					t.Fatal(err)
				}
			}
			got, err := st.s.Ranges()
			if err != nil {
				t.Fatal(err)
			}
			if want := []Range{other, r}; !reflect.DeepEqual(got, want) { // key order: "128x64" sorts first
				t.Errorf("Ranges() = %+v, want %+v (the same corners replace)", got, want)
			}
			bad := r
			bad.Buckets = append(bad.Buckets, []int{65, 64})
			if err := st.s.SaveRange(bad); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("SaveRange of a bucket outside the range: %v", err)
			}
			bad = r
			bad.Hi = []int{64}
			if err := st.s.SaveRange(bad); err == nil {
				t.Error("SaveRange of a high corner of another rank succeeded")
			}
		})
	}
	if r.String() != "1..64x64" {
		t.Errorf("String() = %q", r.String())
	}
}

// A database written before ranges existed has none, and keeps them
// across a reopen once saved.
func TestRangesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit([]Record{rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 1)}); err != nil {
		t.Fatal(err)
	}
	r := Range{Workload: softmax, Hi: []int{8192, 1024}, Buckets: [][]int{{4096, 1024}}, Time: t0}
	if err := db.SaveRange(r); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Ranges()
	if err != nil || len(got) != 1 || got[0].String() != "4096..8192x1024" {
		t.Errorf("after reopen Ranges() = %v, %v", got, err)
	}
}
