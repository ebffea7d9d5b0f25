package tunedb

import (
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/autotune-dev/autotune/dtype"
)

// oldLine is a record as autotune wrote it before workloads named a
// toolchain (schema 1): it must keep importing, as f32 of an unknown
// toolchain, under the key it always had.
const oldLine = `{"schema":1,"workload":{"op":"softmax","shape":[64,33],"dtype":"f32","device":"` + device + `","template":"t1"},` +
	`"config":{"vec":8,"unroll":1},"status":"ok","samples_ns":[110,100,90],"median_ns":100,"p20_ns":90,"p80_ns":110,` +
	`"build_ns":1000000,"run_ns":2000000,"time":"2025-03-01T12:00:00Z","tool":"autotune v0.1"}`

func TestImportSchema1(t *testing.T) {
	db := openTemp(t)
	if st, err := db.Import(strings.NewReader(oldLine + "\n")); err != nil || st.Added != 1 {
		t.Fatalf("Import = %+v, %v", st, err)
	}
	found, err := db.Find("softmax", []int{64, 33}, dtype.F32, device)
	if err != nil || len(found) != 1 {
		t.Fatalf("Find = %v, %v; want the old record's workload", found, err)
	}
	w := found[0]
	if w.DType != dtype.F32 || w.Toolchain != "" {
		t.Errorf("workload %+v: want f32 of an unknown toolchain", w)
	}
	if want := "softmax 64x33 f32 " + device + " t1"; w.Key() != want {
		t.Errorf("Key = %q, want the key of schema 1, %q", w.Key(), want)
	}
	best, ok, err := db.Best(w)
	if err != nil || !ok || best.MedianNS != 100 || best.Schema != 1 {
		t.Errorf("Best = %+v, %v, %v", best, ok, err)
	}
	// A tuner with a known toolchain writes beside it, under another key.
	nw := w
	nw.Toolchain = "go1.26.0"
	r := rec(t, nw, "vec=4,unroll=1", StatusOK, 80, 5)
	if err := db.Commit([]Record{r}); err != nil {
		t.Fatal(err)
	}
	if found, err = db.Find("softmax", []int{64, 33}, dtype.F32, device); err != nil || len(found) != 2 {
		t.Errorf("Find after a new toolchain's record = %v, %v; want both", found, err)
	}
}

// A database file of schema 1 opens, its records read, and a writer marks
// it schema 2 so that an older autotune refuses it whole; a reader leaves
// it as it is.
func TestOpenSchema1(t *testing.T) {
	path := t.TempDir() + "/tune.db"
	db := openAt(t, path)
	if _, err := db.Import(strings.NewReader(oldLine)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	setSchema := func(v string) {
		b, err := bbolt.Open(path, 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	schema := func() string {
		b, err := bbolt.Open(path, 0o644, &bbolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var v string
		b.View(func(tx *bbolt.Tx) error { v = string(tx.Bucket(bucketMeta).Get(keySchema)); return nil })
		return v
	}
	setSchema("1")
	for _, tt := range []struct {
		name     string
		opts     *Options
		wantMeta string
	}{
		{"read-only", &Options{ReadOnly: true}, "1"},
		{"writable", nil, strconv.Itoa(SchemaVersion)},
	} {
		db, err := Open(path, tt.opts)
		if err != nil {
			t.Fatalf("%s: Open: %v", tt.name, err)
		}
		w := Workload{Op: "softmax", Shape: []int{64, 33}, DType: dtype.F32, Device: device, Template: "t1"}
		recs, err := db.Records(w)
		db.Close()
		if err != nil || len(recs) != 1 {
			t.Errorf("%s: Records = %d, %v; want the schema 1 record", tt.name, len(recs), err)
		}
		if got := schema(); got != tt.wantMeta {
			t.Errorf("%s: schema after Open = %s, want %s", tt.name, got, tt.wantMeta)
		}
	}
}

func TestWorkloadToolchain(t *testing.T) {
	base := Workload{Op: "softmax", Shape: []int{8, 8}, DType: dtype.F32, Device: "cpu/a b/avx2/2c", Template: "t"}
	with := base
	with.Toolchain = "go1.26.0"
	if base.Key() == with.Key() || !base.SameButToolchain(with) || base.equal(with) {
		t.Errorf("keys %q and %q: want two workloads that differ only in toolchain", base.Key(), with.Key())
	}
	// A device with spaces and a template that looks like a toolchain
	// still give another key.
	tricky := base
	tricky.Device, tricky.Template = "cpu/a b/avx2/2c t", "go1.26.0"
	if tricky.Key() == with.Key() {
		t.Errorf("%+v and %+v share the key %q", tricky, with, with.Key())
	}
	for _, tc := range []string{"go 1.26", "go1.26\n", "go1.26\t"} {
		bad := base
		bad.Toolchain = tc
		if err := bad.Validate(); err == nil {
			t.Errorf("toolchain %q: Validate accepted it", tc)
		}
	}
	if err := with.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", with, err)
	}
}

func TestModelKeyDType(t *testing.T) {
	old := string(ModelKey{Op: "softmax", Device: device, Template: "v1"}.bytes())
	for _, tt := range []struct {
		dt   dtype.DType
		same bool
	}{{"", true}, {dtype.F32, true}, {"bf16", false}} {
		k := ModelKey{Op: "softmax", Device: device, Template: "v1", DType: tt.dt}
		if got := string(k.bytes()) == old; got != tt.same {
			t.Errorf("dtype %q: key %q, the key of models saved before keys named a dtype %q: same = %v, want %v", tt.dt, k.bytes(), old, got, tt.same)
		}
	}
}

func TestPreferToolchain(t *testing.T) {
	w := func(shape int, tc string) Workload {
		return Workload{Op: "softmax", Shape: []int{shape}, DType: dtype.F32, Device: device, Template: "t", Toolchain: tc}
	}
	sum := func(w Workload, sec int) Summary {
		if sec < 0 {
			return Summary{Workload: w}
		}
		r := rec(t, w, "vec=4,unroll=1", StatusOK, 100, sec)
		return Summary{Workload: w, Best: &r}
	}
	for _, tt := range []struct {
		name string
		sums []Summary
		tc   string
		want []string // toolchain of each answer, in order
	}{
		{"ours over a newer other", []Summary{sum(w(1, "go1.25.0"), 9), sum(w(1, "go1.26.0"), 1)}, "go1.26.0", []string{"go1.26.0"}},
		{"unknown when alone", []Summary{sum(w(1, ""), 1)}, "go1.26.0", []string{""}},
		{"the latest of others", []Summary{sum(w(1, ""), 1), sum(w(1, "go1.25.0"), 5)}, "go1.26.0", []string{"go1.25.0"}},
		{"no preference: the latest", []Summary{sum(w(1, "go1.26.0"), 9), sum(w(1, ""), 1)}, "", []string{"go1.26.0"}},
		{"ours without a best loses", []Summary{sum(w(1, "go1.26.0"), -1), sum(w(1, ""), 1)}, "go1.26.0", []string{""}},
		{"shapes apart", []Summary{sum(w(1, ""), 1), sum(w(2, "go1.26.0"), 1)}, "go1.26.0", []string{"", "go1.26.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range PreferToolchain(tt.sums, tt.tc) {
				got = append(got, s.Workload.Toolchain)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || len(got) != len(tt.want) {
				t.Errorf("PreferToolchain = %q, want %q", got, tt.want)
			}
		})
	}
}
