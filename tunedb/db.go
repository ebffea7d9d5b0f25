package tunedb

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/autotune-dev/autotune/dtype"
)

var (
	bucketMeta      = []byte("meta")
	bucketWorkloads = []byte("workloads")
	bucketRecords   = []byte("records")
	bucketAdded     = []byte("added")
	keyFormat       = []byte("format")
	keySchema       = []byte("schema")
	keyWorkload     = []byte("workload")
)

const formatName = "autotune-tunedb"

// boltMagic is bbolt's marker at the start of its first meta page (after the
// 16-byte page header). bbolt never rewrites it, so a file without it is not
// a bbolt file; checking it here keeps bbolt from mapping arbitrary files.
const boltMagic = 0xED0CDAED

// ErrInUse matches (with errors.Is) the error of an operation that could not
// get the database's lock within the timeout: another process holds it.
var ErrInUse = errors.New("tunedb: database in use")

type inUseError struct{ path string }

func (e inUseError) Error() string {
	return "tunedb: database " + e.path + " is in use by another autotune process"
}

func (e inUseError) Is(target error) bool { return target == ErrInUse }

// noDatabaseError matches fs.ErrNotExist.
type noDatabaseError struct{ path string }

func (e noDatabaseError) Error() string { return "tunedb: no database at " + e.path }

func (e noDatabaseError) Is(target error) bool { return target == fs.ErrNotExist }

// Options configures Open. A nil *Options means the zero Options.
type Options struct {
	// Check, when set, judges each record that Import and Merge would add,
	// on top of tunedb's own checks of its form and statistics: whatever
	// needs knowledge tunedb lacks, such as whether its config is a point of
	// its template's knob space. A record it returns an error for stops the
	// import, and nothing is added.
	Check func(Record) error

	// Log, when set, hears what a Shared database does when another process
	// holds the lock: that an operation is waiting for it, and that a
	// commit kept its records aside (see Commit). A tuner shows it.
	Log func(msg string)

	// Timeout is how long Open, or each operation of a Shared database,
	// waits for another process to release the database. Zero means one
	// second.
	Timeout time.Duration

	// ReadOnly opens an existing database with a shared lock: readers do not
	// block each other, but they and a writer do (see Shared). It never
	// creates a file.
	ReadOnly bool

	// Shared holds the file, and its lock, only for the length of each
	// operation rather than from Open to Close, so that other processes can
	// use the database in between: `autotune best` or `db ls` while a tuner
	// runs, or two tuners taking turns. Each operation then waits up to
	// Timeout for the lock, so give a writer a generous one. Reads take a
	// shared lock, writes an exclusive one.
	Shared bool
}

// DB is an open tuning database. It is safe for concurrent use. Its queries
// of a workload report the workload's Validate error, as there cannot be
// records of an invalid one.
type DB struct {
	bolt  *bbolt.DB // nil when shared: opened per operation
	path  string
	check func(Record) error
	log   func(string)

	mu       sync.Mutex // guards pending
	pending  []entry    // committed while the lock was held elsewhere; see Commit
	timeout  time.Duration
	readOnly bool
	shared   bool
}

// DefaultPath returns $AUTOTUNE_DB if it is set and non-empty, else
// autotune/tune.db in the user's cache directory.
func DefaultPath() (string, error) {
	if p := os.Getenv("AUTOTUNE_DB"); p != "" {
		return p, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("tunedb: no default database: %w (set AUTOTUNE_DB)", err)
	}
	return filepath.Join(dir, "autotune", "tune.db"), nil
}

// Open opens the tuning database at path. Unless opts.ReadOnly, it creates
// the file and its parent directories when missing, and initialises an
// empty file. It holds a lock on the file until Close.
func Open(path string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	db := &DB{path: path, check: o.Check, log: o.Log, timeout: o.Timeout, readOnly: o.ReadOnly, shared: o.Shared}
	if err := db.sniff(); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("tunedb: %w", err)
		}
	}
	b, err := db.openBolt(o, !o.ReadOnly)
	if err != nil {
		return nil, err
	}
	db.bolt = b
	if err := db.init(); err != nil {
		b.Close()
		return nil, err
	}
	if !db.readOnly {
		if err := db.adoptPending(); err != nil {
			b.Close()
			return nil, err
		}
	}
	if db.shared {
		// Checked and initialised; from now on each operation opens it.
		if err := b.Close(); err != nil {
			return nil, fmt.Errorf("tunedb: close %s: %w", db.path, err)
		}
		db.bolt = nil
	}
	return db, nil
}

// sniff rejects files that are not bbolt files before bbolt maps them.
func (db *DB) sniff() error {
	f, err := os.Open(db.path)
	if errors.Is(err, fs.ErrNotExist) {
		if db.readOnly {
			return noDatabaseError{db.path}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("tunedb: %w", err)
	}
	defer f.Close()
	var head [20]byte
	_, err = io.ReadFull(f, head[:])
	switch {
	case err == io.EOF && db.readOnly:
		// bbolt would have to write to initialise it.
		return noDatabaseError{db.path}
	case err == io.EOF:
		return nil
	case err == io.ErrUnexpectedEOF, err == nil && binary.NativeEndian.Uint32(head[16:]) != boltMagic:
		return db.notOurs()
	case err != nil:
		return fmt.Errorf("tunedb: %w", err)
	}
	return nil
}

func (db *DB) openBolt(o Options, create bool) (b *bbolt.DB, err error) {
	var f *os.File
	defer func() {
		if r := recover(); r != nil {
			if f != nil {
				unlock(f)
				f.Close()
			}
			b, err = nil, db.corrupt(r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	b, err = bbolt.Open(db.path, 0o644, &bbolt.Options{
		Timeout:  o.Timeout,
		ReadOnly: o.ReadOnly,
		OpenFile: func(name string, flag int, perm fs.FileMode) (*os.File, error) {
			var err error
			if !create {
				flag &^= os.O_CREATE
			}
			f, err = os.OpenFile(name, flag, perm)
			return f, err
		},
	})
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, berrors.ErrTimeout):
		return nil, inUseError{db.path}
	case errors.Is(err, berrors.ErrInvalid):
		return nil, db.notOurs()
	case errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return nil, db.corrupt(err)
	}
	var pathErr *fs.PathError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pathErr):
		return nil, fmt.Errorf("tunedb: %w", err)
	case errors.As(err, &errno):
		return nil, fmt.Errorf("tunedb: open %s: %w", db.path, err)
	}
	// bbolt reports other damage, such as a truncated file, in plain errors.
	return nil, db.corrupt(err)
}

// init checks that the file is a tuning database this build can read, and
// turns a file without buckets into one.
func (db *DB) init() error {
	fresh, schema := false, 0
	err := db.view(func(tx *bbolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			k, _ := tx.Cursor().First()
			if fresh = k == nil; !fresh {
				return db.notOurs()
			}
			return nil
		}
		if string(m.Get(keyFormat)) != formatName {
			return db.notOurs()
		}
		text := string(m.Get(keySchema))
		var err error
		schema, err = strconv.Atoi(text)
		switch {
		case err != nil || schema < 1:
			return db.corrupt(fmt.Sprintf("schema %q", text))
		case schema > SchemaVersion:
			return fmt.Errorf("tunedb: %s has schema %d, newer than this autotune's (%d): upgrade autotune", db.path, schema, SchemaVersion)
		case tx.Bucket(bucketWorkloads) == nil:
			return db.corrupt("no workloads bucket")
		}
		return nil
	})
	if err != nil || db.readOnly {
		// A read-only file stays as it is; a fresh one reads as empty.
		return err
	}
	if !fresh {
		if schema == SchemaVersion {
			return nil
		}
		// Records of older schemas stay as they are, readable; the file
		// says it may now hold records of this one, so that an older
		// autotune refuses it as a whole instead of record by record.
		return db.update(func(tx *bbolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(SchemaVersion)))
		})
	}
	return db.update(func(tx *bbolt.Tx) error {
		m, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := m.Put(keyFormat, []byte(formatName)); err != nil {
			return err
		}
		if err := m.Put(keySchema, []byte(strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		_, err = tx.CreateBucket(bucketWorkloads)
		return err
	})
}

func (db *DB) notOurs() error {
	return fmt.Errorf("tunedb: %s is not an autotune tuning database", db.path)
}

func (db *DB) corrupt(why any) error {
	return fmt.Errorf("tunedb: %s is corrupt: %v", db.path, why)
}

// Path returns the path given to Open.
func (db *DB) Path() string { return db.path }

// Close releases the database and its lock. It first tries once more to
// store the records a Commit kept aside; when it cannot, it says so in an
// error matching ErrPending, and they stay in the side file.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.pending) > 0 {
		if err := db.store(nil); err != nil {
			return pendingError{err: err, n: len(db.pending), side: db.PendingPath()}
		}
	}
	if db.bolt == nil {
		return nil
	}
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("tunedb: close %s: %w", db.path, err)
	}
	return nil
}

// view and update run fn in a transaction. bbolt trusts the file: a corrupt
// page makes it panic or fault on the mapped memory, which they turn into an
// error.
func (db *DB) view(fn func(*bbolt.Tx) error) (err error) {
	b, done, err := db.handle(true)
	if err != nil {
		return err
	}
	defer done()
	defer db.recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return b.View(fn)
}

func (db *DB) update(fn func(*bbolt.Tx) error) (err error) {
	if db.readOnly {
		return fmt.Errorf("tunedb: %s is open read-only", db.path)
	}
	b, done, err := db.handle(false)
	if err != nil {
		return err
	}
	defer done()
	defer db.recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return b.Update(fn)
}

// handle returns the bbolt database for one operation and what to call
// when it is over: the open one, or for a shared database a fresh one,
// read-only for reads so that readers share the lock. A shared database
// that has to wait for the lock says so through Options.Log first.
func (db *DB) handle(read bool) (*bbolt.DB, func(), error) {
	if db.bolt != nil {
		return db.bolt, func() {}, nil
	}
	o := Options{Timeout: db.timeout, ReadOnly: read || db.readOnly}
	if db.log != nil && db.timeout > waitNotice {
		b, err := db.openShared(Options{Timeout: waitNotice, ReadOnly: o.ReadOnly})
		if !errors.Is(err, ErrInUse) {
			return b, func() { b.Close() }, err
		}
		db.log(fmt.Sprintf("waiting up to %s for the lock of %s: another autotune process is using it", db.timeout, db.path))
	}
	b, err := db.openShared(o)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { b.Close() }, nil
}

// waitNotice is how long a shared database waits for the lock before it
// says that it is waiting.
const waitNotice = 200 * time.Millisecond

// errRemoved matches the error of an operation on a shared database whose
// file is gone.
var errRemoved = errors.New("tunedb: database removed")

// openShared opens the file of a shared database for one operation. It never
// creates it: a database deleted under a running tuner is an error, not a
// new empty file that every command would then reject.
func (db *DB) openShared(o Options) (*bbolt.DB, error) {
	b, err := db.openBolt(o, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tunedb: %s was removed while autotune was using it: %w", db.path, errRemoved)
	}
	return b, err
}

func (db *DB) recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		*err = db.corrupt(r)
	}
}

// records returns the records bucket of the workload with key wkey, or nil.
func (db *DB) records(tx *bbolt.Tx, wkey []byte) (*bbolt.Bucket, error) {
	b, err := db.buckets(tx, wkey)
	return b.records, err
}

// buckets returns the buckets of the workload with key wkey; records is nil
// when there is no such workload.
func (db *DB) buckets(tx *bbolt.Tx, wkey []byte) (buckets, error) {
	root := tx.Bucket(bucketWorkloads)
	if root == nil {
		return buckets{}, nil
	}
	wb := root.Bucket(wkey)
	if wb == nil {
		return buckets{}, nil
	}
	rb := wb.Bucket(bucketRecords)
	if rb == nil {
		return buckets{}, db.corrupt(fmt.Sprintf("workload %s has no records bucket", wkey))
	}
	return buckets{records: rb, added: wb.Bucket(bucketAdded)}, nil
}

// decodeAt decodes the record stored under k; its error names the record
// and how to get past it.
func (db *DB) decodeAt(k, v []byte) (Record, error) {
	r, err := db.decode(v)
	if err != nil {
		return r, fmt.Errorf("%w (record %s; 'autotune db check' lists the damage, 'autotune db export --salvage' exports the rest)",
			err, describeKey(k))
	}
	return r, nil
}

func (db *DB) decode(v []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(v, &r); err != nil {
		return Record{}, db.corrupt(err)
	}
	return r, nil
}

// load returns the records of a workload in storage order, and the time
// each counts as measured at for ranking (see rank).
func (db *DB) load(b buckets) ([]Record, []time.Time, error) {
	var recs []Record
	var at []time.Time
	err := b.records.ForEach(func(k, v []byte) error {
		r, err := db.decodeAt(k, v)
		if err != nil {
			return err
		}
		recs, at = append(recs, r), append(at, b.rankTime(k, r))
		return nil
	})
	return recs, at, err
}

// buckets are the buckets of one workload.
type buckets struct {
	records *bbolt.Bucket
	added   *bbolt.Bucket // nil when no record came from the future
}

// rankTime is the time r, stored under k, counts as measured at: its own,
// or the time it was added to this database when that is earlier.
func (b buckets) rankTime(k []byte, r Record) time.Time {
	if b.added != nil {
		if v := b.added.Get(k); len(v) == 8 {
			if at := time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC(); at.Before(r.Time) {
				return at
			}
		}
	}
	return r.Time
}

// put stores e unless a record of the same identity exists, and returns the
// existing record's JSON, valid until the transaction ends. A record dated
// after now gets now as the time it was added (see rank).
func (db *DB) put(tx *bbolt.Tx, e *entry, now time.Time) (old []byte, err error) {
	rb, err := db.records(tx, e.wkey)
	if err != nil {
		return nil, err
	}
	if rb == nil {
		if rb, err = newWorkload(tx, e); err != nil {
			return nil, fmt.Errorf("tunedb: %s: %w", db.path, err)
		}
	}
	if old := rb.Get(e.key); old != nil {
		if !marksSuspect(old, e.val) {
			return old, nil
		}
		if err := rb.Put(e.key, e.val); err != nil {
			return nil, fmt.Errorf("tunedb: %s: %w", db.path, err)
		}
		return nil, nil
	}
	if err := rb.Put(e.key, e.val); err != nil {
		return nil, fmt.Errorf("tunedb: %s: %w", db.path, err)
	}
	if e.rec.Time.After(now) {
		ab, err := tx.Bucket(bucketWorkloads).Bucket(e.wkey).CreateBucketIfNotExists(bucketAdded)
		if err == nil {
			err = ab.Put(e.key, binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())))
		}
		if err != nil {
			return nil, fmt.Errorf("tunedb: %s: %w", db.path, err)
		}
	}
	return nil, nil
}

// newWorkload creates the bucket of e's workload and returns its records.
func newWorkload(tx *bbolt.Tx, e *entry) (*bbolt.Bucket, error) {
	root := tx.Bucket(bucketWorkloads)
	if root == nil {
		return nil, errors.New("no workloads bucket")
	}
	wb, err := root.CreateBucket(e.wkey)
	if err != nil {
		return nil, err
	}
	wj, err := marshal(e.rec.Workload)
	if err != nil {
		return nil, err
	}
	if err := wb.Put(keyWorkload, wj); err != nil {
		return nil, err
	}
	return wb.CreateBucket(bucketRecords)
}

// Commit stores a batch of records in one transaction: after a crash either
// the whole batch is in the database or none of it. A record with Schema 0
// gets SchemaVersion. Committing a record whose identity (workload, config,
// time) is already stored is a no-op if the two are identical and an error
// otherwise.
//
// Measurements are expensive, so a Shared database never drops a batch it
// cannot store: when another process holds the lock past the timeout, or
// the file is gone, Commit appends the batch to the side file PendingPath
// and keeps it in memory. A later Commit or Close stores what is pending
// with it; if none can, the next Open for writing adds the side file. The
// error then matches ErrPending (and ErrInUse when the lock was the
// reason): the records are safe, not stored yet.
func (db *DB) Commit(recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	es, err := prepareBatch(recs)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	err = db.store(es)
	if err == nil || !db.shared || !errors.Is(err, ErrInUse) && !errors.Is(err, errRemoved) {
		return err
	}
	if perr := appendPending(db.PendingPath(), es); perr != nil {
		return fmt.Errorf("%w; and keeping the batch aside failed: %v", err, perr)
	}
	db.pending = append(db.pending, es...)
	if db.log != nil && errors.Is(err, ErrInUse) {
		db.log(fmt.Sprintf("%s is still in use: %d measured records are kept in %s and added with the next batch",
			db.path, len(db.pending), db.PendingPath()))
	}
	return pendingError{err: err, n: len(db.pending), side: db.PendingPath()}
}

// store writes what is pending and es in one transaction; on success
// nothing is pending any more. The caller holds db.mu.
func (db *DB) store(es []entry) error {
	now := time.Now()
	err := db.update(func(tx *bbolt.Tx) error {
		for i := range db.pending {
			// Another process may have added the side file already.
			if _, err := db.put(tx, &db.pending[i], now); err != nil {
				return err
			}
		}
		for i := range es {
			e := &es[i]
			old, err := db.put(tx, e, now)
			if err != nil {
				return err
			}
			if old != nil && !bytes.Equal(old, e.val) {
				return fmt.Errorf("tunedb: commit record %d: %s config %s at %s is already stored with different content",
					i, e.wkey, e.rec.Config, e.rec.Time.Format(time.RFC3339Nano))
			}
		}
		return nil
	})
	if err == nil && len(db.pending) > 0 {
		db.pending = nil
		if err := os.Remove(db.PendingPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("tunedb: %w", err)
		}
	}
	return err
}

// scan calls fn with the buckets of w, if w has records.
func (db *DB) scan(w Workload, fn func(b buckets) error) error {
	if err := w.Validate(); err != nil {
		return err
	}
	return db.view(func(tx *bbolt.Tx) error {
		b, err := db.buckets(tx, []byte(w.Key()))
		if b.records == nil {
			return err
		}
		return fn(b)
	})
}

// Records returns every record of w, in storage order: by config text, then
// by time.
func (db *DB) Records(w Workload) ([]Record, error) {
	var recs []Record
	err := db.scan(w, func(b buckets) (err error) {
		recs, _, err = db.load(b)
		return err
	})
	return recs, err
}

// Best returns the config of w with the lowest median, as its latest ok
// record (see TopK). Records of other template versions do not count: they
// measured other code.
func (db *DB) Best(w Workload) (Record, bool, error) {
	top, err := db.TopK(w, 1)
	if err != nil || len(top) == 0 {
		return Record{}, false, err
	}
	return top[0], true, nil
}

// TopK returns up to k configs of w, fastest first, each as its latest ok
// record: a config measured more than once is ranked by its most recent
// measurement. A record dated after the moment it was added to this
// database counts as measured at that moment, so that a future date
// (forged, or from a machine whose clock runs ahead) cannot keep it ahead of
// the measurements made after it arrived.
func (db *DB) TopK(w Workload, k int) ([]Record, error) {
	var top []Record
	err := db.scan(w, func(b buckets) error {
		recs, at, err := db.load(b)
		top = rank(recs, at)
		return err
	})
	if err != nil {
		return nil, err
	}
	return top[:max(0, min(k, len(top)))], nil
}

// Measured returns the canonical text of every config a new run of w
// should skip, so that it can skip them without a query per config: those
// with an ok record or a final failure (Status.Transient), and those whose
// transient failures were retried once already (two or more of them). A
// config that only failed transiently, once, is measured again by the next
// run; with retryFailed, every config that only failed transiently is.
func (db *DB) Measured(w Workload, retryFailed bool) (map[string]bool, error) {
	transient := make(map[string]int)
	seen := make(map[string]bool)
	err := db.scan(w, func(b buckets) error {
		return b.records.ForEach(func(k, v []byte) error {
			if len(k) < 9 {
				return db.corrupt(fmt.Sprintf("record key %q", k))
			}
			r, err := db.decode(v)
			if err != nil {
				return err
			}
			c := string(k[:len(k)-9])
			if r.Status.Transient() {
				transient[c]++
			} else {
				seen[c] = true
			}
			return nil
		})
	})
	for c, n := range transient {
		if n >= 2 && !retryFailed {
			seen[c] = true
		}
	}
	return seen, err
}

// Find returns the workloads with the given op, shape, dtype and device, in
// every template version and toolchain, sorted by Key.
func (db *DB) Find(op string, shape []int, dt dtype.DType, device string) ([]Workload, error) {
	want := Workload{Op: op, Shape: shape, DType: dt, Device: device}
	prefix := []byte(want.Key()) // ends with the separator before the template
	var found []Workload
	err := db.view(func(tx *bbolt.Tx) error {
		root := tx.Bucket(bucketWorkloads)
		if root == nil {
			return nil
		}
		c := root.Cursor()
		for k, _ := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			w, err := db.workload(root, k)
			if err != nil {
				return err
			}
			// A device with spaces can share the prefix of a longer one.
			want.Template = w.Template
			if w.SameButToolchain(want) {
				found = append(found, w)
			}
		}
		return nil
	})
	return found, err
}

func (db *DB) workload(root *bbolt.Bucket, k []byte) (Workload, error) {
	wb := root.Bucket(k)
	if wb == nil {
		return Workload{}, db.corrupt(fmt.Sprintf("workload %s is not a bucket", k))
	}
	var w Workload
	if err := json.Unmarshal(wb.Get(keyWorkload), &w); err != nil {
		return Workload{}, db.corrupt(fmt.Sprintf("workload %s: %v", k, err))
	}
	return w, nil
}

// Summary describes the records of one workload.
type Summary struct {
	Workload Workload
	Records  int // total
	ByStatus map[Status]int
	Best     *Record // nil when no ok record
}

// Workloads summarises every workload, sorted by Key.
func (db *DB) Workloads() ([]Summary, error) {
	var sums []Summary
	err := db.view(func(tx *bbolt.Tx) error {
		root := tx.Bucket(bucketWorkloads)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(k []byte) error {
			w, err := db.workload(root, k)
			if err != nil {
				return err
			}
			b, err := db.buckets(tx, k)
			if err != nil {
				return err
			}
			recs, at, err := db.load(b)
			if err != nil {
				return err
			}
			s := Summary{Workload: w, Records: len(recs), ByStatus: make(map[Status]int)}
			for _, r := range recs {
				s.ByStatus[r.Status]++
			}
			if top := rank(recs, at); len(top) > 0 {
				s.Best = &top[0]
			}
			sums = append(sums, s)
			return nil
		})
	})
	return sums, err
}

// Prune keeps, per workload, every record of its k fastest configs (ranked by
// their latest ok record) and deletes all others, failures included; a
// workload left without records is deleted. bbolt reuses the freed pages but
// does not shrink the file.
func (db *DB) Prune(k int) (removed int, err error) {
	if k < 1 {
		return 0, fmt.Errorf("tunedb: prune needs k of at least 1, not %d", k)
	}
	err = db.update(func(tx *bbolt.Tx) error {
		root := tx.Bucket(bucketWorkloads)
		var wkeys [][]byte
		if err := root.ForEachBucket(func(k []byte) error {
			wkeys = append(wkeys, bytes.Clone(k))
			return nil
		}); err != nil {
			return err
		}
		for _, wk := range wkeys {
			b, err := db.buckets(tx, wk)
			if err != nil {
				return err
			}
			var keys [][]byte
			var recs []Record
			var at []time.Time
			if err := b.records.ForEach(func(k, v []byte) error {
				r, err := db.decode(v)
				keys, recs, at = append(keys, bytes.Clone(k)), append(recs, r), append(at, b.rankTime(k, r))
				return err
			}); err != nil {
				return err
			}
			top := rank(recs, at)
			keep := make(map[string]bool)
			for _, r := range top[:min(k, len(top))] {
				keep[r.Config.String()] = true
			}
			if len(keep) == 0 {
				removed += len(recs)
				if err := root.DeleteBucket(wk); err != nil {
					return err
				}
				continue
			}
			for i, r := range recs {
				if !keep[r.Config.String()] {
					if err := b.records.Delete(keys[i]); err != nil {
						return err
					}
					if b.added != nil {
						if err := b.added.Delete(keys[i]); err != nil {
							return err
						}
					}
					removed++
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// prepareBatch checks and encodes a batch for Commit (DB's and Memory's),
// stamping records without a schema version with the current one.
func prepareBatch(recs []Record) ([]entry, error) {
	es := make([]entry, len(recs))
	for i, r := range recs {
		if r.Schema == 0 {
			r.Schema = SchemaVersion
		}
		e, err := prepare(r)
		if err != nil {
			return nil, fmt.Errorf("tunedb: commit record %d: %w", i, err)
		}
		es[i] = e
	}
	return es, nil
}
