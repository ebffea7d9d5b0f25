package tunedb

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// store is what DB and Memory have in common; the behaviour tests below
// hold both to the same answers.
type store interface {
	Commit(recs []Record) error
	Records(w Workload) ([]Record, error)
	Best(w Workload) (Record, bool, error)
	TopK(w Workload, k int) ([]Record, error)
	Measured(w Workload, retryFailed bool) (map[string]bool, error)
	Workloads() ([]Summary, error)
	SaveModel(k ModelKey, model []byte) error
	LoadModel(k ModelKey) ([]byte, bool, error)
}

var (
	_ store = (*DB)(nil)
	_ store = (*Memory)(nil)
)

// stores are the implementations, each new and empty.
var stores = []struct {
	name string
	open func(t *testing.T) store
}{
	{"db", func(t *testing.T) store { return openTemp(t) }},
	{"memory", func(*testing.T) store { return NewMemory() }},
}

// storeBehaviour is one behaviour every store has, tested on a store that
// holds the fixture.
var storeBehaviour = []struct {
	name string
	test func(t *testing.T, s store)
}{
	{"TopK and Best rank latest ok records", func(t *testing.T, s store) {
		for _, tt := range []struct {
			w    Workload
			k    int
			want []string
		}{
			{softmax, 10, []string{"vec=16,unroll=2 ok 320 @3s", "vec=32,unroll=4 ok 400 @5s", "vec=8,unroll=1 ok 450 @1s"}},
			{softmax, 2, []string{"vec=16,unroll=2 ok 320 @3s", "vec=32,unroll=4 ok 400 @5s"}},
			{softmax, 0, nil},
			{softmaxT2, 5, []string{"vec=8,unroll=1 ok 100 @9s"}},
			{gemm, 5, nil},
			{Workload{Op: "attention", Shape: []int{1}, DType: "f16", Device: device, Template: "a"}, 5, nil},
		} {
			top, err := s.TopK(tt.w, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if got := brief(top); !slices.Equal(got, tt.want) {
				t.Errorf("TopK(%s, %d) = %q, want %q", tt.w.Key(), tt.k, got, tt.want)
			}
			best, ok, err := s.Best(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := s.TopK(tt.w, 1)
			if ok != (len(first) == 1) || ok && !slices.Equal(brief([]Record{best}), brief(first)) {
				t.Errorf("Best(%s) = %q, %v; want the first of TopK, %q", tt.w.Key(), brief([]Record{best}), ok, brief(first))
			}
		}
	}},
	{"a suspect record does not rank, and marking one is the only change a record takes", func(t *testing.T, s store) {
		// The latest ok record of vec=16,unroll=2 (320 @3s) marked: the
		// one before it (300 @2s) ranks the config.
		r := rec(t, softmax, "vec=16,unroll=2", StatusOK, 320, 3)
		r.Suspect = "disagrees with w2 and w3"
		if err := s.Commit([]Record{r}); err != nil {
			t.Fatalf("marking a stored record suspect: %v", err)
		}
		if err := s.Commit([]Record{r}); err != nil {
			t.Fatalf("committing the marked record again: %v", err)
		}
		top, err := s.TopK(softmax, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := brief(top), []string{"vec=16,unroll=2 ok 300 @2s", "vec=32,unroll=4 ok 400 @5s", "vec=8,unroll=1 ok 450 @1s"}; !slices.Equal(got, want) {
			t.Errorf("TopK with a suspect record = %q, want %q", got, want)
		}
		recs, _ := s.Records(softmax)
		marked := 0
		for _, x := range recs {
			if x.Suspect != "" {
				marked++
			}
		}
		if marked != 1 || len(recs) != 9 {
			t.Errorf("%d records, %d of them suspect; want the 9 of the fixture, 1 suspect", len(recs), marked)
		}
		changed := r
		changed.MedianNS, changed.Suspect = 1, "x"
		unmark := rec(t, softmax, "vec=16,unroll=2", StatusOK, 320, 3)
		failed := rec(t, softmax, "vec=16,unroll=4", StatusRuntimeError, 0, 4)
		failed.Suspect = "x"
		for _, bad := range []Record{changed, unmark, failed} {
			if err := s.Commit([]Record{bad}); err == nil {
				t.Errorf("a change besides marking ok records suspect was accepted: %+v", bad)
			}
		}
	}},
	{"Measured skips ok records and final failures", func(t *testing.T, s store) {
		for _, tt := range []struct {
			w    Workload
			cfg  string
			want bool
		}{
			{softmax, "vec=16,unroll=2", true},
			{softmax, "vec=16,unroll=4", false}, // one runtime_error: transient, retried once
			{softmax, "vec=16", false},          // a prefix of measured configs
			{softmax, "vec=2,unroll=1", false},
			{softmaxT2, "vec=16,unroll=2", false},
			{gemm, "mc=64,nc=64", true},
		} {
			m, err := s.Measured(tt.w, false)
			if err != nil || m[tt.cfg] != tt.want {
				t.Errorf("Measured(%s)[%s] = %v, %v; want %v", tt.w.Template, tt.cfg, m[tt.cfg], err, tt.want)
			}
		}
		if m, _ := s.Measured(softmax, false); len(m) != 5 {
			t.Errorf("Measured(softmax) has %d configs, want 5: %v", len(m), m)
		}
	}},
	{"Records in storage order, decoded", func(t *testing.T, s store) {
		got, err := s.Records(softmax)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"vec=16,unroll=2 ok 300 @2s", "vec=16,unroll=2 ok 320 @3s", "vec=16,unroll=2 timeout 0 @8s",
			"vec=16,unroll=4 runtime_error 0 @4s", "vec=32,unroll=4 ok 400 @5s", "vec=4,unroll=1 wrong_answer 10 @6s",
			"vec=64,unroll=1 invalid 0 @7s", "vec=8,unroll=1 ok 500 @0s", "vec=8,unroll=1 ok 450 @1s",
		}
		if !slices.Equal(brief(got), want) {
			t.Errorf("Records = %q\nwant %q", brief(got), want)
		}
		for _, r := range got {
			if r.Schema != SchemaVersion || !r.Workload.equal(softmax) || r.Time.Location() != time.UTC {
				t.Errorf("record %s: schema %d, workload %+v, time %v", r.Config, r.Schema, r.Workload, r.Time)
			}
		}
		// What a caller does to the records it got changes nothing stored.
		got[0].SamplesNS[0], got[0].Workload.Shape[0] = -1, -1
		again, _ := s.Records(softmax)
		if again[0].SamplesNS[0] == -1 || again[0].Workload.Shape[0] == -1 {
			t.Errorf("changing a returned record changed the store: %+v", again[0])
		}
	}},
	{"Workloads sorted by key", func(t *testing.T, s store) {
		sums, err := s.Workloads()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, su := range sums {
			best := "none"
			if su.Best != nil {
				best = fmt.Sprint(su.Best.MedianNS)
			}
			got = append(got, fmt.Sprintf("%s %s: %d %v best %s", su.Workload.Op, su.Workload.Template, su.Records, su.ByStatus, best))
		}
		want := []string{
			"gemm g1: 2 map[build_error:1 timeout:1] best none",
			"softmax t1: 9 map[invalid:1 ok:5 runtime_error:1 timeout:1 wrong_answer:1] best 320",
			"softmax t2: 1 map[ok:1] best 100",
		}
		if !slices.Equal(got, want) {
			t.Errorf("Workloads = %q\nwant %q", got, want)
		}
	}},
	{"Commit refuses a bad batch whole", func(t *testing.T, s store) {
		bad := rec(t, gemm, "mc=8,nc=8", StatusOK, 0, 20) // ok without a median
		err := s.Commit([]Record{rec(t, gemm, "mc=1,nc=1", StatusOK, 5, 20), bad})
		if err == nil || !strings.HasPrefix(err.Error(), "tunedb: commit record 1: ") || !strings.Contains(err.Error(), "positive median_ns") {
			t.Errorf("Commit = %v, want a refusal of record 1", err)
		}
		if recs, _ := s.Records(gemm); slices.ContainsFunc(recs, func(r Record) bool { return r.Config.String() == "mc=1,nc=1" }) {
			t.Error("the good record of a refused batch was stored")
		}
	}},
	{"Commit keeps identities", func(t *testing.T, s store) {
		r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 500, 0) // in the fixture
		same := r
		same.Time = r.Time.In(time.FixedZone("CET", 3600))
		if err := s.Commit([]Record{same}); err != nil {
			t.Errorf("recommitting an identical record: %v", err)
		}
		changed := r
		changed.Tool = "another autotune"
		if err := s.Commit([]Record{changed}); err == nil || !strings.Contains(err.Error(), "already stored with different content") {
			t.Errorf("Commit of a changed record = %v, want a refusal", err)
		}
		// Within one batch as well, and then nothing of it is stored.
		n := rec(t, softmax, "vec=2,unroll=2", StatusOK, 70, 30)
		m := n
		m.MedianNS = 71
		if err := s.Commit([]Record{n, m}); err == nil || !strings.Contains(err.Error(), "commit record 1") {
			t.Errorf("Commit of two versions of one record = %v, want a refusal of record 1", err)
		}
		if err := s.Commit([]Record{n, n}); err != nil {
			t.Errorf("Commit of a record twice in a batch: %v", err)
		}
		if recs, _ := s.Records(softmax); len(recs) != 10 {
			t.Errorf("%d records, want the fixture's 9 and one more", len(recs))
		}
	}},
	{"queries of an invalid workload fail", func(t *testing.T, s store) {
		bad := Workload{Op: "soft max", Shape: []int{1}, DType: "f32", Device: device, Template: "t"}
		if _, err := s.Records(bad); err == nil {
			t.Error("Records of an invalid workload succeeded")
		}
		if _, err := s.TopK(bad, 1); err == nil {
			t.Error("TopK of an invalid workload succeeded")
		}
		if _, err := s.Measured(bad, false); err == nil {
			t.Error("Measured of an invalid workload succeeded")
		}
	}},
	{"models", func(t *testing.T, s store) {
		k := ModelKey{Op: "softmax", Device: device, Template: "v1"}
		if _, ok, err := s.LoadModel(k); ok || err != nil {
			t.Fatalf("LoadModel before any save = %v, %v", ok, err)
		}
		first := []byte("first")
		for _, m := range [][]byte{first, []byte("second")} {
			if err := s.SaveModel(k, m); err != nil {
				t.Fatal(err)
			}
		}
		first[0] = 'x'
		other := k
		other.Template = "v2"
		if err := s.SaveModel(other, []byte("other")); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveModel(ModelKey{Op: "softmax"}, []byte("x")); err == nil {
			t.Error("a key with empty fields was accepted")
		}
		for key, want := range map[ModelKey]string{k: "second", other: "other"} {
			got, ok, err := s.LoadModel(key)
			if !ok || err != nil || string(got) != want {
				t.Errorf("LoadModel(%+v) = %q, %v, %v; want %q", key, got, ok, err, want)
			}
		}
	}},
}

func TestStoreBehaviour(t *testing.T) {
	for _, impl := range stores {
		for _, b := range storeBehaviour {
			t.Run(impl.name+"/"+b.name, func(t *testing.T) {
				s := impl.open(t)
				if err := s.Commit(fixture(t)); err != nil {
					t.Fatal(err)
				}
				b.test(t, s)
			})
		}
	}
}

func TestMemoryZeroValue(t *testing.T) {
	var m Memory
	if recs, err := m.Records(softmax); err != nil || recs != nil {
		t.Errorf("Records of an empty Memory = %v, %v", recs, err)
	}
	if sums, err := m.Workloads(); err != nil || len(sums) != 0 {
		t.Errorf("Workloads of an empty Memory = %v, %v", sums, err)
	}
	if err := m.Commit(fixture(t)); err != nil {
		t.Fatal(err)
	}
	if best, ok, err := m.Best(softmax); err != nil || !ok || best.MedianNS != 320 {
		t.Errorf("Best = %v, %v, %v; want median 320", best.MedianNS, ok, err)
	}
}
