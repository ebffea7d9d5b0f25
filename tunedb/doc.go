// Package tunedb is the tuning database: it keeps every measurement of every
// tuning run, answers what the tuner and its users ask of them (the best
// config of a workload, the k best, whether a config was measured already),
// and moves them between machines as JSON Lines.
//
// # Storage
//
// A database is one bbolt file. Its bucket "meta" holds "format" =
// "autotune-tunedb" and "schema" = SchemaVersion in decimal; Open refuses a
// file without them, unless the file has no buckets at all, and a schema
// newer than its own. An older schema is read as it is; a writable Open
// raises the file's to SchemaVersion, since it may then hold newer records. Bucket "workloads" has one nested bucket per workload,
// named by Workload.Key, which holds "workload", the Workload as JSON, and a
// nested bucket "records" with one record per key:
//
//	<canonical config text> 0x00 <Time.UnixNano, 8 bytes big-endian>  →  the Record as JSON
//
// Config text never contains a NUL byte, so the records of a config are
// adjacent and "measured already?" is one seek. A record stored before the
// time it is dated also gets an entry under its key in the workload's
// nested bucket "added", created when first needed: the time it was stored,
// UnixNano as 8 bytes big-endian, which is when it counts as measured for
// ranking (see TopK). Storage order, the order of
// Records and Export, is key order: by config text, then by time. Values are
// decoded inside their transaction; nothing returned points into the mapped
// file.
//
// Tuned shape ranges (Range) are kept in the top-level bucket "ranges",
// created on the first save, one JSON value per range keyed by the
// workload key of its low corner, a NUL and its high corner. Unlike saved
// cost models (bucket "models"), they travel with the records through
// Export, Import and Merge.
//
// # Identity
//
// A record is identified by its workload, config and time. Every record
// stored is checked: its form, its statistics against its samples (see
// MaxSamples, MaxErrorBytes), and for Import and Merge its date (at most a
// day ahead) and Options.Check, which lets the caller check what tunedb
// cannot, such as a config against its template's knob space. Commit refuses
// to replace a record by a different one of the same identity. Import and
// Merge skip records whose identity is present, so repeating them changes
// nothing. The template version is part of the workload: records of an older
// template stay in the database but never answer for the current one.
//
// # Resume
//
// Commit writes a batch in one bbolt transaction, on disk when Commit
// returns. A tuner killed at any moment loses at most the batch it was
// measuring; the next run asks Measured which configs to skip, failures
// included, and measures each config once, but for transient failures
// (Status.Transient: timeout, crash, runtime_error), which it retries once,
// or always when asked to. One process at a time may hold a
// database for writing; readers share it with each other but not with a
// writer, and an open gives up after Options.Timeout. A Shared database is
// held only during each operation, so a long-running tuner lets readers and
// other writers in between its batches; two tuners of the same workload
// then take turns, and divide its configs between them by claims: before
// measuring a batch, a tuner claims its configs in one transaction
// (Claim), skipping those another live tuner claimed or measured after it
// read Measured, and it releases them once their records are committed
// (Release). Claims are kept in the top-level bucket "claims", keyed by
// workload key, a NUL and config text; a released claim stays, marked
// done (a few hundred bytes a config). A claim lasts its lease, or until
// its tuner's process on the same host is gone.
//
// A Shared database never loses a batch for want of the lock: Commit keeps it in memory and in the side file
// PendingPath, stores it with a later batch, and the next Open for writing
// adds a side file left behind. Options.Log hears when it waits and when it
// keeps records aside. Export copies its records before it writes them, so
// a slow reader of its output holds no lock. A file damaged behind
// bbolt's back makes bbolt panic or fault on its mapped memory; tunedb turns
// both into errors saying the file is corrupt.
//
// # JSON Lines
//
// Export writes and Import reads one Record per line, a JSON object with
// these members in this order (schema 4):
//
//	schema      integer  SchemaVersion of the record or older; Import refuses newer ones
//	workload    object   op, shape (array of integers ≥ 1), dtype, device, template, toolchain
//	                     (omitted when unknown, as in every record of schema 1); see Workload
//	config      object   one member per knob in knob order: an integer, enum name or boolean
//	status      string   ok, invalid, build_error, runtime_error, crash, timeout or wrong_answer
//	error       string   why it failed; omitted when empty
//	samples_ns  array    every timed sample in ns per call; omitted when empty
//	median_ns   number   median of the samples, > 0 when status is ok; omitted when 0
//	p20_ns      number   20th percentile; omitted when 0
//	p80_ns      number   80th percentile; omitted when 0
//	build_ns    integer  build time attributed to this record, ns
//	run_ns      integer  run time attributed to this record, ns
//	time        string   when it was measured, RFC 3339 in UTC, between 1970 and 2262
//	tool        string   version of autotune that measured it
//	registers   integer  32-bit registers per thread of a GPU kernel; omitted when 0 (unknown)
//	local_bytes integer  local memory per thread of a GPU kernel, bytes; omitted when 0
//	disturbance object   evidence of contention while the samples were taken: samples,
//	                     disturbed (how many of them were), cpu_share, steal_ns,
//	                     involuntary_switches, probe (see measure.Disturbance); omitted when
//	                     unknown, as in every record before schema 3
//	measurer    object   who measured: name (a worker's; empty for the tuner), host, tool;
//	                     omitted when unknown, as in every record before schema 3
//	suspect     string   on an ok record, why its timing is not trusted (Record.Suspect);
//	                     omitted when it is; a suspect record never ranks its config
//
// Records are immutable but for one change: committing a stored ok record
// again with suspect set marks it. The tuner does so when a leader's
// figure, measured again on another worker, disagrees beyond the spreads
// and a third measurement sides with the other.
//
// After the records come the saved ranges, one per line in key order, a
// JSON object of two members: schema (4 or newer: ranges came with schema
// 4, whose records are those of schema 3) and range, the Range as stored.
// Import checks a range with Range.Validate and its date as a record's,
// and keeps the newer of two ranges of one workload and corners.
//
// Lines are ordered by workload key, then by storage order, then ranges
// by key, so an export depends only on the content, and exporting what
// was imported gives the same bytes. Import skips empty lines, rejects unknown members and lines
// longer than MaxLineBytes (16 MiB; it stops reading there), and names the
// line of the first error; it adds nothing when any line is wrong.
//
// # In memory
//
// Memory is a database held in memory, for simulations that replay a
// recording many times and need no file: its Commit, Records, Best, TopK,
// Has, Measured, Workloads, SaveModel and LoadModel answer as DB's do, with
// the same checks, orders and identities (one table of tests holds both to
// it). It has no export, import, merge or prune.
//
// A stored record that does not decode makes every read that meets it fail.
// Check lists each damaged workload and record by its key, and
// ExportSalvage exports everything else.
// ReadRecords reads and checks the same way without a database.
package tunedb
