package tunedb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/autotune-dev/autotune/schedule"
)

const device = "cpu/Test CPU 3000/avx2+fma/2c"

var (
	softmax   = Workload{Op: "softmax", Shape: []int{4096, 1024}, DType: "f32", Device: device, Template: "t1"}
	softmaxT2 = Workload{Op: "softmax", Shape: []int{4096, 1024}, DType: "f32", Device: device, Template: "t2"}
	gemm      = Workload{Op: "gemm", Shape: []int{512, 512, 512}, DType: "f32", Device: device, Template: "g1"}
	t0        = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

func config(t testing.TB, text string) schedule.Config {
	t.Helper()
	c, err := schedule.ParseConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rec returns a record measured sec seconds after t0; median is kept for
// failures too, so tests can check that failures never rank.
func rec(t testing.TB, w Workload, cfg string, st Status, median float64, sec int) Record {
	r := Record{
		Workload: w, Config: config(t, cfg), Status: st, MedianNS: median,
		BuildNS: 1_000_000, RunNS: 2_000_000, Time: t0.Add(time.Duration(sec) * time.Second), Tool: "autotune test",
	}
	if st == StatusOK {
		r.P20NS, r.P80NS = median*0.9, median*1.1
		r.SamplesNS = []float64{median * 1.1, median, median * 0.9}
	} else {
		r.Error = "failed: " + string(st)
	}
	return r
}

// fixture is a database of three workloads: softmax in two template
// versions, and a gemm whose every candidate failed.
func fixture(t testing.TB) []Record {
	return []Record{
		rec(t, softmax, "vec=8,unroll=1", StatusOK, 500, 0),
		rec(t, softmax, "vec=8,unroll=1", StatusOK, 450, 1),
		rec(t, softmax, "vec=16,unroll=2", StatusOK, 300, 2),
		rec(t, softmax, "vec=16,unroll=2", StatusOK, 320, 3),
		rec(t, softmax, "vec=16,unroll=4", StatusRuntimeError, 0, 4),
		rec(t, softmax, "vec=32,unroll=4", StatusOK, 400, 5),
		rec(t, softmax, "vec=4,unroll=1", StatusWrongAnswer, 10, 6),
		rec(t, softmax, "vec=64,unroll=1", StatusInvalid, 0, 7),
		rec(t, softmax, "vec=16,unroll=2", StatusTimeout, 0, 8),
		rec(t, softmaxT2, "vec=8,unroll=1", StatusOK, 100, 9),
		rec(t, gemm, "mc=64,nc=64", StatusBuildError, 0, 10),
		rec(t, gemm, "mc=128,nc=64", StatusTimeout, 0, 11),
	}
}

func openTemp(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "tune.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openFixture(t testing.TB) *DB {
	db := openTemp(t)
	if err := db.Commit(fixture(t)); err != nil {
		t.Fatal(err)
	}
	return db
}

// brief describes records by config, median and time offset, which is
// enough to tell the fixture's records apart.
func brief(recs []Record) []string {
	var s []string
	for _, r := range recs {
		s = append(s, fmt.Sprintf("%s %s %g @%v", r.Config, r.Status, r.MedianNS, r.Time.Sub(t0)))
	}
	return s
}

func TestBestAndTopK(t *testing.T) {
	db := openFixture(t)
	tests := []struct {
		name string
		w    Workload
		k    int
		want []string
	}{
		{"all", softmax, 10, []string{"vec=16,unroll=2 ok 320 @3s", "vec=32,unroll=4 ok 400 @5s", "vec=8,unroll=1 ok 450 @1s"}},
		{"two", softmax, 2, []string{"vec=16,unroll=2 ok 320 @3s", "vec=32,unroll=4 ok 400 @5s"}},
		{"zero", softmax, 0, nil},
		{"other template", softmaxT2, 5, []string{"vec=8,unroll=1 ok 100 @9s"}},
		{"only failures", gemm, 5, nil},
		{"unknown workload", Workload{Op: "attention", Shape: []int{1}, DType: "f16", Device: device, Template: "a"}, 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, err := db.TopK(tt.w, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if got := brief(top); !slices.Equal(got, tt.want) {
				t.Errorf("TopK = %q, want %q", got, tt.want)
			}
			best, ok, err := db.Best(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := db.TopK(tt.w, 1)
			if ok != (len(all) == 1) || ok && !slices.Equal(brief([]Record{best}), brief(all)) {
				t.Errorf("Best = %q, %v; want the first of TopK %q", brief([]Record{best}), ok, brief(all))
			}
		})
	}
}

func TestMeasured(t *testing.T) {
	db := openFixture(t)
	// A transient failure retried once and failed again is not retried.
	if err := db.Commit([]Record{rec(t, gemm, "mc=128,nc=64", StatusCrash, 0, 20)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		w           Workload
		cfg         string
		want, retry bool // measured by default; with retryFailed
	}{
		{softmax, "vec=16,unroll=2", true, true},   // ok, and a timeout
		{softmax, "vec=16,unroll=4", false, false}, // one runtime_error: transient, retried once
		{softmax, "vec=4,unroll=1", true, true},    // wrong_answer is final
		{softmax, "vec=64,unroll=1", true, true},   // invalid is final
		{softmax, "vec=16", false, false},          // a prefix of measured configs
		{softmax, "vec=2,unroll=1", false, false},
		{softmaxT2, "vec=16,unroll=2", false, false},
		{gemm, "mc=64,nc=64", true, true},   // build_error is final
		{gemm, "mc=128,nc=64", true, false}, // timeout, then crash: retried once already
	}
	for _, tt := range tests {
		t.Run(tt.w.Template+"/"+tt.cfg, func(t *testing.T) {
			for _, retry := range []bool{false, true} {
				m, err := db.Measured(tt.w, retry)
				if err != nil {
					t.Fatal(err)
				}
				if want := tt.want && !retry || tt.retry && retry; m[tt.cfg] != want {
					t.Errorf("Measured(retryFailed=%v)[%s] = %v, want %v", retry, tt.cfg, m[tt.cfg], want)
				}
			}
		})
	}
	m, err := db.Measured(softmax, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 5 {
		t.Errorf("Measured(softmax) has %d configs, want 5: %v", len(m), m)
	}
}

func TestTransient(t *testing.T) {
	var got []Status
	for _, s := range Statuses() {
		if s.Transient() {
			got = append(got, s)
		}
	}
	if want := []Status{StatusRuntimeError, StatusCrash, StatusTimeout}; !slices.Equal(got, want) {
		t.Errorf("transient statuses %v, want %v", got, want)
	}
}

func TestRecords(t *testing.T) {
	db := openFixture(t)
	got, err := db.Records(softmax)
	if err != nil {
		t.Fatal(err)
	}
	// Storage order: by config text, then by time.
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
}

func TestFind(t *testing.T) {
	db := openFixture(t)
	tests := []struct {
		name   string
		op     string
		shape  []int
		device string
		want   []string // templates
	}{
		{"two versions", "softmax", []int{4096, 1024}, device, []string{"t1", "t2"}},
		{"one", "gemm", []int{512, 512, 512}, device, []string{"g1"}},
		{"other shape", "softmax", []int{4096}, device, nil},
		{"device prefix", "softmax", []int{4096, 1024}, "cpu/Test", nil},
		{"other device", "softmax", []int{4096, 1024}, "sm_86", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := db.Find(tt.op, tt.shape, "f32", tt.device)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range ws {
				got = append(got, w.Template)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Find templates = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWorkloads(t *testing.T) {
	db := openFixture(t)
	sums, err := db.Workloads()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		w        Workload
		records  int
		byStatus map[Status]int
		best     float64 // 0: none
	}{
		{gemm, 2, map[Status]int{StatusBuildError: 1, StatusTimeout: 1}, 0},
		{softmax, 9, map[Status]int{StatusOK: 5, StatusRuntimeError: 1, StatusWrongAnswer: 1, StatusInvalid: 1, StatusTimeout: 1}, 320},
		{softmaxT2, 1, map[Status]int{StatusOK: 1}, 100},
	}
	if len(sums) != len(want) {
		t.Fatalf("%d workloads, want %d", len(sums), len(want))
	}
	for i, s := range sums {
		w := want[i]
		if !s.Workload.equal(w.w) || s.Records != w.records || fmt.Sprint(s.ByStatus) != fmt.Sprint(w.byStatus) {
			t.Errorf("workload %d = %+v, want %+v", i, s, w)
		}
		if (s.Best == nil) != (w.best == 0) || s.Best != nil && s.Best.MedianNS != w.best {
			t.Errorf("workload %s: Best = %+v, want median %g", s.Workload.Key(), s.Best, w.best)
		}
	}
}

func TestCommitRejects(t *testing.T) {
	good := rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 0)
	tests := []struct {
		name   string
		change func(*Record)
		want   string
	}{
		{"empty op", func(r *Record) { r.Workload.Op = "" }, "op is empty"},
		{"space in template", func(r *Record) { r.Workload.Template = "a b" }, "contains a space"},
		{"newline in device", func(r *Record) { r.Workload.Device = "cpu\n" }, "control character"},
		{"no shape", func(r *Record) { r.Workload.Shape = nil }, "no dimensions"},
		{"zero dim", func(r *Record) { r.Workload.Shape = []int{4, 0} }, "dimension 1 is 0"},
		{"status", func(r *Record) { r.Status = "slow" }, `unknown status "slow"`},
		{"no time", func(r *Record) { r.Time = time.Time{} }, "time is not set"},
		{"old time", func(r *Record) { r.Time = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }, "outside 1970..2262"},
		{"newer schema", func(r *Record) { r.Schema = SchemaVersion + 1 }, "upgrade autotune"},
		{"negative schema", func(r *Record) { r.Schema = -1 }, "unknown record schema -1"},
		{"ok without median", func(r *Record) { r.MedianNS = 0 }, "positive median_ns"},
		{"NaN sample", func(r *Record) { r.SamplesNS = []float64{math.NaN()} }, "sample 0 is NaN"},
		{"negative sample", func(r *Record) { r.SamplesNS[1] = -100 }, "sample 1 is -100"},
		{"median not of the samples", func(r *Record) { r.MedianNS = 50 }, "median_ns 50 is not the median of the samples, 100"},
		{"p20 above the median", func(r *Record) { r.P20NS = 105 }, "p20_ns 105, median_ns 100 and p80_ns 110"},
		{"p80 above the slowest", func(r *Record) { r.P80NS = 200 }, "p80_ns 200 is outside the samples' range 90..110"},
		{"p20 of a failure above its median", func(r *Record) { r.Status, r.SamplesNS, r.P20NS = StatusTimeout, nil, 101 }, "out of order"},
		{"infinite median", func(r *Record) {
			r.Status, r.SamplesNS, r.MedianNS, r.P20NS, r.P80NS = StatusTimeout, nil, math.Inf(1), 0, 0
		}, "median_ns is +Inf"},
		{"long error", func(r *Record) { r.Status, r.Error = StatusBuildError, strings.Repeat("x", MaxErrorBytes+1) }, "error is 65537 bytes, over 65536"},
		{"many samples", func(r *Record) { r.SamplesNS = slices.Repeat([]float64{100}, MaxSamples+1) }, "100001 samples, over 100000"},
		{"long tool", func(r *Record) { r.Tool = strings.Repeat("v", 257) }, "tool is 257 bytes, over 256"},
		{"negative build time", func(r *Record) { r.BuildNS = -1 }, "build_ns is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			bad := rec(t, gemm, "mc=64,nc=64", StatusOK, 100, 1)
			tt.change(&bad)
			err := db.Commit([]Record{good, bad})
			if err == nil || !strings.HasPrefix(err.Error(), "tunedb: commit record 1: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Commit error = %v, want record 1 and %q", err, tt.want)
			}
			if recs, _ := db.Records(softmax); len(recs) != 0 {
				t.Errorf("a rejected batch left %d records", len(recs))
			}
		})
	}
}

func TestCommitIdentity(t *testing.T) {
	db := openTemp(t)
	r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 0)
	if err := db.Commit([]Record{r}); err != nil {
		t.Fatal(err)
	}
	same := r
	same.Time = r.Time.In(time.FixedZone("CET", 3600)) // same instant
	same.Schema = SchemaVersion
	if err := db.Commit([]Record{same}); err != nil {
		t.Errorf("recommitting an identical record: %v", err)
	}
	changed := r
	changed.RunNS++
	if err := db.Commit([]Record{changed}); err == nil || !strings.Contains(err.Error(), "already stored with different content") {
		t.Errorf("Commit of a changed record = %v, want a refusal", err)
	}
	recs, err := db.Records(softmax)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].MedianNS != 100 {
		t.Errorf("records = %q, want the first one only", brief(recs))
	}
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := "tunedb: database " + path + " is in use by another autotune process"
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(path, &Options{Timeout: 100 * time.Millisecond, ReadOnly: ro})
		if err == nil || err.Error() != want {
			t.Errorf("second Open (read-only %v) = %v, want %q", ro, err, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("second Open took %v", d)
		}
	}
	db.Close()
	db2, err := Open(path, &Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db2.Close()
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := Open(missing, &Options{ReadOnly: true}); err == nil || err.Error() != "tunedb: no database at "+missing {
		t.Errorf("read-only Open of a missing file = %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("read-only Open created the file: %v", err)
	}

	path := filepath.Join(dir, "sub", "dir", "tune.db") // parents created
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(fixture(t)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r1, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(path, &Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	defer r2.Close()
	if best, ok, err := r2.Best(softmax); err != nil || !ok || best.MedianNS != 320 {
		t.Errorf("Best on a reader = %v %v %v", best.MedianNS, ok, err)
	}
	if err := r1.Commit(fixture(t)); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Commit on a reader = %v", err)
	}
}

func TestOpenNotADatabase(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) func(string) error {
		return func(path string) error {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return os.WriteFile(path, b, 0o644)
		}
	}
	foreign := func(path string) error {
		b, err := bbolt.Open(path, 0o644, nil)
		if err != nil {
			return err
		}
		defer b.Close()
		return b.Update(func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucket([]byte("someone else's"))
			return err
		})
	}
	tests := []struct {
		name  string
		write func(string) error
	}{
		{"text", func(p string) error { return os.WriteFile(p, []byte("hello, world\n"), 0o644) }},
		{"random 100", random(100)},
		{"random 4096", random(4096)}, // one page: bbolt would map past the end
		{"random 5000", random(5000)},
		{"random 64k", random(1 << 16)},
		{"foreign bbolt", foreign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			want := "tunedb: " + path + " is not an autotune tuning database"
			for _, ro := range []bool{false, true} {
				db, err := Open(path, &Options{ReadOnly: ro})
				if err == nil {
					db.Close()
				}
				if err == nil || err.Error() != want {
					t.Errorf("Open (read-only %v) = %v, want %q", ro, err, want)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("Open changed the file")
			}
		})
	}
}

func TestOpenInitialises(t *testing.T) {
	tests := []struct {
		name  string
		write func(string) error
	}{
		{"new", func(string) error { return nil }},
		{"zero bytes", func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{"bbolt without buckets", func(p string) error {
			b, err := bbolt.Open(p, 0o644, nil)
			if err != nil {
				return err
			}
			return b.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			if err := tt.write(path); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(fixture(t)); err != nil {
				t.Fatal(err)
			}
			db.Close()
			db, err = Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if sums, err := db.Workloads(); err != nil || len(sums) != 3 {
				t.Errorf("Workloads after reopening = %d, %v", len(sums), err)
			}
		})
	}
}

func TestOpenNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db := openAt(t, path)
	db.Close()
	b, err := bbolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(SchemaVersion+1)))
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, nil)
	want := fmt.Sprintf("tunedb: %s has schema %d, newer than this autotune's (%d): upgrade autotune", path, SchemaVersion+1, SchemaVersion)
	if err == nil || err.Error() != want {
		t.Errorf("Open = %v, want %q", err, want)
	}
}

func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCorrupt damages a database in ways bbolt does not detect on its own
// and checks that using it gives an error, not a panic or a crash.
func TestCorrupt(t *testing.T) {
	var many []Record
	for i := range 2000 {
		many = append(many, rec(t, softmax, fmt.Sprintf("vec=%d,unroll=%d", i, i%7), StatusOK, float64(1000+i), i))
	}
	tests := []struct {
		name   string
		damage func(data []byte, page int) []byte
	}{
		{"meta checksums", func(d []byte, page int) []byte {
			d[40] ^= 0xff // root bucket sequence, covered by the checksum
			d[page+40] ^= 0xff
			return d
		}},
		{"truncated", func(d []byte, page int) []byte { return d[:3*page] }},
		{"one page left", func(d []byte, page int) []byte { return d[:page] }},
		{"garbage pages", func(d []byte, page int) []byte {
			rng := rand.New(rand.NewPCG(3, 4))
			for i := 2 * page; i < len(d); i++ {
				d[i] = byte(rng.Uint32())
			}
			return d
		}},
		{"zeroed pages", func(d []byte, page int) []byte {
			clear(d[2*page:])
			return d
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tune.db")
			db, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(many); err != nil {
				t.Fatal(err)
			}
			page := db.bolt.Info().PageSize
			db.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(data, page), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				err = useAll(t, path, ro)
				if err == nil || !strings.HasPrefix(err.Error(), "tunedb: "+path+" is corrupt: ") {
					t.Errorf("using the damaged database (read-only %v): %v, want a corrupt error", ro, err)
				}
			}
			// A panic inside bbolt.Open must not leave the file locked.
			if _, err := Open(path, &Options{Timeout: 100 * time.Millisecond}); err != nil && strings.Contains(err.Error(), "in use") {
				t.Errorf("the damaged database stayed locked: %v", err)
			}
		})
	}
}

// useAll opens the database at path and uses all of it, returning the first
// error.
func useAll(t testing.TB, path string, readOnly bool) error {
	db, err := Open(path, &Options{ReadOnly: readOnly})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Workloads(); err != nil {
		return err
	}
	if _, err := db.Records(softmax); err != nil {
		return err
	}
	if err := db.Export(io.Discard); err != nil {
		return err
	}
	if readOnly {
		return nil
	}
	return db.Commit([]Record{rec(t, gemm, "mc=1,nc=1", StatusOK, 1, 0)})
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("AUTOTUNE_DB", "/some/where/tune.db")
	if p, err := DefaultPath(); err != nil || p != "/some/where/tune.db" {
		t.Errorf("DefaultPath with AUTOTUNE_DB = %q, %v", p, err)
	}
	cache := t.TempDir()
	t.Setenv("AUTOTUNE_DB", "")
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	if p, err := DefaultPath(); err != nil || p != filepath.Join(dir, "autotune", "tune.db") {
		t.Errorf("DefaultPath = %q, %v; want it under %s", p, err, dir)
	}
}

func TestWorkloadKey(t *testing.T) {
	tests := []struct {
		w     Workload
		key   string
		shape string
	}{
		{softmax, "softmax 4096x1024 f32 " + device + " t1", "4096x1024"},
		{Workload{Op: "gemm", Shape: []int{7}, DType: "bf16", Device: "sm_86", Template: "ab12"}, "gemm 7 bf16 sm_86 ab12", "7"},
	}
	for _, tt := range tests {
		if got := tt.w.Key(); got != tt.key {
			t.Errorf("Key = %q, want %q", got, tt.key)
		}
		if got := tt.w.ShapeString(); got != tt.shape {
			t.Errorf("ShapeString = %q, want %q", got, tt.shape)
		}
		if err := tt.w.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", tt.w, err)
		}
	}
	if err := (Workload{Op: "x", Shape: []int{1}, DType: "f32", Device: "d", Template: "t\xff"}).Validate(); err == nil ||
		!strings.HasPrefix(err.Error(), "tunedb: invalid workload: template") {
		t.Errorf("Validate of non-UTF-8 = %v", err)
	}
}

func TestStatuses(t *testing.T) {
	all := Statuses()
	want := []Status{"ok", "invalid", "build_error", "runtime_error", "crash", "timeout", "wrong_answer"}
	if !slices.Equal(all, want) {
		t.Errorf("Statuses = %q", all)
	}
	all[0] = "changed"
	if !StatusOK.Valid() || Status("changed").Valid() || Status("").Valid() {
		t.Error("Valid is wrong or Statuses shares its slice")
	}
}

// TestExportLine pins the JSON Lines format of the current schema.
func TestExportLine(t *testing.T) {
	r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 0)
	r.SamplesNS, r.P20NS, r.P80NS = []float64{110, 100, 90}, 90, 110
	r.Time = r.Time.Add(1500 * time.Microsecond)
	f := rec(t, softmax, "vec=4,unroll=1", StatusBuildError, 0, 1)
	f.Error = "expected '>' && '<'"
	db := openTemp(t)
	if err := db.Commit([]Record{r, f}); err != nil {
		t.Fatal(err)
	}
	w := `"workload":{"op":"softmax","shape":[4096,1024],"dtype":"f32","device":"` + device + `","template":"t1"}`
	want := `{"schema":4,` + w + `,"config":{"vec":4,"unroll":1},"status":"build_error","error":"expected '>' && '<'",` +
		`"build_ns":1000000,"run_ns":2000000,"time":"2025-03-01T12:00:01Z","tool":"autotune test"}` + "\n" +
		`{"schema":4,` + w + `,"config":{"vec":8,"unroll":1},"status":"ok","samples_ns":[110,100,90],"median_ns":100,` +
		`"p20_ns":90,"p80_ns":110,"build_ns":1000000,"run_ns":2000000,"time":"2025-03-01T12:00:00.0015Z","tool":"autotune test"}` + "\n"
	if got := string(export(t, db)); got != want {
		t.Errorf("export =\n%s\nwant\n%s", got, want)
	}
}

// A config measured again is ranked by its newest ok measurement, so a lucky
// early median does not keep it on top.
func TestRankByLatestMeasurement(t *testing.T) {
	db := openFixture(t)
	if err := db.Commit([]Record{rec(t, softmax, "vec=16,unroll=2", StatusOK, 500, 9)}); err != nil {
		t.Fatal(err)
	}
	top, err := db.TopK(softmax, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range top {
		got = append(got, r.Config.String())
	}
	want := []string{"vec=32,unroll=4", "vec=8,unroll=1", "vec=16,unroll=2"}
	if !slices.Equal(got, want) {
		t.Errorf("TopK after re-measuring vec=16,unroll=2 slower = %v, want %v", got, want)
	}
}

// A shared database holds its lock only during operations: readers get in
// between a writer's commits, and a commit waits for a reader to finish.
func TestShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	w, err := Open(path, &Options{Shared: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	recs := fixture(t)
	if err := w.Commit(recs[:1]); err != nil {
		t.Fatal(err)
	}
	// A reader opens while the writer is between operations.
	r, err := Open(path, &Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("a reader could not open a shared database between commits: %v", err)
	}
	if got, _ := r.Records(recs[0].Workload); len(got) != 1 {
		t.Errorf("the reader sees %d records, want 1", len(got))
	}
	// The writer's next commit waits for the reader to close.
	done := make(chan error)
	go func() { done <- w.Commit(recs[1:]) }()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the commit did not wait for the reader: %v", err)
	default:
	}
	r.Close()
	if err := <-done; err != nil {
		t.Fatalf("the commit failed after the reader closed: %v", err)
	}
	n := 0
	sums, err := w.Workloads()
	for _, s := range sums {
		n += s.Records
	}
	if err != nil || n != len(recs) {
		t.Errorf("%d records after both commits (%v), want %d", n, err, len(recs))
	}
}

func TestErrInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = Open(path, &Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), path+" is in use by another autotune process") {
		t.Errorf("second writer: %v", err)
	}
}
