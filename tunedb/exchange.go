package tunedb

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"go.etcd.io/bbolt"
)

// Export writes every record as JSON Lines, one Record per line: workloads by
// Key, then each workload's records in storage order; then every saved
// Range, one per line, in key order. The order depends only on the
// content, so exports of equal databases are equal files. It copies
// everything in one read transaction and writes it to w after it, so a
// slow w never keeps a writer waiting; a copy over spoolMemory goes to a
// temporary file, removed before Export returns.
func (db *DB) Export(w io.Writer) error {
	var sp spool
	defer sp.discard()
	err := db.view(func(tx *bbolt.Tx) error {
		// Encoding the decoded record, rather than copying the stored bytes,
		// means every line is a valid Record of this schema.
		err := db.eachRecord(tx, func(r Record) error { return sp.line(r) })
		if err != nil {
			return err
		}
		return db.eachRange(tx, func(r Range) error { return sp.line(rangeLine{Schema: SchemaVersion, Range: &r}) })
	})
	if err != nil {
		return err
	}
	if err := sp.copyTo(w); err != nil {
		return fmt.Errorf("tunedb: export: %w", err)
	}
	return nil
}

// spoolMemory is how much of an export is kept in memory before the rest
// goes to a temporary file.
var spoolMemory = 32 << 20

// spool holds bytes in memory, then in a temporary file.
type spool struct {
	mem  bytes.Buffer
	file *os.File
}

// line writes v as a line of JSON Lines.
func (s *spool) line(v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("tunedb: export: %w", err)
	}
	if err := s.write(append(b, '\n')); err != nil {
		return fmt.Errorf("tunedb: export: %w", err)
	}
	return nil
}

func (s *spool) write(p []byte) error {
	if s.file == nil && s.mem.Len()+len(p) > spoolMemory {
		f, err := os.CreateTemp("", "autotune-export-*")
		if err != nil {
			return err
		}
		s.file = f
		if _, err := s.mem.WriteTo(f); err != nil {
			return err
		}
	}
	if s.file != nil {
		_, err := s.file.Write(p)
		return err
	}
	s.mem.Write(p)
	return nil
}

func (s *spool) copyTo(w io.Writer) error {
	if s.file == nil {
		_, err := s.mem.WriteTo(w)
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, bufio.NewReaderSize(s.file, 1<<16))
	return err
}

// discard removes the temporary file, if any.
func (s *spool) discard() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
}

// ImportStats counts the records and ranges of an import or merge.
type ImportStats struct {
	Added   int
	Skipped int // already present: same workload, config and time
	// Ranges counts the ranges stored: new ones, and those newer than the
	// saved range of the same workload and corners, which they replace.
	Ranges int
}

// MaxLineBytes bounds a line of JSON Lines. The largest valid record
// (MaxErrorBytes of error, MaxSamples samples) is far smaller; a longer line
// is damage or a file that is not JSON Lines, and is refused before it fills
// the memory.
const MaxLineBytes = 16 << 20

// Import adds the records and ranges of a JSON Lines stream written by
// Export, in one transaction: on error nothing is added. Records already
// present are skipped, never replaced, so importing the same file twice is
// harmless; a range replaces the saved one of its workload and corners
// only when it is newer (Range.Time). Empty lines are ignored; a line
// longer than MaxLineBytes is an error.
func (db *DB) Import(r io.Reader) (ImportStats, error) {
	now := time.Now()
	es, rs, err := readEntries(r, func(r Record) error { return db.admit(r, now) }, now)
	if err != nil {
		return ImportStats{}, fmt.Errorf("tunedb: import %w", err)
	}
	return db.add(es, rs, now)
}

// maxAhead is how far ahead of this machine's clock an imported record may
// be dated: clocks differ by seconds, and a record of next week is damage or
// forgery. Within it, ranking still counts a record as measured no later
// than when it was added (see TopK).
const maxAhead = 24 * time.Hour

// admit is what Import and Merge check on top of the record's form: its
// date, and Options.Check.
func (db *DB) admit(r Record, now time.Time) error {
	if err := checkAhead(r.Time, now); err != nil {
		return err
	}
	if db.check != nil {
		return db.check(r)
	}
	return nil
}

// checkAhead refuses a time more than maxAhead after now.
func checkAhead(t, now time.Time) error {
	if t.After(now.Add(maxAhead)) {
		return fmt.Errorf("time %s is more than a day ahead of this machine's clock", t.Format(time.RFC3339Nano))
	}
	return nil
}

// ReadRecords reads a JSON Lines stream as Import does, checking every line
// the same way, without a database: it returns what importing the stream
// into an empty database and reading back every record would, in storage
// order (workloads by Key, then by config and time), each identity once.
// The stream's ranges are checked and left out; ReadLog returns them too.
func ReadRecords(r io.Reader) ([]Record, error) {
	recs, _, err := ReadLog(r)
	return recs, err
}

// ReadLog is ReadRecords that also returns the stream's ranges, as
// importing it into an empty database and reading back Ranges would: in
// key order, the newest of each workload and corners.
func ReadLog(r io.Reader) ([]Record, []Range, error) {
	es, rs, err := readEntries(r, nil, time.Now())
	if err != nil {
		return nil, nil, fmt.Errorf("tunedb: %w", err)
	}
	// Stable, so that the first of two records of one identity is kept, as
	// Import keeps it.
	slices.SortStableFunc(es, func(a, b entry) int {
		return cmp.Or(bytes.Compare(a.wkey, b.wkey), bytes.Compare(a.key, b.key))
	})
	recs := make([]Record, 0, len(es))
	for i, e := range es {
		if i > 0 && bytes.Equal(e.wkey, es[i-1].wkey) && bytes.Equal(e.key, es[i-1].key) {
			es[i] = es[i-1]
			continue
		}
		recs = append(recs, e.rec)
	}
	return recs, newestRanges(rs), nil
}

// readEntries parses every line of r, and admits each record with admit
// unless it is nil, and each range dated no later than a day after now.
// Its errors start with "line N".
func readEntries(r io.Reader, admit func(Record) error, now time.Time) ([]entry, []Range, error) {
	var es []entry
	var rs []Range
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == errLongLine {
			return nil, nil, fmt.Errorf("line %d is longer than %d MiB", n, MaxLineBytes>>20)
		}
		if err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			e, rng, perr := parseLine(line)
			switch {
			case perr != nil:
			case rng != nil:
				perr = checkAhead(rng.Time, now)
				rs = append(rs, *rng)
			case admit != nil:
				perr = admit(e.rec)
			}
			if perr != nil {
				return nil, nil, fmt.Errorf("line %d: %w", n, perr)
			}
			if rng == nil {
				es = append(es, e)
			}
		}
		if err == io.EOF {
			return es, rs, nil
		}
	}
}

var errLongLine = errors.New("line too long")

// readLine returns the next line of br with its newline, or what is left
// before io.EOF. A line longer than MaxLineBytes is errLongLine, returned
// once that much of it is read.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLineBytes {
			return nil, errLongLine
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// rangeLine is a line of JSON Lines that holds a Range rather than a
// Record: {"schema":4,"range":{...}}. Ranges came with schema 4.
type rangeLine struct {
	Schema int    `json:"schema"`
	Range  *Range `json:"range"`
}

// rangeSchema is the first schema whose exports hold ranges.
const rangeSchema = 4

// anyLine is what a line of JSON Lines may hold: a Record's members, or
// a rangeLine's.
type anyLine struct {
	Record
	Range *Range `json:"range"`
}

// parseLine reads a line: a record (rng nil), or a range.
func parseLine(line []byte) (e entry, rng *Range, err error) {
	var l anyLine
	if err := decodeStrict(line, &l); err != nil {
		return entry{}, nil, err
	}
	if l.Range == nil {
		e, err := prepare(l.Record)
		return e, nil, err
	}
	// A range line holds nothing of a record but its schema.
	var rl rangeLine
	if err := decodeStrict(line, &rl); err != nil {
		return entry{}, nil, err
	}
	switch {
	case rl.Schema > SchemaVersion:
		return entry{}, nil, fmt.Errorf("range schema %d is newer than this autotune's (%d): upgrade autotune", rl.Schema, SchemaVersion)
	case rl.Schema < rangeSchema:
		return entry{}, nil, fmt.Errorf("range schema %d: ranges came with schema %d", rl.Schema, rangeSchema)
	}
	rl.Range.Time = rl.Range.Time.UTC()
	if err := rl.Range.Validate(); err != nil {
		return entry{}, nil, err
	}
	return entry{}, rl.Range, nil
}

// decodeStrict decodes one JSON value, the whole of line, into v.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	// Within one schema version, an unknown field is a typo or damage.
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the record")
	}
	return nil
}

// add stores es and rs in one transaction, skipping records already
// present and ranges no newer than the saved ones.
func (db *DB) add(es []entry, rs []Range, now time.Time) (ImportStats, error) {
	var st ImportStats
	if len(es) == 0 && len(rs) == 0 {
		return st, nil
	}
	err := db.update(func(tx *bbolt.Tx) error {
		for _, r := range rs {
			stored, err := putNewerRange(tx, r)
			if err != nil {
				return err
			}
			if stored {
				st.Ranges++
			}
		}
		for i := range es {
			old, err := db.put(tx, &es[i], now)
			if err != nil {
				return err
			}
			if old != nil {
				st.Skipped++
			} else {
				st.Added++
			}
		}
		return nil
	})
	if err != nil {
		return ImportStats{}, err
	}
	return st, nil
}

// Merge adds every record and range of the tuning database at path, as
// Import does. It opens that database read-only, so it may be in use by
// readers but not by a tuner.
func (db *DB) Merge(path string) (ImportStats, error) {
	if a, err := os.Stat(db.path); err == nil {
		if b, err := os.Stat(path); err == nil && os.SameFile(a, b) {
			// Our own lock would otherwise report it as in use.
			return ImportStats{}, fmt.Errorf("tunedb: cannot merge %s into itself", path)
		}
	}
	other, err := Open(path, &Options{Timeout: db.timeout, ReadOnly: true})
	if err != nil {
		return ImportStats{}, err
	}
	defer other.Close()
	var es []entry
	now := time.Now()
	err = other.view(func(tx *bbolt.Tx) error {
		return other.eachRecord(tx, func(r Record) error {
			e, err := prepare(r)
			if err == nil {
				err = db.admit(e.rec, now)
			}
			if err != nil {
				return fmt.Errorf("tunedb: merge %s: %s config %s at %s: %w", path, r.Workload.Key(), r.Config,
					r.Time.Format(time.RFC3339Nano), err)
			}
			es = append(es, e)
			return nil
		})
	})
	if err != nil {
		return ImportStats{}, err
	}
	rs, err := other.Ranges()
	if err != nil {
		return ImportStats{}, err
	}
	return db.add(es, rs, now)
}

// eachRecord calls fn with every record: workloads by Key, then records in
// storage order.
func (db *DB) eachRecord(tx *bbolt.Tx, fn func(Record) error) error {
	root := tx.Bucket(bucketWorkloads)
	if root == nil {
		return nil
	}
	return root.ForEachBucket(func(k []byte) error {
		rb, err := db.records(tx, k)
		if err != nil {
			return err
		}
		return rb.ForEach(func(k, v []byte) error {
			r, err := db.decodeAt(k, v)
			if err != nil {
				return err
			}
			return fn(r)
		})
	})
}
