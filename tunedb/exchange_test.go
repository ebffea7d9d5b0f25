package tunedb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/measure"
)

func export(t testing.TB, db *DB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := db.Export(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExportEmpty(t *testing.T) {
	if out := export(t, openTemp(t)); len(out) != 0 {
		t.Errorf("export of a fresh database = %q", out)
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	src := openFixture(t)
	first := export(t, src)
	if n := bytes.Count(first, []byte("\n")); n != len(fixture(t)) {
		t.Fatalf("export has %d lines, want %d", n, len(fixture(t)))
	}
	// Workloads by key (gemm first), then storage order.
	if !bytes.HasPrefix(first, []byte(`{"schema":4,"workload":{"op":"gemm"`)) {
		t.Errorf("export starts with %.60s", first)
	}

	dst := openTemp(t)
	st, err := dst.Import(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if st != (ImportStats{Added: len(fixture(t))}) {
		t.Errorf("first import: %+v", st)
	}
	if second := export(t, dst); !bytes.Equal(first, second) {
		t.Errorf("export after import differs:\n%s\nwant\n%s", second, first)
	}
	st, err = dst.Import(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if st != (ImportStats{Skipped: len(fixture(t))}) {
		t.Errorf("second import: %+v, want all skipped", st)
	}
	if best, ok, err := dst.Best(softmax); err != nil || !ok || best.MedianNS != 320 {
		t.Errorf("Best after import = %v, %v, %v", best.MedianNS, ok, err)
	}
}

func TestImportLines(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(string(export(t, openFixture(t))), "\n"), "\n")
	good, other := lines[0], lines[1]
	tests := []struct {
		name  string
		input string
		want  string // error; "" for success
		added int
	}{
		{"empty", "", "", 0},
		{"blank lines and CRLF", "\n" + good + "\r\n\n  \n" + other, "", 2},
		{"duplicate line", good + "\n" + good + "\n", "", 1},
		{"not JSON", good + "\n\nnot json\n", "tunedb: import line 3: invalid character", 0},
		{"truncated", good[:len(good)/2], "tunedb: import line 1: unexpected EOF", 0},
		{"two records on a line", good + good, "tunedb: import line 1: data after the record", 0},
		{"unknown field", strings.Replace(good, `"tool"`, `"tool2"`, 1), `tunedb: import line 1: json: unknown field "tool2"`, 0},
		{"newer schema", strings.Replace(good, `"schema":4`, `"schema":5`, 1), "tunedb: import line 1: record schema 5 is newer than this autotune's (4): upgrade autotune", 0},
		{"no schema", strings.Replace(good, `"schema":4,`, ``, 1), "tunedb: import line 1: unknown record schema 0", 0},
		{"schema 1", strings.Replace(good, `"schema":4`, `"schema":1`, 1), "", 1},
		{"schema 2", strings.Replace(good, `"schema":4`, `"schema":2`, 1), "", 1},
		{"schema 3", strings.Replace(good, `"schema":4`, `"schema":3`, 1), "", 1},
		{"disturbance and measurer", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","disturbance":{"samples":10,"disturbed":2,"cpu_share":0.93,"steal_ns":1500},"measurer":{"name":"w1","host":"box","tool":"autotune test"}`, 1), "", 1},
		{"more disturbed than samples", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","disturbance":{"samples":2,"disturbed":3}`, 1), "tunedb: import line 1: disturbance: 3 of 2 samples disturbed", 0},
		{"negative steal", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","disturbance":{"samples":2,"disturbed":0,"steal_ns":-1}`, 1), "tunedb: import line 1: disturbance: steal_ns is -1", 0},
		{"negative probe", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","disturbance":{"samples":2,"disturbed":0,"probe":-1}`, 1), "tunedb: import line 1: disturbance: probe is -1", 0},
		{"control character in measurer", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","measurer":{"name":"w\u001b[2J"}`, 1), `tunedb: import line 1: measurer: name "w\x1b[2J" is not UTF-8 without control characters`, 0},
		{"negative registers", strings.Replace(good, `"tool":"autotune test"`, `"tool":"autotune test","registers":-4`, 1), "tunedb: import line 1: registers is -4", 0},
		{"bad status", other + "\n" + strings.Replace(good, `"status":"timeout"`, `"status":"meh"`, 1), `tunedb: import line 2: unknown status "meh"`, 0},
		{"bad config", strings.Replace(good, `"mc":128`, `"mc":"12 8"`, 1), "tunedb: import line 1: schedule: config JSON: knob mc", 0},
		{"no time", strings.Replace(good, `"time":"2025-03-01T12:00:11Z",`, ``, 1), "tunedb: import line 1: time is not set", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			st, err := db.Import(strings.NewReader(tt.input))
			if tt.want == "" {
				if err != nil || st.Added != tt.added {
					t.Errorf("Import = %+v, %v; want %d added", st, err, tt.added)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Import error = %v, want %q", err, tt.want)
			}
			if out := export(t, db); len(out) != 0 {
				t.Errorf("a failed import added records:\n%s", out)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	recs := fixture(t)
	dir := t.TempDir()
	a := openAt(t, filepath.Join(dir, "a.db"))
	b := openAt(t, filepath.Join(dir, "b.db"))
	if err := a.Commit(recs[:8]); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(recs[5:]); err != nil {
		t.Fatal(err)
	}
	b.Close() // a tuner holding b would keep Merge out
	st, err := a.Merge(b.Path())
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImportStats{Added: 4, Skipped: 3}); st != want {
		t.Errorf("Merge = %+v, want %+v", st, want)
	}
	if got, want := export(t, a), export(t, openFixture(t)); !bytes.Equal(got, want) {
		t.Errorf("merged export:\n%s\nwant\n%s", got, want)
	}
	if _, err := a.Merge(a.Path()); err == nil || !strings.Contains(err.Error(), "into itself") {
		t.Errorf("Merge into itself = %v", err)
	}
	missing := filepath.Join(dir, "missing.db")
	if _, err := a.Merge(missing); err == nil || err.Error() != "tunedb: no database at "+missing {
		t.Errorf("Merge of a missing file = %v", err)
	}
}

func TestPrune(t *testing.T) {
	tests := []struct {
		k       int
		removed int
		left    map[string][]string // template → records
	}{
		{1, 8, map[string][]string{
			"t1": {"vec=16,unroll=2 ok 300 @2s", "vec=16,unroll=2 ok 320 @3s", "vec=16,unroll=2 timeout 0 @8s"},
			"t2": {"vec=8,unroll=1 ok 100 @9s"},
		}},
		{2, 7, map[string][]string{
			"t1": {"vec=16,unroll=2 ok 300 @2s", "vec=16,unroll=2 ok 320 @3s", "vec=16,unroll=2 timeout 0 @8s", "vec=32,unroll=4 ok 400 @5s"},
			"t2": {"vec=8,unroll=1 ok 100 @9s"},
		}},
		{3, 5, map[string][]string{
			"t1": {"vec=16,unroll=2 ok 300 @2s", "vec=16,unroll=2 ok 320 @3s", "vec=16,unroll=2 timeout 0 @8s", "vec=32,unroll=4 ok 400 @5s",
				"vec=8,unroll=1 ok 500 @0s", "vec=8,unroll=1 ok 450 @1s"},
			"t2": {"vec=8,unroll=1 ok 100 @9s"},
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("k=%d", tt.k), func(t *testing.T) {
			db := openFixture(t)
			removed, err := db.Prune(tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if removed != tt.removed {
				t.Errorf("removed %d, want %d", removed, tt.removed)
			}
			sums, err := db.Workloads()
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != len(tt.left) {
				t.Errorf("%d workloads left, want %d (gemm had no ok record)", len(sums), len(tt.left))
			}
			for _, s := range sums {
				recs, err := db.Records(s.Workload)
				if err != nil {
					t.Fatal(err)
				}
				if want := tt.left[s.Workload.Template]; !slices.Equal(brief(recs), want) {
					t.Errorf("%s: left %q, want %q", s.Workload.Template, brief(recs), want)
				}
			}
		})
	}
	if _, err := openFixture(t).Prune(0); err == nil {
		t.Error("Prune(0) deleted everything without complaint")
	}
}

func FuzzImport(f *testing.F) {
	// Single short lines: the fuzzer minimises every input that finds new
	// code, which takes thousands of runs of an input's length.
	lines := bytes.SplitAfter(export(f, openFixture(f)), []byte("\n"))
	f.Add(lines[0])
	f.Add(lines[2])
	f.Add([]byte("\n\r\n"))
	f.Add([]byte(`{"schema":1,"workload":{},"config":{},"status":"ok","time":"2025-01-01T00:00:00Z"}`))

	// Copying an empty database is a fresh one without the cost of
	// creating it: a run without fsync is several times faster.
	dir := f.TempDir()
	db := openAt(f, filepath.Join(dir, "empty.db"))
	db.Close()
	empty, err := os.ReadFile(db.Path())
	if err != nil {
		f.Fatal(err)
	}
	fresh := func(t *testing.T, name string) *DB {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, empty, 0o644); err != nil {
			t.Fatal(err)
		}
		return openAt(t, path)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		db := fresh(t, "a.db")
		st, err := db.Import(bytes.NewReader(data))
		if err != nil && !strings.HasPrefix(err.Error(), "tunedb: import line ") {
			t.Fatalf("error without a line: %v", err)
		}
		if err != nil || st.Added == 0 {
			return
		}
		// Whatever was accepted must survive the portable form unchanged.
		out := export(t, db)
		again := fresh(t, "b.db")
		st2, err := again.Import(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("re-importing an export: %v\n%s", err, out)
		}
		if st2.Added != st.Added {
			t.Errorf("re-import added %d, first import %d", st2.Added, st.Added)
		}
		if out2 := export(t, again); !bytes.Equal(out, out2) {
			t.Errorf("export changed on re-import:\n%s\n%s", out, out2)
		}
	})
}

// endless is /dev/zero that gives up after limit bytes, so that a reader
// without a bound on lines fails the test instead of hanging it.
type endless struct{ read, limit int }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.limit {
		return 0, errors.New("read on and on: the line is not bounded")
	}
	n := min(len(p), e.limit-e.read)
	clear(p[:n])
	e.read += n
	return n, nil
}

// A line longer than MaxLineBytes is an error naming it, found after
// reading little more than the bound, whatever follows.
func TestImportLongLine(t *testing.T) {
	good := strings.SplitAfter(string(export(t, openFixture(t))), "\n")[0]
	for _, tc := range []struct {
		name string
		r    func() io.Reader
		read func(io.Reader) int
	}{
		{"endless zeros", func() io.Reader { return &endless{limit: 2 * MaxLineBytes} }, func(r io.Reader) int { return r.(*endless).read }},
		{"a long second line", func() io.Reader {
			return io.MultiReader(strings.NewReader(good), &endless{limit: 2 * MaxLineBytes})
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r()
			_, err := openTemp(t).Import(r)
			line := "line 1"
			if tc.read == nil {
				line = "line 2"
			}
			if err == nil || !strings.Contains(err.Error(), line+" is longer than 16 MiB") {
				t.Errorf("Import = %v, want an error saying %s is longer than 16 MiB", err, line)
			}
			if tc.read != nil && tc.read(r) > MaxLineBytes+1<<20 {
				t.Errorf("read %d bytes to reject a line over %d", tc.read(r), MaxLineBytes)
			}
			if _, err := ReadRecords(tc.r()); err == nil || !strings.Contains(err.Error(), line+" is longer than 16 MiB") {
				t.Errorf("ReadRecords = %v, want an error saying %s is longer than 16 MiB", err, line)
			}
		})
	}
}

// ReadRecords checks lines as Import does and returns what an import
// followed by reading every workload would: storage order, each record once.
func TestReadRecords(t *testing.T) {
	out := export(t, openFixture(t))
	lines := strings.SplitAfter(string(out), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	slices.Reverse(lines)
	recs, err := ReadRecords(strings.NewReader(strings.Join(lines, "") + "\n" + lines[0]))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, r := range recs {
		line, _ := marshal(r)
		b.Write(append(line, '\n'))
	}
	if b.String() != string(out) {
		t.Errorf("ReadRecords of the export reversed, one line twice:\n%s\nwant\n%s", b.Bytes(), out)
	}
	if _, err := ReadRecords(strings.NewReader("\n{}\n")); err == nil || !strings.HasPrefix(err.Error(), "tunedb: line 2: ") {
		t.Errorf("ReadRecords of a bad line = %v", err)
	}
}

// A record dated in the future (forged, or from a machine whose clock runs
// ahead) does not outrank the measurements made after it arrived.
func TestFutureRecordDoesNotPin(t *testing.T) {
	db := openFixture(t) // vec=16,unroll=2 at 320 ns is the best
	future := rec(t, softmax, "vec=32,unroll=4", StatusOK, 100, 0)
	future.Time, future.Schema = time.Now().Add(12*time.Hour).UTC().Truncate(time.Second), SchemaVersion
	line, _ := marshal(future)
	if _, err := db.Import(bytes.NewReader(line)); err != nil {
		t.Fatal(err)
	}
	if best, _, _ := db.Best(softmax); best.MedianNS != 100 {
		t.Fatalf("Best after importing a 100 ns record = %v, want it", best.MedianNS)
	}
	// Re-measured now, slower: the re-measurement is what counts.
	again := rec(t, softmax, "vec=32,unroll=4", StatusOK, 1000, 0)
	again.Time = time.Now().UTC()
	if err := db.Commit([]Record{again}); err != nil {
		t.Fatal(err)
	}
	top, err := db.TopK(softmax, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(top); len(got) != 3 || top[0].MedianNS != 320 || top[2].MedianNS != 1000 {
		t.Errorf("TopK after re-measuring the future-dated config = %q, want it last at 1000 ns", got)
	}
	// The record itself is kept as it came: export gives it back.
	if !bytes.Contains(export(t, db), line) {
		t.Error("the future-dated record is not exported unchanged")
	}
	// Pruning deletes what it kept about the record with the record.
	if _, err := db.Prune(1); err != nil {
		t.Fatal(err)
	}
	if best, _, err := db.Best(softmax); err != nil || best.MedianNS != 320 {
		t.Errorf("Best after prune = %v, %v", best.MedianNS, err)
	}
}

// Import and Merge refuse records dated more than a day ahead, and records
// the Check option refuses.
func TestImportChecks(t *testing.T) {
	far := rec(t, softmax, "vec=32,unroll=4", StatusOK, 100, 0)
	far.Time, far.Schema = time.Now().Add(25*time.Hour).UTC(), SchemaVersion
	farLine, _ := marshal(far)
	good := export(t, openFixture(t))
	vetoed := 1 + slices.IndexFunc(strings.Split(string(good), "\n"), func(l string) bool {
		return strings.Contains(l, `"config":{"vec":4,"unroll":1}`)
	})
	veto := func(r Record) error {
		if r.Config.String() == "vec=4,unroll=1" {
			return errors.New("vec=4 is not a knob value")
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		input  []byte
		check  func(Record) error
		line   int
		reason string
	}{
		{"a day ahead", append(append([]byte{}, good...), farLine...), nil, 13,
			"time " + far.Time.Format(time.RFC3339Nano) + " is more than a day ahead of this machine's clock"},
		{"vetoed", good, veto, vetoed, "vec=4 is not a knob value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(filepath.Join(dir, "a.db"), &Options{Check: tc.check})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			want := fmt.Sprintf("tunedb: import line %d: %s", tc.line, tc.reason)
			if _, err := db.Import(bytes.NewReader(tc.input)); err == nil || err.Error() != want {
				t.Errorf("Import = %v, want %q", err, want)
			}
			if out := export(t, db); len(out) != 0 {
				t.Errorf("a refused import added records:\n%s", out)
			}
			// The same records in a database to merge; Commit does not
			// check the clock, a tuner's records are its own.
			src := openAt(t, filepath.Join(dir, "src.db"))
			if err := src.Commit(fixture(t)); err != nil {
				t.Fatal(err)
			}
			if tc.check == nil {
				if err := src.Commit([]Record{far}); err != nil {
					t.Fatal(err)
				}
			}
			src.Close()
			if _, err := db.Merge(src.Path()); err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("Merge = %v, want %q", err, tc.reason)
			}
			if out := export(t, db); len(out) != 0 {
				t.Errorf("a refused merge added records:\n%s", out)
			}
		})
	}
}

// blocked is a writer whose writes wait until release is closed; started
// is closed at the first write.
type blocked struct {
	started, release chan struct{}
	once             bool
	buf              bytes.Buffer
}

func (b *blocked) Write(p []byte) (int, error) {
	if !b.once {
		b.once = true
		close(b.started)
		<-b.release
	}
	return b.buf.Write(p)
}

// Export reads a snapshot and writes it after releasing the database, so a
// slow reader of its output (a pager, a pipe) does not keep a tuner from
// committing.
func TestExportDoesNotHoldTheLock(t *testing.T) {
	for _, memory := range []int{32 << 20, 1 << 10} { // in memory; spilled to a file
		t.Run(fmt.Sprint(memory), func(t *testing.T) {
			defer func(m int) { spoolMemory = m }(spoolMemory)
			spoolMemory = memory
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			path := filepath.Join(t.TempDir(), "shared.db")
			w, err := Open(path, &Options{Shared: true, Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var recs []Record
			for i := range 200 {
				recs = append(recs, rec(t, softmax, fmt.Sprintf("vec=%d,unroll=1", i), StatusOK, 100, i))
			}
			if err := w.Commit(recs); err != nil {
				t.Fatal(err)
			}
			want := export(t, w)
			r, err := Open(path, &Options{Shared: true, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			out := &blocked{started: make(chan struct{}), release: make(chan struct{})}
			done := make(chan error)
			go func() { done <- r.Export(out) }()
			select {
			case <-out.started:
			case err := <-done:
				t.Fatalf("Export = %v before it wrote anything", err)
			}
			if err := w.Commit([]Record{rec(t, gemm, "mc=1", StatusOK, 100, 0)}); err != nil {
				t.Errorf("a commit while the export writes its output: %v", err)
			}
			close(out.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.buf.Bytes(), want) {
				t.Error("the export differs from one written at once")
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("export left %v in the temporary directory", entries)
			}
		})
	}
}

// TestEvidenceRoundTrip checks that the fields of schema 3 survive a commit,
// an export and an import, and that a record without them stays without.
func TestEvidenceRoundTrip(t *testing.T) {
	r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 0)
	r.Registers, r.LocalBytes = 40, 16
	r.Disturbance = &measure.Disturbance{Samples: 12, Disturbed: 3, CPUShare: 0.81, StealNS: 2500, InvoluntarySwitches: 7, Probe: 1.4}
	r.Measurer = &measure.Measurer{Name: "w1", Host: "box", Tool: "autotune test"}
	plain := rec(t, softmax, "vec=4,unroll=1", StatusOK, 120, 1)
	src := openTemp(t)
	if err := src.Commit([]Record{r, plain}); err != nil {
		t.Fatal(err)
	}
	dst := openTemp(t)
	if _, err := dst.Import(bytes.NewReader(export(t, src))); err != nil {
		t.Fatal(err)
	}
	got, err := dst.Records(softmax)
	if err != nil || len(got) != 2 {
		t.Fatalf("Records = %d, %v", len(got), err)
	}
	// Storage order is by config text: vec=4 first.
	if got[0].Disturbance != nil || got[0].Measurer != nil || got[0].Registers != 0 {
		t.Errorf("a record without evidence came back with %+v, %+v, %d", got[0].Disturbance, got[0].Measurer, got[0].Registers)
	}
	if !reflect.DeepEqual(got[1].Disturbance, r.Disturbance) || !reflect.DeepEqual(got[1].Measurer, r.Measurer) ||
		got[1].Registers != 40 || got[1].LocalBytes != 16 {
		t.Errorf("round trip = %+v, %+v, %d, %d; want %+v, %+v, 40, 16",
			got[1].Disturbance, got[1].Measurer, got[1].Registers, got[1].LocalBytes, r.Disturbance, r.Measurer)
	}
}
