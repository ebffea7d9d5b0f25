//go:build unix

package tune

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/autotune-dev/autotune/tunedb"
)

// fullDiskEnv names the database a re-executed test binary tunes into
// under the lowered file-size limit (fullDiskRun).
const fullDiskEnv = "AUTOTUNE_TEST_FULL_DISK_DB"

// TestFullDiskEndsTheRun fills the disk under the database, as far as the
// database can tell: the process may not make the file any larger
// (RLIMIT_FSIZE; every write past it fails with EFBIG, as it would with
// ENOSPC). The run ends with an error, and the database keeps what was
// committed before and passes its check. The limit holds for every file
// of a process, the test framework's own logs included, so the full-disk
// run is a process of its own: this test binary, run again.
func TestFullDiskEndsTheRun(t *testing.T) {
	if path := os.Getenv(fullDiskEnv); path != "" {
		fullDiskRun(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), "tune.db")
	db, err := tunedb.Open(path, &tunedb.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	task := testTask(t, db, &fakeMeasurer{})
	task.Trials = 4
	_, err = Run(context.Background(), task)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestFullDiskEndsTheRun$", "-test.v")
	child.Env = append(os.Environ(), fullDiskEnv+"="+path)
	out, err := child.CombinedOutput()
	t.Logf("the full-disk run:\n%s", out)
	if err != nil {
		t.Fatalf("the full-disk run failed: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("the full-disk run could not lower the file size limit")
	}

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

// fullDiskRun tunes into the database at path with the process's file
// size limit at the database's size, and fails unless the run ends with an
// error.
func fullDiskRun(t *testing.T, path string) {
	db, err := tunedb.Open(path, &tunedb.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
	task := testTask(t, db, &fakeMeasurer{})
	task.Trials = 100
	_, err = Run(context.Background(), task)
	if err == nil {
		t.Fatal("a run on a full disk ended without an error")
	}
	t.Logf("the run's error: %v", err)
}
