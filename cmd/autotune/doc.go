// Command autotune tunes kernels, keeps every measurement in a tuning
// database, and answers what the best config of a workload is.
//
// Usage:
//
//	autotune --op OP --shape SHAPE [--device DEV]   same as 'autotune tune ...'
//	autotune COMMAND [flags]
//
// Commands:
//
//	tune      tune a workload (or a tasks file's) and record every measurement
//	best      print the best stored config of a workload (--fallback: what a lookup answers)
//	bench     compare the tuned kernel with baselines, side by side
//	check     check generated kernels against the reference, without timing (no GPU needed)
//	gen       write a Go package of the tuned kernels
//	report    write an HTML report of the tuning database
//	simulate  compare searches (or task schedulers) on recorded landscapes, without measuring
//	list      list the ops, their shapes and knobs, and the devices
//	doctor    say how busy this machine is, and what that means for tuning
//	db        ls, show, export, import, merge, prune and check the tuning database
//	broker    run a NATS server with JetStream for remote workers
//	worker    measure jobs sent through NATS on this machine
//	workers   list the live remote workers
//	version   print the version
//
// A workload is named by --op (softmax, gemm, gemm_bias, gemm_bias_relu,
// attention, attention_causal; 'autotune list' shows them with their
// knobs), --shape (RxC, MxNxK or BxHxSxD: positive extents up to 2^31-1
// joined by 'x') and
// --device (auto, cpu, or a CUDA architecture sm_70 … sm_90; auto is the
// local GPU when one is usable, else the CPU). --db names the tuning
// database (default $AUTOTUNE_DB, else autotune/tune.db in the user cache
// directory), --json switches results to JSON, and --seed fixes the random
// choices of commands that make any. Only tune, db import and db merge
// create a missing database; every other command exits 1 saying there is
// no database at that path.
//
// Results go to standard output; progress and logs to standard error.
// Exit status: 0 success, 1 failure, 2 usage error, each error on one line;
// 128 plus the signal's number when SIGINT, SIGTERM or SIGHUP stopped a
// command (tune keeps what it measured and prints its summary first).
//
// Every op can be tuned on the CPU and on a CUDA device, on a machine with
// its GPU (without a driver or NVRTC, tune exits 1 saying which is
// missing); bench on a CUDA device exits 1 saying it is not there yet.
// 'autotune COMMAND --help' documents each command with examples.
package main
