// Package harness is what a measuring child process (a harness) and the
// backend that starts it share, whatever the backend: the events of the
// protocol between them, the data files the parent writes for the child
// (the workload, and for each input set the inputs and the float64
// reference), and the check of a kernel's output against that reference.
// Statistics of samples are the parent's (measure.Summarize).
//
// The package imports only the standard library, because it is compiled
// into each harness, in a throw-away module: a backend copies its source
// there (Files) and points the harness's import of it at the copy
// (Relocate).
//
// # Protocol
//
// A harness writes one JSON Event per line to its stdout, each line with
// a system call of its own, and nothing else there:
//
//	{"id":-1,"event":"ready"}                         inputs loaded
//	{"id":7,"event":"start"}                          kernel 7 is about to run
//	{"id":7,"event":"checked","call_ns":2.1e6,"calls":15}  optional: it passed its check; timing follows
//	{"id":7,"event":"result","status":"ok","reps":4,"samples_ns":[812.5,...],"evidence":{...},"probe_ns":9.1e4}
//	{"id":7,"event":"result","status":"wrong_answer","error":"set large: out[3] = ..."}
//	{"id":-1,"event":"round","samples_ns":[812.5,...]}  bench only: a sample of every entry
//	{"id":-1,"event":"done"}                          every kernel has a result
//
// Because start comes before the kernel runs, the parent always knows
// which kernel was running when the harness died, and because checked
// comes before the kernel is timed, how long its timing should take.
// Sequence checks the order of events. A harness is built from the same
// source as the parent that starts it, so the two always speak the same
// protocol; a new event is optional for a harness (checked is), so a
// parent still follows one that does not send it.
package harness
