// Package sim is a backend of package measure that measures nothing: it
// replays measurements recorded earlier, so that a search strategy or a cost
// model can be run against a real tuning landscape in milliseconds, with no
// compiler and no device, and with the same answer every time.
//
// A Measurer is built from the recorded results of one workload (New). It
// matches configs by their canonical text (schedule.Config.String), the
// form the tuning database keys records by, and ignores the batch's
// template, shape and target: choosing records of the right workload, and
// of the template version whose configs they are, is the caller's job
// (lab.FindRecording, in tune/lab, does it for tuning databases and JSON Lines exports;
// this package sits below the database and does not read it).
//
// For each config of a batch, Measure returns the recorded Result: status,
// error, samples, median, p20 and p80, and the recorded build and run times
// (kept, so that a replayed run's summary says how long the real one would
// have taken). Its Config is the batch's.
//
// When several results were recorded for one config, the latest ok one is
// replayed (New takes them oldest first, as the tuning database stores
// them), because that is the measurement the database ranks a config by
// (tunedb.DB.Best, TopK and Prune). A config with no ok result replays the
// first of its failures.
//
// A config that was never recorded cannot be replayed. It comes back as a
// failure, StatusRuntimeError with the error NotRecorded, so that the tuner
// records it, costs it +Inf and never makes it the best; a caller counts
// them by that error (tune's simulation reports them), since many of them
// mean the recording does not cover the space searched.
package sim
