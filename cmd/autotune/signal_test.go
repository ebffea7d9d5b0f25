package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopWait bounds how long a command may take to stop after a signal
// before the test gives up on it. Stopping takes well under a second; the
// bound only keeps a command that ignores the signal (as check once did,
// computing an attention reference for half an hour) from hanging the test.
const stopWait = 30 * time.Second

// A child is autotune running in a process of its own: the test binary
// run as autotune (asMainEnv).
type child struct {
	cmd    *exec.Cmd
	stderr *watchWriter
	exited chan error // Wait's result
}

// startAutotune starts autotune with args and returns once its stderr
// holds ready: the command is then busy with the work the test means to
// interrupt.
func startAutotune(t *testing.T, ready string, args ...string) *child {
	t.Helper()
	return startAutotuneEnv(t, nil, ready, args...)
}

// startAutotuneEnv is startAutotune with env added to the child's
// environment.
func startAutotuneEnv(t *testing.T, env []string, ready string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], args...), stderr: newWatch(ready), exited: make(chan error, 1)}
	c.cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), env...)
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill() })
	go func() { c.exited <- c.cmd.Wait() }()
	select {
	case <-c.stderr.seen:
		return c
	case err := <-c.exited:
		t.Fatalf("autotune %v ended (%v) before it printed %q:\n%s", args, err, ready, c.stderr)
	case <-time.After(5 * time.Minute):
		t.Fatalf("autotune %v did not print %q:\n%s", args, ready, c.stderr)
	}
	return nil
}

// stop sends sig to the child and returns its exit status, failing the
// test when it does not exit within stopWait.
func (c *child) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatal(err)
		}
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(stopWait):
		t.Fatalf("autotune did not stop within %v of %v:\n%s", stopWait, sig, c.stderr)
		return 0
	}
}

// TestCommandsStopOnSignals interrupts each long command in the middle of
// its work, with each of the stop signals in turn: it must exit by itself
// with 128 plus the signal's number. tune has its own test
// (TestTuneStopSignals), which also checks what it keeps.
func TestCommandsStopOnSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs long commands")
	}
	db := filepath.Join(t.TempDir(), "tune.db")
	tests := []struct {
		name  string
		sig   syscall.Signal
		ready string // on stderr once the long work has begun
		args  []string
		needs string // a program the command needs
	}{
		// Half an hour of float64 reference, then hours of emulation.
		{"check emulated", syscall.SIGTERM, "this will take about",
			[]string{"check", "--op", "attention", "--shape", "1x1x100000x64", "--device", "sm_80", "--configs", "0", "--no-ptx"}, "g++"},
		{"check cpu", syscall.SIGHUP, "this will take about",
			[]string{"check", "--op", "attention", "--shape", "1x1x100000x64", "--device", "cpu", "--configs", "0"}, "go"},
		{"simulate", syscall.SIGINT, " seed 1:",
			[]string{"simulate", "--records", landscape, "--op", "softmax", "--shape", "1024x1024", "--seeds", "100000"}, ""},
		{"bench", syscall.SIGTERM, "benchmarking ",
			[]string{"bench", "--op", "softmax", "--shape", "3x17", "--device", "cpu", "--db", db, "--samples", "100000000", "--time", "1h"}, "go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needs != "" {
				if _, err := exec.LookPath(tt.needs); err != nil {
					t.Skipf("no %s: %v", tt.needs, err)
				}
			}
			if tt.name == "bench" {
				if code, _, stderr := run(t, "", "--op", "softmax", "--shape", "3x17", "--device", "cpu", "--db", db, "--trials", "1"); code != 0 {
					t.Fatalf("tune: exit %d\n%s", code, stderr)
				}
			}
			c := startAutotune(t, tt.ready, tt.args...)
			if code := c.stop(t, tt.sig); code != 128+int(tt.sig) {
				t.Errorf("exit %d after %v, want %d:\n%s", code, tt.sig, 128+int(tt.sig), c.stderr)
			}
		})
	}
}

// TestInterruptible: work that cannot watch a context is abandoned when
// the context is done, and its own result is returned when it finishes.
func TestInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	done := make(chan error)
	go func() { done <- interruptible(ctx, func() error { <-release; return nil }) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	want := errors.New("the work's own error")
	if err := interruptible(context.Background(), func() error { return want }); err != want {
		t.Errorf("finished: %v, want %v", err, want)
	}
}

// TestStoppedTuneLeavesNoGoBuildDir stops a tune while go build compiles
// its first batch, with Ctrl-C's signal and with SIGHUP: the go command's
// go-build* work directory, which it removes only when it exits normally,
// must not be left in TMPDIR.
func TestStoppedTuneLeavesNoGoBuildDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated kernels")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			c := startAutotuneEnv(t, []string{"TMPDIR=" + tmp}, "tuning gemm",
				"--op", "gemm", "--shape", "384x384x384", "--device", "cpu", "--db", filepath.Join(t.TempDir(), "tune.db"), "--trials", "1000")
			for len(goBuildDirs(tmp)) == 0 {
				select {
				case err := <-c.exited:
					t.Fatalf("tune ended (%v) before go build started:\n%s", err, c.stderr)
				case <-time.After(10 * time.Millisecond):
				}
			}
			if code := c.stop(t, sig); code != 128+int(sig) {
				t.Errorf("exit %d after %v, want %d:\n%s", code, sig, 128+int(sig), c.stderr)
			}
			if left := goBuildDirs(tmp); len(left) > 0 {
				t.Errorf("a tune stopped by %v left %v", sig, left)
			}
		})
	}
}

// goBuildDirs returns the go command's work directories under root.
func goBuildDirs(root string) []string {
	var dirs []string
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "go-build") {
			dirs = append(dirs, path)
		}
		return nil
	})
	return dirs
}
