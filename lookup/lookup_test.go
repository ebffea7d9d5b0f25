package lookup_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/lookup"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// A fixed machine, so that no test depends on the one it runs on.
var target = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Test CPU", Cores: 2,
	ISA: device.ISA{SSE42: true, AVX2: true, FMA: true}}}

var fingerprint = target.Fingerprint()

// softmaxTemplate is the CPU template of softmax from the registry: the
// tests of this package import no op package, so that they also show that
// importing lookup is enough (imports_test.go).
func softmaxTemplate(t testing.TB) kernels.Template {
	t.Helper()
	tmpl, ok := kernels.TemplateFor("softmax", kernels.CPU)
	if !ok {
		t.Fatalf("no cpu template of softmax registered: %v", kernels.Names())
	}
	return tmpl
}

func config(t testing.TB, shape []int, text string) schedule.Config {
	t.Helper()
	c, err := softmaxTemplate(t).Space(shape, target).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// record is an ok record of softmax at shape with the given median.
func record(t testing.TB, shape []int, text, version string, median float64) tunedb.Record {
	return tunedb.Record{
		Workload: tunedb.Workload{Op: "softmax", Shape: shape, DType: "f32", Device: fingerprint, Template: version},
		Config:   config(t, shape, text), Status: tunedb.StatusOK,
		MedianNS: median, P20NS: median, P80NS: median, SamplesNS: []float64{median, median, median},
		BuildNS: 1, RunNS: 1, Time: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), Tool: "test",
	}
}

const (
	fast = "vec=8,unroll=2,algo=online,exp=poly5,threads=2,rows_per_chunk=4,code=go,prefetch=false,convert=block,store=cached"
	slow = "vec=1,unroll=1,algo=threepass,exp=f64,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached"
)

// records tunes 1024x1024 (fast beats slow) and 64x4096 (slow alone), and
// has a record of another template version at 512x512 that must not count.
func records(t testing.TB) []tunedb.Record {
	v := softmaxTemplate(t).Version
	return []tunedb.Record{
		record(t, []int{1024, 1024}, slow, v, 900),
		record(t, []int{1024, 1024}, fast, v, 100),
		record(t, []int{64, 4096}, slow, v, 50),
		record(t, []int{512, 512}, fast, "softmax-0-old", 1),
	}
}

func export(t *testing.T, recs []tunedb.Record) []byte {
	t.Helper()
	db, err := tunedb.Open(filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Commit(recs); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := db.Export(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tables returns the same records as a database and as a log.
func tables(t *testing.T) map[string]*lookup.Table {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(records(t)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fromDB, err := lookup.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromLog, err := lookup.Load(bytes.NewReader(export(t, records(t))))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*lookup.Table{"database": fromDB, "log": fromLog}
}

func TestBest(t *testing.T) {
	def := softmaxTemplate(t).Default([]int{7, 13}, target)
	tests := []struct {
		name   string
		shape  []int
		fp     string
		want   string // rule and shape, as Answer.String
		config string
	}{
		{"exact", []int{1024, 1024}, fingerprint, "exact 1024x1024", fast},
		{"exact, the slower config's shape", []int{64, 4096}, fingerprint, "exact 64x4096", slow},
		{"nearest", []int{1000, 1100}, fingerprint, "nearest 1024x1024", fast},
		{"nearest by ratio, not difference", []int{32, 8192}, fingerprint, "nearest 64x4096", slow},
		// 512x512 was tuned only by another template version: its record
		// measured other code, and the nearest current one answers.
		{"other versions do not count", []int{512, 512}, fingerprint, "nearest 1024x1024", fast},
		{"another device is untuned", []int{1024, 1024}, "cpu/Other CPU/sse4.2+avx2+fma/2c", "default", ""},
	}
	for name, table := range tables(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				a, err := table.Best("softmax", tt.shape, "f32", tt.fp)
				if err != nil {
					t.Fatal(err)
				}
				if a.String() != tt.want {
					t.Errorf("answered by %q, want %q", a, tt.want)
				}
				switch {
				case tt.config != "" && a.Config.String() != tt.config:
					t.Errorf("config %s, want %s", a.Config, tt.config)
				case tt.config != "" && (a.Record == nil || !a.Record.Config.Equal(a.Config)):
					t.Errorf("record %+v does not hold config %s", a.Record, a.Config)
				case tt.config == "" && (a.Record != nil || a.Shape != nil || a.Config.Len() == 0):
					t.Errorf("default answer %+v has a record or shape, or no config", a)
				}
			})
		}
		t.Run(name+"/default is the template's", func(t *testing.T) {
			empty, err := lookup.Load(strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			a, err := empty.Best("softmax", []int{7, 13}, "f32", fingerprint)
			if err != nil || a.Rule != lookup.Default || !a.Config.Equal(def) {
				t.Errorf("Best on no records = %+v, %v; want the default %s", a, err, def)
			}
		})
	}
}

func TestBestErrors(t *testing.T) {
	table := tables(t)["log"]
	for _, tt := range []struct {
		op    string
		shape []int
		fp    string
		want  string
	}{
		{"conv", []int{1, 1}, fingerprint, `unknown op "conv"`},
		{"softmax", []int{1, 2, 3}, fingerprint, "3 dimensions"},
		{"softmax", []int{0, 2}, fingerprint, "R is 0"},
		{"softmax", []int{4, 4}, "tpu/v5", "cannot rebuild the target"},
	} {
		if _, err := table.Best(tt.op, tt.shape, "f32", tt.fp); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Best(%s, %v, %s) error = %v, want %q", tt.op, tt.shape, tt.fp, err, tt.want)
		}
	}
	if _, err := table.Best("softmax", []int{4, 4}, "f64", fingerprint); err == nil || !strings.Contains(err.Error(), "op softmax has no f64 kernels (it has: f32, bf16, f16)") {
		t.Errorf("Best of a dtype softmax lacks: %v", err)
	}
}

// Answers are cached, and a caller that changes an answer's shape changes
// no later answer; the record is shared, as the doc says.
func TestCachedAnswers(t *testing.T) {
	table := tables(t)["log"]
	a, _ := table.Best("softmax", []int{1000, 1100}, "f32", fingerprint)
	a.Shape[0] = -1
	b, _ := table.Best("softmax", []int{1000, 1100}, "f32", fingerprint)
	if b.Shape[0] != 1024 || b.Record != a.Record {
		t.Errorf("second answer %+v: want shape 1024x1024 and the first answer's record", b)
	}
	if c, _ := table.Best("softmax", []int{1000, 1101}, "f32", fingerprint); c.Rule != lookup.Nearest || &c.Shape[0] == &b.Shape[0] {
		t.Errorf("another question's answer %+v", c)
	}
}

// Open never creates what it is asked to read.
func TestOpenMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such.db")
	if _, err := lookup.Open(path, nil); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no database at "+path) {
		t.Errorf("Open of a missing path: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open created %s", filepath.Dir(path))
	}
}

func TestLoadRejectsABadLog(t *testing.T) {
	log := export(t, records(t))
	bad := append(slices.Clone(log), []byte("{\"op\": 3}\n")...)
	if _, err := lookup.Load(bytes.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "lookup: ") {
		t.Errorf("Load of a bad line: %v", err)
	}
}

// BenchmarkCachedBest is a repeated lookup: a map read under a read lock.
func BenchmarkCachedBest(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tune.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Commit(records(b)); err != nil {
		b.Fatal(err)
	}
	db.Close()
	table, err := lookup.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	shape := []int{1000, 1100}
	if _, err := table.Best("softmax", shape, "f32", fingerprint); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := table.Best("softmax", shape, "f32", fingerprint); err != nil {
			b.Fatal(err)
		}
	}
}

// Of the records of a shape, the preferred toolchain's answer; without
// one, another toolchain's, which the answer names. A record of schema 1,
// of an unknown toolchain, still answers.
func TestPreferToolchain(t *testing.T) {
	shape := []int{1024, 1024}
	v := softmaxTemplate(t).Version
	old := record(t, shape, fast, v, 100) // unknown toolchain: written before records named one
	mine := record(t, shape, slow, v, 900)
	mine.Workload.Toolchain = "go1.26.0"
	mine.Time = old.Time.Add(-time.Hour) // older, so only the preference picks it
	theirs := record(t, []int{64, 4096}, slow, v, 50)
	theirs.Workload.Toolchain = "go1.25.0"
	mem := tunedb.NewMemory()
	if err := mem.Commit([]tunedb.Record{old, mine, theirs}); err != nil {
		t.Fatal(err)
	}
	table, err := lookup.New(mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		prefer    string
		shape     []int
		config    string
		toolchain string
	}{
		{"this toolchain's", "go1.26.0", shape, slow, "go1.26.0"},
		{"no preference: the latest", "", shape, fast, ""},
		{"another toolchain: the latest", "go1.27.0", shape, fast, ""},
		{"only another toolchain's", "go1.26.0", []int{64, 4096}, slow, "go1.25.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := table.Prefer(tt.prefer).Best("softmax", tt.shape, dtype.F32, fingerprint)
			if err != nil || a.Rule != lookup.Exact || a.Config.String() != tt.config || a.Toolchain() != tt.toolchain {
				t.Errorf("Best = %v %s of toolchain %q, %v; want exact %s of %q", a, a.Config, a.Toolchain(), err, tt.config, tt.toolchain)
			}
		})
	}
}

// rangeTables returns, as a database and as a log, records of 64x1024
// (slow wins), 1024x1024 and 4096x1024 (fast wins), and a tuned range
// 64..4096x1024 whose buckets are 64x1024, 4096x1024 and 256x1024, which
// has no record.
func rangeTables(t *testing.T) map[string]*lookup.Table {
	v := softmaxTemplate(t).Version
	recs := []tunedb.Record{
		record(t, []int{64, 1024}, slow, v, 10),
		record(t, []int{1024, 1024}, fast, v, 100),
		record(t, []int{4096, 1024}, fast, v, 400),
	}
	lo := recs[0].Workload
	rng := tunedb.Range{Workload: lo, Hi: []int{4096, 1024}, Buckets: [][]int{{64, 1024}, {256, 1024}, {4096, 1024}}, Trials: 40, Time: recs[0].Time}
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(recs); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveRange(rng); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := db.Export(&log); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fromDB, err := lookup.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromLog, err := lookup.Load(&log)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*lookup.Table{"database": fromDB, "log": fromLog}
}

// A shape inside a tuned range is served by the winner of the range's
// nearest bucket, even where another tuned shape is nearer; a shape
// outside it, by the nearest tuned shape.
func TestBestBucket(t *testing.T) {
	for name, table := range rangeTables(t) {
		for _, tt := range []struct {
			shape  []int
			want   string
			config string
		}{
			{[]int{1024, 1024}, "exact 1024x1024", fast},
			// 1024x1024 is nearer, but it is no bucket of the range.
			{[]int{900, 1024}, "bucket 4096x1024 of 64..4096x1024", fast},
			// 256x1024, a bucket without a record, serves nothing: 64x1024
			// is the nearest bucket that has one.
			{[]int{200, 1024}, "bucket 64x1024 of 64..4096x1024", slow},
			{[]int{32, 1024}, "nearest 64x1024", slow},
			{[]int{8192, 1024}, "nearest 4096x1024", fast},
		} {
			t.Run(name+"/"+kernels.FormatShape(tt.shape), func(t *testing.T) {
				a, err := table.Best("softmax", tt.shape, "f32", fingerprint)
				if err != nil {
					t.Fatal(err)
				}
				if a.String() != tt.want || a.Config.String() != tt.config {
					t.Errorf("answered by %q with %s, want %q with %s", a, a.Config, tt.want, tt.config)
				}
				if (a.Rule == lookup.Bucket) != (a.Range != nil) {
					t.Errorf("rule %s with range %v", a.Rule, a.Range)
				}
			})
		}
	}
}
