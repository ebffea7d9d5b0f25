// Package tune runs the tuning loop for one task: propose a batch of configs,
// measure it, commit the records, tell the search, report, until the budget
// is spent or the space is exhausted.
//
// It is the one place that wires concrete parts together: the template's
// space, a search strategy, a measurer for the target and the tuning
// database. Each is reached through a small interface declared here, so the
// loop is tested with fakes and the parts know nothing of each other.
// Strategies and cost models are chosen by name from the registries of
// packages search and costmodel.
//
// A guided run learns from the database: its cost model trains on every
// record of the op on the device, and on those of ops whose templates give
// the model the same features (GEMM with another epilogue), and its search
// starts from the best configs of the nearest tuned shapes and then of the
// nearest workloads of those ops.
//
// Package tune/lab replays recorded landscapes through this loop (Run,
// RunTasks) to compare searches and task schedulers without measuring.
//
// RunTasks tunes many workloads (a TaskSet) within one budget, a batch at a
// time, each batch going to the task that a scheduler of package tasks
// names; each task is the same run of steps as Run's, resuming from the
// store; tasks of one op share one cost model, which every batch of any of
// them trains.
//
// At the end of a run the leaders are measured again (Task.Remeasure). On
// a measurer of several machines (CrossMeasurer) each is measured on
// another machine than the one whose figure made it a leader; figures
// that disagree (Agree) are settled by a third machine, and those it does
// not side with are marked suspect in the store, where they never rank a
// config (trust.go).
//
// Every measured config becomes a record, failures included, and every batch
// is committed in one transaction before the next starts: an interrupted run
// loses at most the batch in flight (Ctrl-C loses nothing: the finished part
// of the batch is committed), and a rerun skips every config already in the
// database.
//
// Tuners may share a database, each in its own process, on the same
// workload: a store that is a Claimer (tunedb.DB) has each claim the
// configs of a batch before measuring them, and leave to the others those
// they claimed or measured after it started (Progress.Shared counts them),
// so that no config is measured twice and every record is kept.
// TimeConfigs, which times given configs (a range tune's bucket winners at
// its held-out shapes), claims them too, and waits for the record of a
// config another tuner holds rather than timing it again; TimeMedians
// gives its medians, as a range tune's ranges.Tuner returns them (autotune
// tune's, and tune/lab's replay of one).
//
// A winner is declared only after the leaders were measured again side by
// side (Task.Remeasure): the fastest configs and, for a template with a
// threads knob, the fastest config of each thread count, interleaved in
// one batch, so that thread counts are compared at one moment rather
// than against records taken under another load. A leader whose
// measurement was mostly disturbed (measure.Disturbance.Contended) cannot
// win on it: the leaders are measured again, up to three times, and a
// winner still contended then is reported as unsettled (Summary).
package tune
