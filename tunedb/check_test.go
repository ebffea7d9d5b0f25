package tunedb

import (
	"bytes"
	"strings"
	"testing"

	"go.etcd.io/bbolt"
)

// damage overwrites the stored value of the record of softmax with the
// given config text and time offset.
func damage(t *testing.T, db *DB, cfg string, sec int, value string) {
	t.Helper()
	r := rec(t, softmax, cfg, StatusOK, 1, sec)
	err := db.bolt.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketWorkloads).Bucket([]byte(softmax.Key())).Bucket(bucketRecords).
			Put(recordKey(r.Config, r.Time), []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// One damaged record makes reads fail; Check names it and ExportSalvage
// exports everything else.
func TestCheckAndSalvage(t *testing.T) {
	db := openFixture(t)
	if damage, err := db.Check(); err != nil || len(damage) != 0 {
		t.Fatalf("Check of a sound database = %v, %v", damage, err)
	}
	want := export(t, db)
	var kept []string
	for _, l := range strings.SplitAfter(string(want), "\n") {
		if !strings.Contains(l, `"config":{"vec":32,"unroll":4}`) && !strings.Contains(l, `"time":"2025-03-01T12:00:01Z"`) {
			kept = append(kept, l)
		}
	}
	r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 450, 1)
	r.Schema = SchemaVersion
	line, _ := marshal(r)
	damage(t, db, "vec=32,unroll=4", 5, `{"schema":1;"workload"`)                      // a flipped byte
	damage(t, db, "vec=8,unroll=1", 1, strings.Replace(string(line), "450", "451", 1)) // a sample changed under the median
	if _, err := db.Records(softmax); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Errorf("Records of a damaged workload = %v", err)
	}
	got, err := db.Check()
	if err != nil || len(got) != 2 {
		t.Fatalf("Check = %v, %v; want the 2 damaged records", got, err)
	}
	if s := got[0].String(); !strings.Contains(s, `workload "softmax 4096x1024`) || !strings.Contains(s, "record vec=32,unroll=4 at 2025-03-01T12:00:05Z: invalid character ';'") {
		t.Errorf("first damage: %s", s)
	}
	if s := got[1].String(); !strings.Contains(s, "record vec=8,unroll=1 at 2025-03-01T12:00:01Z: median_ns 450 is not the median of the samples, 451") {
		t.Errorf("second damage: %s", s)
	}
	var b bytes.Buffer
	skipped, err := db.ExportSalvage(&b)
	if err != nil || len(skipped) != 2 {
		t.Fatalf("ExportSalvage skipped %v, %v", skipped, err)
	}
	if b.String() != strings.Join(kept, "") {
		t.Errorf("salvaged\n%s\nwant\n%s", b.String(), strings.Join(kept, ""))
	}
}

// A damaged range is listed by Check and left out by ExportSalvage.
func TestCheckAndSalvageRanges(t *testing.T) {
	db := openFixture(t)
	other := testRange(1)
	other.Hi = []int{8192, 1024}
	for _, r := range []Range{testRange(0), other} {
		if err := db.SaveRange(r); err != nil {
			t.Fatal(err)
		}
	}
	var kept []string
	for _, l := range strings.SplitAfter(string(export(t, db)), "\n") {
		if !strings.Contains(l, `"hi":[8192,1024]`) {
			kept = append(kept, l)
		}
	}
	err := db.bolt.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketRanges).Put(other.key(), []byte(`{"workload":`)) })
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Check()
	if err != nil || len(got) != 1 || !strings.Contains(got[0].String(), "record range up to 8192x1024: unexpected end of JSON input") {
		t.Fatalf("Check = %v, %v; want the damaged range", got, err)
	}
	var b bytes.Buffer
	skipped, err := db.ExportSalvage(&b)
	if err != nil || len(skipped) != 1 {
		t.Fatalf("ExportSalvage skipped %v, %v", skipped, err)
	}
	if b.String() != strings.Join(kept, "") {
		t.Errorf("salvaged\n%s\nwant\n%s", b.String(), strings.Join(kept, ""))
	}
}
