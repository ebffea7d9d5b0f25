// Package emul runs the programs autotune builds (the measuring harness,
// test drivers) through a wrapper when they are for an architecture the
// host does not run natively: autotune itself built for arm64 and run
// under user-mode emulation (qemu-aarch64-static) on an amd64 machine
// without binfmt_misc, where the programs it builds, arm64 too, would not
// start. The wrapper is the command line in AUTOTUNE_EXEC_WRAPPER (Env),
// split at spaces, put before the program; unset, programs run directly.
//
// It follows Go's own convention for tests (go_$GOOS_$GOARCH_exec, go
// test -exec) with one variable, since autotune runs programs of its own
// architecture only.
package emul
