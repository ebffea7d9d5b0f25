package tunedb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// ErrPending matches (with errors.Is) the error of a Commit that could not
// store its records and kept them in the side file instead (see Commit).
var ErrPending = errors.New("tunedb: records pending")

type pendingError struct {
	err  error
	n    int
	side string
}

func (e pendingError) Error() string {
	return e.err.Error() + "; " + strconv.Itoa(e.n) + " measured records are kept in " + e.side +
		", which the next autotune that opens the database for writing adds"
}

func (e pendingError) Unwrap() []error { return []error{e.err, ErrPending} }

// PendingPath is the side file where a Shared database keeps records it
// could not commit: the database's path with ".pending.jsonl" appended.
func (db *DB) PendingPath() string { return db.path + ".pending.jsonl" }

// appendPending appends es to the side file at path as JSON Lines, on disk
// when it returns.
func appendPending(path string, es []entry) error {
	var b bytes.Buffer
	for _, e := range es {
		b.Write(e.val)
		b.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// adoptPending adds the records of the side file, left by a tuner that could
// not commit them, and removes it. Its records are stored Records; those
// already present are skipped.
func (db *DB) adoptPending() error {
	f, err := os.Open(db.PendingPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tunedb: %w", err)
	}
	now := time.Now()
	es, rs, err := readEntries(f, nil, now)
	f.Close()
	if err != nil {
		return fmt.Errorf("tunedb: %s: %w; remove or repair it to open %s", db.PendingPath(), err, db.path)
	}
	if _, err := db.add(es, rs, now); err != nil {
		return err
	}
	if err := os.Remove(db.PendingPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("tunedb: %w", err)
	}
	return nil
}
