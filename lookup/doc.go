// Package lookup answers, at run time, which tuned config a program should
// use for a workload: the best config of the op for a shape, dtype and
// device, from a tuning database or from a JSON Lines log of one (`autotune
// db export`).
//
// An answer comes from the first rule that applies:
//
//   - Exact: the shape was tuned on the device; its best record answers.
//   - Bucket: the shape lies in a range tuned on the device (autotune tune
//     --shape 1..4096x1024, tunedb.Range); the winner of the range's
//     nearest bucket that has a record answers, even when another tuned
//     shape is nearer.
//   - Nearest: another shape of the op was tuned on the device; the winner
//     of the nearest one (tunedb.ShapeDistance: the sum over dimensions of
//     |log2 a − log2 b|, ties to the smaller shape) answers.
//   - Default: nothing of the op was tuned on the device; the template's
//     default config for the shape answers.
//
// The rule is tunedb.Serve, which a package that autotune gen writes
// dispatches by too, so a program gets the same kernel config from either.
//
// Only records of the template version this program was built with count:
// records of another version measured other code. A device is a
// fingerprint (device.Target.Fingerprint), so a CUDA architecture is just
// another device.
//
// Records name the toolchain that built the kernels they measured (the Go
// version, NVRTC's), since it changes a kernel's speed. A shape tuned with
// several counts once: by the record of the toolchain the Table prefers
// ([Table.Prefer]) when it has one, else by the latest measured. An answer
// says whose it is ([Answer.Toolchain]), so that a caller that knows its
// toolchain can say when it uses another's.
//
// A [Table] is a snapshot: Open and Load read the records and ranges
// once (Load from a log that autotune db export wrote), and a
// Table never writes, never creates a file, and never waits behind a
// running tuner longer than its timeout. Answers are cached, so a repeated
// lookup is a map read; the record an answer names is shared, not copied.
// Open again to see records tuned since.
//
// Importing lookup registers every op autotune ships (kernels/all), so a
// program needs no other import to ask about them.
package lookup
