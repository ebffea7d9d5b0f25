//go:build unix

package cpu

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStoppedBuildLeavesNoWorkDir stops a build midway, as a tuner stopped
// by a signal does. The go command is killed before it can remove its
// go-build* work directory, so that directory must be one the builder
// removes, never one left in TMPDIR. The go command here is a stand-in that
// makes its work directory where the real one does and then waits.
func TestStoppedBuildLeavesNoWorkDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fakeGo := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/sh\nmkdir \"${GOTMPDIR:-$TMPDIR}/go-build1\" && : > started && exec sleep 60\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &builder{goCmd: fakeGo, dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.goBuild(ctx, filepath.Join(b.dir, "harness"))
		done <- err
	}()
	for {
		if _, err := os.Stat(filepath.Join(b.dir, "started")); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the build ended before it was stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a stopped build returned no error")
	}
	for _, root := range []string{tmp, b.dir} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), "go-build") {
				t.Errorf("the stopped build left %s", path)
			}
			return nil
		})
	}
}
