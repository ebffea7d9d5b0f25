// Package remote measures batches on other machines through NATS JetStream:
// a Measurer on the tuner's side publishes a batch's candidates as jobs, and
// Workers on the measuring machines run them with their local measurer and
// publish the results back. The tuner stays the only writer of the tuning
// database; workers hold no state worth keeping.
//
// Four JetStream assets carry everything (Setup creates them):
//
//   - the jobs stream (work-queue retention), one subject per device
//     fingerprint, named by a hash of it (Subject). A job is one config of a
//     batch with its workload: op, shape, dtype, fingerprint, template
//     version, and the best median known. It never carries source code: the
//     worker generates the code from its own registered template, and
//     refuses a template version it does not have with a failure record.
//   - the results stream, one subject per batch, de-duplicated by message ID,
//     which is the job ID. A job delivered twice (its worker died after
//     publishing but before acknowledging) yields one result to the tuner.
//   - the given-up stream, which keeps the server's advisories of jobs
//     delivered three times without an acknowledgement, so that a tuner
//     that was disconnected when one came still reads it.
//   - the workers bucket, a key-value bucket with a TTL in which each worker
//     registers (fingerprint, host, jobs done) and refreshes its entry while
//     it runs; Workers lists the live ones.
//
// Workers of one fingerprint share one durable pull consumer, so a job goes
// to one of them. A Measurer sends a batch's jobs at once; a worker that
// gets one takes, with it, the jobs that arrive within a few milliseconds,
// up to its share of the batch (the batch's size over the live workers of
// its fingerprint), and measures them as one batch of its local measurer:
// a worker alone builds a batch as the tuner would have, and two split it.
// A worker acknowledges a job explicitly once its result is published, and
// keeps it with in-progress acknowledgements while its batch runs; a job
// whose worker vanished is delivered again after the ack wait, at most
// three times. When the last delivery is not acknowledged either, the
// server's max-deliveries advisory, read from the given-up stream, makes
// the Measurer record the job as a crash of its config, so that a config
// that kills workers is tried three times and then costed as a failure. A batch with no live worker of its
// fingerprint for Options.Stall fails with an error that says so; it never
// waits for ever.
//
// A restart of the NATS server (with its store) loses nothing. The
// connections, which the caller dials with unlimited reconnects, come back
// by themselves and re-subscribe; the streams, the durable consumer with the
// state of its deliveries, and the workers bucket are on disk; the ordered
// consumers through which a batch reads its results and the advisories
// resume after the last message they saw. What is sent while the server is
// away is sent again: every request has a timeout of its own (one sent as
// the connection drops is lost), and publishes are retried, for
// Options.Stall on the tuner's side and for an ack wait on a worker's,
// which is safe because both streams de-duplicate by message ID. A job
// whose acknowledgement was lost is measured again on its next delivery,
// and the tuner keeps the first result.
//
// A server restarted on an empty store has lost the streams, the consumer
// and the jobs in flight. Workers and Measurers set the streams and the
// consumer up again when a request finds them missing, and a batch that
// has heard no result for a while checks that its jobs are still in the
// jobs stream, publishes again those missing at two checks in a row, and
// reads its results again from the start.
//
// Each worker goes by a name, and publishes its results on a subject that
// ends with it (resultSubject) and registers under a key that holds it; a
// worker also takes the jobs sent to it by name (directSubject) through a
// consumer of its own, which MeasureExcept uses to have leaders measured
// again on another worker than the one that found them. The Measurer
// reads a result's worker from its subject, not from its content.
//
// Anyone who can publish to the jobs subjects makes workers generate, build
// and run code from the configs they send, and anyone who can publish
// results writes timings into the tuner's database. Serve with a Security
// admits only the Credentials given (nkeys, one per member, made by
// EnsureCredentials), each with the permissions of its role
// (Credential.Permissions), over TLS (SelfSigned makes a certificate): the
// tuner alone publishes jobs, and a worker publishes results and registers
// under its own name only, so a name read from a subject is one the
// server authenticated (see docs/remote.md).
package remote
