package kernels

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A ShapeRange is a box of shapes: every shape whose extent d lies in
// [Lo[d], Hi[d]], ends included. A plain shape is the range whose Lo and
// Hi are equal.
type ShapeRange struct {
	Lo, Hi []int
}

// RangeSep separates the ends of a ranged extent: "1..4096".
const RangeSep = ".."

// IsShapeRange reports whether s writes a range rather than one shape.
func IsShapeRange(s string) bool { return strings.Contains(s, RangeSep) }

// ParseShapeRange reads a shape in which any extent may be a range
// lo..hi, both ends included, as in "1..4096x768x768". Each end is an
// extent as ParseShape reads it, and lo must not exceed hi; a shape
// without ranges is the range of that one shape.
func (op Op) ParseShapeRange(s string) (ShapeRange, error) {
	parts := strings.Split(s, "x")
	lo, hi := make([]string, len(parts)), make([]string, len(parts))
	for i, p := range parts {
		a, b, ok := strings.Cut(p, RangeSep)
		if !ok {
			a, b = p, p
		}
		if ok && (a == "" || b == "") && len(parts) == len(op.Dims) {
			return ShapeRange{}, fmt.Errorf("invalid shape range %q: %s=%q needs both ends, as in 1..4096", s, op.Dims[i], p)
		}
		lo[i], hi[i] = a, b
	}
	var r ShapeRange
	var err error
	if r.Lo, err = op.ParseShape(strings.Join(lo, "x")); err != nil {
		return ShapeRange{}, rangeError(s, err)
	}
	if r.Hi, err = op.ParseShape(strings.Join(hi, "x")); err != nil {
		return ShapeRange{}, rangeError(s, err)
	}
	for d := range r.Lo {
		if r.Lo[d] > r.Hi[d] {
			return ShapeRange{}, fmt.Errorf("invalid shape range %q: %s runs from %d down to %d; write the smaller end first", s, op.Dims[d], r.Lo[d], r.Hi[d])
		}
	}
	return r, nil
}

// rangeError restates an error of ParseShape on one end of range s as an
// error of s.
func rangeError(s string, err error) error {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		msg = rest
	}
	return fmt.Errorf("invalid shape range %q: %s", s, msg)
}

// Single reports whether r holds exactly one shape.
func (r ShapeRange) Single() bool { return slices.Equal(r.Lo, r.Hi) }

// Contains reports whether shape lies in r.
func (r ShapeRange) Contains(shape []int) bool {
	if len(shape) != len(r.Lo) {
		return false
	}
	for d, n := range shape {
		if n < r.Lo[d] || n > r.Hi[d] {
			return false
		}
	}
	return true
}

// String writes r the way ParseShapeRange reads it.
func (r ShapeRange) String() string {
	parts := make([]string, len(r.Lo))
	for d := range r.Lo {
		parts[d] = strconv.Itoa(r.Lo[d])
		if r.Hi[d] != r.Lo[d] {
			parts[d] += RangeSep + strconv.Itoa(r.Hi[d])
		}
	}
	return strings.Join(parts, "x")
}
