package tunedb

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

// testRange is a range of softmax from 1x1024 to 4096x1024, saved at t0
// plus sec seconds.
func testRange(sec int) Range {
	lo := softmax
	lo.Shape = []int{1, 1024}
	return Range{
		Workload: lo, Hi: []int{4096, 1024},
		Buckets: [][]int{{1, 1024}, {64, 1024}, {4096, 1024}},
		HeldOut: []HeldOut{{Shape: []int{8, 1024}, Nearest: []int{1, 1024}, Regret: 0.04}, {Shape: []int{512, 1024}, Nearest: []int{64, 1024}, Regret: math.Inf(1)}},
		Trials:  60, Time: t0.Add(time.Duration(sec) * time.Second), Tool: "autotune test",
	}
}

// Ranges travel in exports: after the records, one line each, and an
// import of the export gives the same database, and the same export.
func TestExportImportRanges(t *testing.T) {
	src := openFixture(t)
	other := testRange(1)
	other.Hi = []int{8192, 1024}
	for _, r := range []Range{testRange(0), other} {
		if err := src.SaveRange(r); err != nil {
			t.Fatal(err)
		}
	}
	first := export(t, src)
	lines := strings.Split(strings.TrimSuffix(string(first), "\n"), "\n")
	if n := len(fixture(t)); len(lines) != n+2 || !strings.HasPrefix(lines[n], `{"schema":4,"range":{"workload":{"op":"softmax","shape":[1,1024]`) {
		t.Fatalf("export has %d lines, want %d records and 2 ranges; line %d: %.80s", len(lines), n, n+1, lines[min(n, len(lines)-1)])
	}
	dst := openTemp(t)
	st, err := dst.Import(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if st != (ImportStats{Added: len(fixture(t)), Ranges: 2}) {
		t.Errorf("import: %+v", st)
	}
	want, _ := src.Ranges()
	if got, err := dst.Ranges(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("imported Ranges() = %+v, %v; want %+v", got, err, want)
	}
	if second := export(t, dst); !bytes.Equal(first, second) {
		t.Errorf("export after import differs:\n%s\nwant\n%s", second, first)
	}
	if st, err := dst.Import(bytes.NewReader(first)); err != nil || st.Ranges != 0 {
		t.Errorf("second import: %+v, %v; want no range stored", st, err)
	}
	recs, rs, err := ReadLog(bytes.NewReader(first))
	if err != nil || len(recs) != len(fixture(t)) || !reflect.DeepEqual(rs, want) {
		t.Errorf("ReadLog = %d records, ranges %+v, %v", len(recs), rs, err)
	}
}

// Of two ranges of one workload and corners, the newer is kept.
func TestImportNewerRange(t *testing.T) {
	db := openTemp(t)
	older, newer := testRange(0), testRange(5)
	newer.Buckets = newer.Buckets[:2]
	newer.HeldOut = newer.HeldOut[:1]
	if err := db.SaveRange(newer); err != nil {
		t.Fatal(err)
	}
	line := func(r Range) string {
		b, err := marshal(rangeLine{Schema: SchemaVersion, Range: &r})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	if st, err := db.Import(strings.NewReader(line(older))); err != nil || st.Ranges != 0 {
		t.Errorf("import of an older range: %+v, %v; want it skipped", st, err)
	}
	if got, _ := db.Ranges(); len(got) != 1 || len(got[0].Buckets) != 2 {
		t.Errorf("after importing an older range: %+v", got)
	}
	newest := testRange(9)
	if st, err := db.Import(strings.NewReader(line(older) + line(newest))); err != nil || st.Ranges != 1 {
		t.Errorf("import of a newer range: %+v, %v; want it stored", st, err)
	}
	if got, _ := db.Ranges(); len(got) != 1 || !got[0].Time.Equal(newest.Time) {
		t.Errorf("after importing a newer range: %+v", got)
	}
	_, rs, err := ReadLog(strings.NewReader(line(newest) + line(older) + line(newer)))
	if err != nil || len(rs) != 1 || !rs[0].Time.Equal(newest.Time) {
		t.Errorf("ReadLog kept %+v, %v; want the newest", rs, err)
	}
}

// A range line is checked as a record line is, and a bad one fails the
// import, which then adds nothing.
func TestImportRangeLines(t *testing.T) {
	b, err := marshal(rangeLine{Schema: SchemaVersion, Range: ptr(testRange(0))})
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	record := string(export(t, openFixture(t)))
	for _, tt := range []struct{ name, input, want string }{
		{"bucket outside", strings.Replace(good, `[4096,1024]]`, `[4097,1024]]`, 1), "tunedb: import line 1: tunedb: invalid range 1..4096x1024: bucket [4097 1024] lies outside it"},
		{"held out names no bucket", strings.Replace(good, `"nearest":[1,1024]`, `"nearest":[2,1024]`, 1), "tunedb: import line 1: tunedb: invalid range 1..4096x1024: held-out shape [8 1024]"},
		{"corners reversed", strings.Replace(good, `"hi":[4096,1024]`, `"hi":[4096,512]`, 1), "tunedb: import line 1: tunedb: invalid range"},
		{"negative trials", strings.Replace(good, `"trials":60`, `"trials":-1`, 1), "tunedb: import line 1: tunedb: invalid range 1..4096x1024: trials is -1"},
		{"schema 3", strings.Replace(good, `"schema":4`, `"schema":3`, 1), "tunedb: import line 1: range schema 3: ranges came with schema 4"},
		{"newer schema", strings.Replace(good, `"schema":4`, `"schema":5`, 1), "tunedb: import line 1: range schema 5 is newer"},
		{"record members", strings.Replace(good, `"schema":4,`, `"schema":4,"status":"ok",`, 1), `tunedb: import line 1: json: unknown field "status"`},
		{"unknown member", strings.Replace(good, `"trials"`, `"trails"`, 1), `tunedb: import line 1: json: unknown field "trails"`},
		{"a week ahead", strings.Replace(good, `"time":"2025-03-01T12:00:00Z"`, `"time":"`+time.Now().Add(7*24*time.Hour).UTC().Format(time.RFC3339)+`"`, 1), "tunedb: import line 1: time"},
		{"after records", record + strings.Replace(good, `"hi":[4096,1024]`, `"hi":[4096]`, 1), fmt.Sprintf("tunedb: import line %d: tunedb: invalid range", len(fixture(t))+1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			_, err := db.Import(strings.NewReader(tt.input))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Import error = %v, want %q", err, tt.want)
			}
			if out := export(t, db); len(out) != 0 {
				t.Errorf("a failed import added:\n%s", out)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Merge carries the other database's ranges.
func TestMergeRanges(t *testing.T) {
	dir := t.TempDir()
	a := openAt(t, filepath.Join(dir, "a.db"))
	b := openAt(t, filepath.Join(dir, "b.db"))
	if err := b.SaveRange(testRange(0)); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if st, err := a.Merge(filepath.Join(dir, "b.db")); err != nil || st.Ranges != 1 {
		t.Errorf("Merge = %+v, %v; want one range", st, err)
	}
	if got, err := a.Ranges(); err != nil || len(got) != 1 || got[0].String() != "1..4096x1024" {
		t.Errorf("merged Ranges() = %+v, %v", got, err)
	}
}
