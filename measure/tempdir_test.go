package measure

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestTempDirRemovesStaleDirectories(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no way to ask whether a process runs")
	}
	parent := t.TempDir()
	// A process that has ended: its PID is free (until reused, which a
	// test cannot rule out, but not within this test's few milliseconds).
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	for _, name := range []string{
		"autotune-batch-" + strconv.Itoa(dead) + "-123", // stale
		"autotune-batch-" + strconv.Itoa(os.Getpid()) + "-456",
		"autotune-batch-" + strconv.Itoa(os.Getppid()) + "-789", // a live process
		"autotune-batch-old",                         // no PID: left alone
		"autotune-cuda-" + strconv.Itoa(dead) + "-1", // another prefix
	} {
		if err := os.MkdirAll(filepath.Join(parent, name, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := TempDir(parent, "autotune-batch")
	if err != nil {
		t.Fatal(err)
	}
	if base := filepath.Base(dir); !strings.HasPrefix(base, "autotune-batch-"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("TempDir made %s, want autotune-batch-%d-…", base, os.Getpid())
	}
	entries, _ := os.ReadDir(parent)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Contains(strings.Join(left, " "), "autotune-batch-"+strconv.Itoa(dead)+"-") || len(left) != 5 {
		t.Errorf("left %v; want all but the dead process's batch directory, plus the new one", left)
	}
}
