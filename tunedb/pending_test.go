package tunedb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// logged collects what a database reports through Options.Log.
type logged struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logged) log(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msg)
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs, "\n")
}

func batch(t *testing.T, from, n int) []Record {
	var recs []Record
	for i := from; i < from+n; i++ {
		recs = append(recs, rec(t, softmax, fmt.Sprintf("vec=%d,unroll=1", i), StatusOK, 100, i))
	}
	return recs
}

func count(t *testing.T, path string) int {
	t.Helper()
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Records(softmax)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// A commit that cannot get the lock says it waits, then keeps its records
// aside instead of losing them, and stores them with the next commit.
func TestCommitWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	var l logged
	w, err := Open(path, &Options{Shared: true, Timeout: 400 * time.Millisecond, Log: l.log})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	holder, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Commit(batch(t, 0, 3))
	if !errors.Is(err, ErrPending) || !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "3 measured records are kept in "+w.PendingPath()) {
		t.Fatalf("Commit while locked = %v, want ErrPending", err)
	}
	if msgs := l.String(); !strings.Contains(msgs, "waiting up to 400ms for the lock of "+path) || !strings.Contains(msgs, "3 measured records are kept") {
		t.Errorf("logged %q, want the wait and the records kept", msgs)
	}
	if b, err := os.ReadFile(w.PendingPath()); err != nil || strings.Count(string(b), "\n") != 3 {
		t.Errorf("side file: %v\n%s", err, b)
	}
	holder.Close()
	if err := w.Commit(batch(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, path); n != 5 {
		t.Errorf("%d records after the lock came back, want 5", n)
	}
	if _, err := os.Stat(w.PendingPath()); !os.IsNotExist(err) {
		t.Errorf("the side file is still there: %v", err)
	}
}

// Records kept aside by a tuner that never got the lock back are added by
// the next open for writing.
func TestPendingAdoptedOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	w, err := Open(path, &Options{Shared: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(batch(t, 0, 4)); !errors.Is(err, ErrPending) {
		t.Fatalf("Commit while locked = %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrPending) {
		t.Errorf("Close while still locked = %v, want ErrPending", err)
	}
	holder.Close()
	if n := count(t, path); n != 0 {
		t.Fatalf("%d records before an open for writing, want 0", n)
	}
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n := count(t, path); n != 4 {
		t.Errorf("%d records after an open for writing, want the 4 kept aside", n)
	}
	if _, err := os.Stat(w.PendingPath()); !os.IsNotExist(err) {
		t.Errorf("the side file is still there: %v", err)
	}
}

// A database deleted under a running tuner is a clear error, not a panic
// and not a new file that every command rejects; the batch is kept aside.
func TestDatabaseRemovedWhileShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	w, err := Open(path, &Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(batch(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	err = w.Commit(batch(t, 1, 2))
	if err == nil || !strings.Contains(err.Error(), path+" was removed while autotune was using it") || !errors.Is(err, ErrPending) {
		t.Errorf("Commit after the file was removed = %v", err)
	}
	if _, err := w.Records(softmax); err == nil || !strings.Contains(err.Error(), "was removed") {
		t.Errorf("Records after the file was removed = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the database was recreated: %v", err)
	}
	w.Close()
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if n := count(t, path); n != 2 {
		t.Errorf("a new database has %d records, want the 2 kept aside", n)
	}
}
