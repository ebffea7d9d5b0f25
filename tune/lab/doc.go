// Package lab is the search lab: it judges searches and task schedulers by
// replaying recorded tuning landscapes through the tuner's own loop
// (tune.Run, tune.RunTasks), with no compiler and no device, and with the
// same answer every time.
//
// A [Recording] is every record of one workload, from a tuning database or
// an export ([FindRecording]). [Simulate] runs each [Method] (a search
// strategy with the cost model that guides it) once per seed against a
// recording, each run in its own in-memory database and measured by
// measure/sim, and reports how many trials each needed to get within 5%
// and 1% of the best recorded config. [RunSuite] does so over a directory
// of landscapes, some held out, and sums the searches up against random
// search. [SimulateSchedulers] replays a multi-workload landscape (recorded
// landscapes with weights, as a tasks file names them) through each task
// scheduler. [ReplayRange] replays range tuning (package ranges) on a
// range landscape, recorded landscapes of one op at several shapes of one
// range, and measures the regret of dispatching the shapes it held out to
// its buckets.
//
// `autotune simulate` is its command line; testdata holds the recorded
// landscapes its tests and the suite replay (testdata/README.md says how
// they were recorded).
package lab
