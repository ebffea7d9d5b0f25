//go:build unix

package tune

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/autotune-dev/autotune/tunedb"
)

// TestFullDiskEndsTheRun fills the disk under the database, as far as the
// database can tell: the process may not make the file any larger
// (RLIMIT_FSIZE; every write past it fails with EFBIG, as it would with
// ENOSPC). The run ends with an error, and the database keeps what was
// committed before and passes its check.
func TestFullDiskEndsTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, &tunedb.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	task := testTask(t, db, &fakeMeasurer{})
	task.Trials = 4
	if _, err := Run(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skip(err)
	}
	full := limit
	full.Cur = uint64(fi.Size())
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full); err != nil {
		t.Skip(err)
	}
	task.Measurer, task.Trials = &fakeMeasurer{}, 100
	_, err = Run(context.Background(), task)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("a run on a full disk ended without an error")
	}
	t.Logf("the run's error: %v", err)

	check, err := tunedb.Open(path, &tunedb.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	damage, err := check.Check()
	if err != nil || len(damage) > 0 {
		t.Errorf("after a full disk: damage %v, %v", damage, err)
	}
	recs, err := check.Records(task.Workload())
	if err != nil || len(recs) < 4 {
		t.Errorf("after a full disk: %d records (%v), want the 4 committed before", len(recs), err)
	}
}
