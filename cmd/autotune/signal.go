package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a long command cleanly: what was
// measured is kept, the summary is printed, and the exit status is 128 plus
// the signal's number, as a shell reports a process killed by it, so that a
// script running autotune stops too. SIGHUP (a closed terminal or ssh
// session) is one of them: without a handler it would kill the tuner
// mid-batch.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalContext returns a context cancelled by the first of stopSignals,
// caught to report which one it was (nil if none), and stop to release the
// handler. After the first signal the default action is restored, so a
// second Ctrl-C ends the process at once.
func signalContext() (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	var (
		mu  sync.Mutex
		got os.Signal
	)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			got = s
			mu.Unlock()
			signal.Reset(stopSignals...)
			cancel()
		case <-done:
		}
	}()
	caught = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
	return ctx, caught, stop
}

// signalError is how a command that stopped on a signal reports it: Main
// exits 128 plus the signal's number.
type signalError struct {
	sig  syscall.Signal
	kept string // what was kept, for the message: "12 records"
}

func (e *signalError) Error() string {
	msg := "stopped by " + signalName(e.sig)
	if e.kept != "" {
		msg += "; " + e.kept + " kept"
	}
	return msg
}

// exitStatus is the conventional status of a process stopped by the signal.
func (e *signalError) exitStatus() int { return 128 + int(e.sig) }

// stoppedBy returns the error a command returns after its work was cut
// short by sig, or nil when no signal came.
func stoppedBy(sig os.Signal, kept string) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return nil
	}
	return &signalError{sig: s, kept: kept}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT (Ctrl-C)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// interruptible runs fn and returns its error, or ctx's as soon as ctx is
// done: for work that cannot watch a context (planning a package, drawing
// a page) and leaves nothing on disk, which a command stopped by a signal
// abandons as the process exits.
func interruptible(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
