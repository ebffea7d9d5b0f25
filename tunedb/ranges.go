package tunedb

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/bbolt"
)

// bucketRanges holds tuned shape ranges, created on the first save so
// that databases written before ranges existed need no migration.
var bucketRanges = []byte("ranges")

// A Range is a tuned range of shapes of one op (autotune tune --shape
// 1..4096x768x768): the box from Workload.Shape (its low corner) to Hi,
// the shapes tuned to serve it (its buckets: a shape of the range is
// served by the winner of the bucket nearest to it), and the regret of
// that dispatch measured on held-out shapes of the range. Every bucket
// and held-out shape is an ordinary workload with its own records; the
// Range says only how they were chosen and what dispatching by them
// costs.
type Range struct {
	Workload Workload  `json:"workload"` // its Shape is the range's low corner
	Hi       []int     `json:"hi"`       // the high corner, ends included
	Buckets  [][]int   `json:"buckets"`  // the tuned shapes, sorted
	HeldOut  []HeldOut `json:"held_out"` // the shapes the regret was measured on
	Trials   int       `json:"trials"`   // measurements the range's last tune spent
	Time     time.Time `json:"time"`     // when it was saved
	Tool     string    `json:"tool,omitempty"`
}

// HeldOut is the regret of dispatch at one shape of a range: how much
// slower the winner of its nearest bucket runs there than the fastest
// config measured there, as a fraction (0.1: 10% slower). Regret is +Inf
// when that winner cannot run the shape or failed there.
type HeldOut struct {
	Shape   []int   `json:"shape"`
	Nearest []int   `json:"nearest"` // the bucket that serves it
	Regret  float64 `json:"regret"`
}

// heldOutJSON is HeldOut as stored: JSON has no infinity, so an infinite
// regret is written as -1.
type heldOutJSON HeldOut

func (h HeldOut) MarshalJSON() ([]byte, error) {
	j := heldOutJSON(h)
	if math.IsInf(j.Regret, 1) {
		j.Regret = -1
	}
	return json.Marshal(j)
}

func (h *HeldOut) UnmarshalJSON(b []byte) error {
	var j heldOutJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Regret < 0 {
		j.Regret = math.Inf(1)
	}
	*h = HeldOut(j)
	return nil
}

// Regret returns the median and the largest regret of hs (NaN when hs is
// empty; +Inf counts as the largest).
func Regret(hs []HeldOut) (median, worst float64) {
	n := len(hs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	rs := make([]float64, n)
	for i, h := range hs {
		rs[i] = h.Regret
	}
	slices.Sort(rs)
	median = rs[n/2]
	if n%2 == 0 {
		median = (rs[n/2-1] + rs[n/2]) / 2
	}
	return median, rs[n-1]
}

// Contains reports whether shape lies in r, ends included.
func (r Range) Contains(shape []int) bool {
	if len(shape) != len(r.Hi) {
		return false
	}
	for d, n := range shape {
		if n < r.Workload.Shape[d] || n > r.Hi[d] {
			return false
		}
	}
	return true
}

// String writes r's extents as autotune reads them: "1..4096x768x768".
func (r Range) String() string {
	parts := make([]string, len(r.Hi))
	for d, hi := range r.Hi {
		parts[d] = strconv.Itoa(r.Workload.Shape[d])
		if hi != r.Workload.Shape[d] {
			parts[d] += ".." + strconv.Itoa(hi)
		}
	}
	return strings.Join(parts, "x")
}

// key is the stored key: the workload's key of the low corner, a NUL
// (which no workload key holds) and the high corner.
func (r Range) key() []byte {
	w := r.Workload
	w.Shape = r.Hi
	return []byte(r.Workload.Key() + "\x00" + w.ShapeString())
}

// Validate reports whether r can be stored: a valid workload, a high
// corner of as many extents none below the low one, and buckets and
// held-out shapes inside the range.
func (r Range) Validate() error {
	if err := r.Workload.Validate(); err != nil {
		return err
	}
	if len(r.Hi) != len(r.Workload.Shape) || !r.Contains(r.Workload.Shape) || !r.Contains(r.Hi) {
		return fmt.Errorf("tunedb: invalid range %s: its high corner %v is not above its low one", r.Workload.ShapeString(), r.Hi)
	}
	if r.Trials < 0 {
		return fmt.Errorf("tunedb: invalid range %s: trials is %d", r, r.Trials)
	}
	for _, b := range r.Buckets {
		if !r.Contains(b) {
			return fmt.Errorf("tunedb: invalid range %s: bucket %v lies outside it", r, b)
		}
	}
	for _, h := range r.HeldOut {
		if !r.Contains(h.Shape) || !slices.ContainsFunc(r.Buckets, func(b []int) bool { return slices.Equal(b, h.Nearest) }) {
			return fmt.Errorf("tunedb: invalid range %s: held-out shape %v lies outside it or names no bucket", r, h.Shape)
		}
	}
	return nil
}

// SaveRange stores r, replacing the range of the same workload and
// corners. Ranges travel with the records in Export and Import, which
// keep the newer of two ranges of one workload and corners.
func (db *DB) SaveRange(r Range) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return db.update(func(tx *bbolt.Tx) error {
		_, err := putRange(tx, r, func(Range) bool { return true })
		return err
	})
}

// putNewerRange stores r unless the saved range of its workload and
// corners is as new, and reports whether it did.
func putNewerRange(tx *bbolt.Tx, r Range) (bool, error) {
	if err := r.Validate(); err != nil {
		return false, err
	}
	return putRange(tx, r, func(old Range) bool { return r.Time.After(old.Time) })
}

// putRange stores r when no range of its key is saved, or replace says
// the saved one should go, and reports whether it stored r.
func putRange(tx *bbolt.Tx, r Range, replace func(old Range) bool) (bool, error) {
	b, err := tx.CreateBucketIfNotExists(bucketRanges)
	if err != nil {
		return false, err
	}
	k := r.key()
	if v := b.Get(k); v != nil {
		var old Range
		// A saved range that does not decode is replaced: it summarises
		// records, which are all still there.
		if json.Unmarshal(v, &old) == nil && !replace(old) {
			return false, nil
		}
	}
	v, err := marshal(r)
	if err != nil {
		return false, err
	}
	return true, b.Put(k, v)
}

// Ranges returns every saved range, in key order.
func (db *DB) Ranges() ([]Range, error) {
	var out []Range
	err := db.view(func(tx *bbolt.Tx) error {
		return db.eachRange(tx, func(r Range) error {
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// eachRange calls fn with every saved range, in key order.
func (db *DB) eachRange(tx *bbolt.Tx, fn func(Range) error) error {
	b := tx.Bucket(bucketRanges)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var r Range
		if err := json.Unmarshal(v, &r); err != nil {
			return db.corrupt(fmt.Sprintf("range %q: %v", k, err))
		}
		return fn(r)
	})
}

// newestRanges returns the newest range of each key among rs, in key
// order, the first of equally new ones: what storing rs one by one with
// putNewerRange leaves.
func newestRanges(rs []Range) []Range {
	slices.SortStableFunc(rs, func(a, b Range) int { return bytes.Compare(a.key(), b.key()) })
	var out []Range
	for _, r := range rs {
		if n := len(out); n > 0 && bytes.Equal(out[n-1].key(), r.key()) {
			if r.Time.After(out[n-1].Time) {
				out[n-1] = r
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// NearestShape returns the index in shapes of the one nearest to shape,
// as Nearest orders them: by ShapeDistance, then the smaller (fewer
// elements, then the smaller first differing extent); -1 when shapes has
// none of shape's rank.
func NearestShape(shape []int, shapes [][]int) int {
	best, bestDist, bestSize := -1, math.Inf(1), 0.0
	for i, s := range shapes {
		if len(s) != len(shape) {
			continue
		}
		size := 1.0
		for _, n := range s {
			size *= float64(n)
		}
		d := ShapeDistance(shape, s)
		if best < 0 || cmp.Or(cmp.Compare(d, bestDist), cmp.Compare(size, bestSize), slices.Compare(s, shapes[best])) < 0 {
			best, bestDist, bestSize = i, d, size
		}
	}
	return best
}
