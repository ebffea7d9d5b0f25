// Package ranges tunes a range of shapes (autotune tune --shape
// 1..4096x768x768) within one trial budget: it tunes a few shapes of the
// range, its buckets, and measures what dispatching every other shape to
// the winner of its nearest bucket costs.
//
// Each ranged extent gets a ladder of Levels geometrically spaced points,
// its ends included (1..64 with 9 levels: 1 2 3 5 8 13 23 38 64); the
// shapes of the ladders' product are the candidates. The first buckets are
// the corners and the middle of each ladder (1, 8 and 64 above). Each
// bucket is tuned with PerShape trials, as an ordinary workload, so a
// bucket starts from the winners of the shapes near it.
//
// The regret of a held-out candidate is how much slower the winner of
// its nearest bucket (tunedb.NearestShape, the rule gen's dispatch
// follows) runs there than the fastest config measured there, after a
// short tune of that shape alone (Probe trials, half a bucket's, 4 to 12,
// which start from the winners of the shapes near it) and a timing there
// of every bucket's winner: 0.1 is 10% slower. A short tune of 4 trials
// rarely gets past the winners it starts from, so against it alone the
// regret read 0.1% where the true one was 2.6% (docs/benchmarks.md); the
// longer probe and the other buckets' winners, tuned in full, make the
// best measured a contender. It is still a lower bound of the regret
// against tuning the shape alone; docs/benchmarks.md compares the two. A
// winner that cannot run the held-out shape (its space refuses it there)
// has infinite regret, as dispatch would have to fall back.
//
// Vector kernels run an extent that is not a multiple of their vector
// width in a tail loop, which a winner tuned only at multiples of it never
// ran. So when the range holds a shape with an extent that is not a
// multiple of TailWidth (16, the widest vector), one such shape is always
// among the held-out shapes measured: the farthest of them takes the last
// place if the farthest MaxHeldOut have none, and when no shape of the
// ladders has a tail, the middle candidate with its first ranged extent
// one less (or one more) is added to the candidates.
//
// While the budget allows another bucket, the held-out candidate of the
// largest regret above Tolerance becomes one, and the regrets are
// measured again. Every timing is a record of the held-out shape's own
// workload, so none is repeated, and the budget counts them as it counts
// the buckets' trials. The Result names the buckets and the regret of
// each held-out shape; tunedb.Range stores them, and gen dispatches the
// shapes of the range by them.
package ranges
