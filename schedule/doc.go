// Package schedule is the knob-space language every template speaks.
//
// A template describes what may be tuned for one workload on one target as a
// Space: an ordered list of Knobs and a list of named Constraints. A knob is
// one decision with a finite list of candidate values:
//
//	Choice     one of a few integers, e.g. a vector width {1, 8, 16} or
//	           the tile sizes of an axis
//	Enum       a named variant, e.g. an algorithm {threepass, online}
//	Bool       on or off
//
// A Config gives every knob a value. It has one canonical text form,
// "vec=16,unroll=4,algo=online", and a JSON form with the same members in
// the same order; both round-trip exactly, so a config can be a database
// key, a log line and a command-line argument. A Config does not point to its
// Space: records are read back without the template that made them, and
// Space.Parse, Space.Canonical and Space.Check tie a config to a space again.
//
// Every point of a space has an index in [0, Size()) (mixed radix, last knob
// fastest), which is what grid search walks. Not every point is valid: the
// constraints say which are, and Check names the first one a point breaks.
//
// The search strategies build on Sample (uniform over valid points), Mutate
// (one knob to a neighbouring or random value) and Crossover (each knob from
// either parent); the cost model on Features (log2 of sizes, one-hot enums).
// All randomness comes from the *rand.Rand the caller passes, so a seed fixes
// every proposal. Nothing here uses the global generator.
//
// Malformed knobs and spaces are template bugs and panic in NewSpace; a
// config that does not belong to a space is an ordinary error.
package schedule
