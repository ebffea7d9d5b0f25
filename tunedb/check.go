package tunedb

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"go.etcd.io/bbolt"
)

// Damage is a stored workload or record that cannot be read back as it was
// stored: a flipped byte, a truncated value, a record under another's key.
type Damage struct {
	Workload string // the workload's key
	Record   string // the record's key as "CONFIG at TIME"; "" for the workload itself
	Err      string
}

func (d Damage) String() string {
	if d.Record == "" {
		return fmt.Sprintf("workload %q: %s", d.Workload, d.Err)
	}
	return fmt.Sprintf("workload %q, record %s: %s", d.Workload, d.Record, d.Err)
}

// Check reads every workload and record and returns the damaged ones: those
// that do not decode, do not pass the checks a record passes when it is
// stored, or are stored under a key that is not theirs. Any one of them
// makes the reads that meet it fail; ExportSalvage saves the rest.
func (db *DB) Check() ([]Damage, error) {
	var damage []Damage
	err := db.view(func(tx *bbolt.Tx) (err error) {
		damage, err = db.salvage(tx, func(Record) error { return nil })
		if err != nil {
			return err
		}
		hurt, err := salvageRanges(tx, func(Range) error { return nil })
		damage = append(damage, hurt...)
		return err
	})
	return damage, err
}

// ExportSalvage is Export that skips damaged records (see Check) instead of
// failing on the first, and returns what it skipped.
func (db *DB) ExportSalvage(w io.Writer) ([]Damage, error) {
	var sp spool
	defer sp.discard()
	var damage []Damage
	err := db.view(func(tx *bbolt.Tx) (err error) {
		damage, err = db.salvage(tx, func(r Record) error { return sp.line(r) })
		if err != nil {
			return err
		}
		hurt, err := salvageRanges(tx, func(r Range) error { return sp.line(rangeLine{Schema: SchemaVersion, Range: &r}) })
		damage = append(damage, hurt...)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := sp.copyTo(w); err != nil {
		return nil, fmt.Errorf("tunedb: export: %w", err)
	}
	return damage, nil
}

// salvage calls fn with every sound record, in Export's order, and returns
// the damage it met.
func (db *DB) salvage(tx *bbolt.Tx, fn func(Record) error) ([]Damage, error) {
	root := tx.Bucket(bucketWorkloads)
	if root == nil {
		return nil, nil
	}
	var damage []Damage
	err := root.ForEach(func(wk, v []byte) error {
		hurt := func(rec string, err error) { damage = append(damage, Damage{string(wk), rec, err.Error()}) }
		wb := root.Bucket(wk)
		if wb == nil {
			hurt("", fmt.Errorf("not a bucket"))
			return nil
		}
		var w Workload
		if err := json.Unmarshal(wb.Get(keyWorkload), &w); err != nil {
			hurt("", err)
		} else if err := w.Validate(); err != nil {
			hurt("", err)
		} else if w.Key() != string(wk) {
			hurt("", fmt.Errorf("stored under the key of another workload, %q", w.Key()))
		}
		rb := wb.Bucket(bucketRecords)
		if rb == nil {
			hurt("", fmt.Errorf("no records bucket"))
			return nil
		}
		return rb.ForEach(func(k, v []byte) error {
			var r Record
			err := json.Unmarshal(v, &r)
			if err == nil {
				err = r.check()
			}
			if err == nil && (r.Workload.Key() != string(wk) || !bytes.Equal(recordKey(r.Config, r.Time), k)) {
				err = fmt.Errorf("stored under a key that is not its own (config %s at %s)", r.Config, r.Time.Format(time.RFC3339Nano))
			}
			if err != nil {
				hurt(describeKey(k), err)
				return nil
			}
			return fn(r)
		})
	})
	return damage, err
}

// salvageRanges calls fn with every sound saved range, in key order, and
// returns the damaged ones.
func salvageRanges(tx *bbolt.Tx, fn func(Range) error) ([]Damage, error) {
	b := tx.Bucket(bucketRanges)
	if b == nil {
		return nil, nil
	}
	var damage []Damage
	err := b.ForEach(func(k, v []byte) error {
		var r Range
		err := json.Unmarshal(v, &r)
		if err == nil {
			err = r.Validate()
		}
		if err == nil && !bytes.Equal(r.key(), k) {
			err = fmt.Errorf("stored under a key that is not its own (range %s)", r)
		}
		if err != nil {
			wk, hi, _ := bytes.Cut(k, []byte{0})
			damage = append(damage, Damage{Workload: string(wk), Record: "range up to " + string(hi), Err: err.Error()})
			return nil
		}
		return fn(r)
	})
	return damage, err
}

// describeKey writes a record key as "CONFIG at TIME".
func describeKey(k []byte) string {
	if len(k) < 9 || k[len(k)-9] != 0 {
		return fmt.Sprintf("%q", k)
	}
	t := time.Unix(0, int64(binary.BigEndian.Uint64(k[len(k)-8:]))).UTC()
	return string(k[:len(k)-9]) + " at " + t.Format(time.RFC3339Nano)
}
