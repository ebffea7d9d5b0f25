package measure

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempDir makes a directory for one batch's files under parent (the
// system's temporary directory when parent is ""), named
// prefix-PID-random, and first removes the directories of that prefix that
// processes no longer running left there: a tuner killed with SIGKILL
// cannot clean up after itself, and its batch directories (a harness
// binary, inputs) would pile up.
func TempDir(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	RemoveStale(parent, prefix)
	return os.MkdirTemp(parent, prefix+"-"+strconv.Itoa(os.Getpid())+"-")
}

// RemoveStale removes the directories prefix-PID-* in parent whose PID is
// not a running process. Directories it cannot read a PID from, or whose
// process runs, are left alone; errors are ignored, as the next run tries
// again.
func RemoveStale(parent, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, prefix+"-*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), prefix+"-")
		pidText, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || running(pid) {
			continue
		}
		os.RemoveAll(dir)
	}
}
