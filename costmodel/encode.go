package costmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The binary form of a trained GBT, all integers unsigned varints and all
// floats IEEE 754 binary64 little-endian:
//
//	magic "ATCM", version (1), objective (1 byte)
//	features, base score, tree count
//	per tree: node count, then per node in array order
//	    0, leaf value                          a leaf
//	    feature+1, threshold, left, right      a split; children after it
//	CRC-32C of everything before, 4 bytes little-endian
const (
	magic   = "ATCM"
	version = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes the trained model (see the package doc for the
// format). Options are not saved: they govern training, not prediction.
// It reports an error for an untrained model.
func (g *GBT) MarshalBinary() ([]byte, error) {
	if g.trees == nil {
		return nil, errors.New("costmodel: cannot save an untrained model")
	}
	b := append([]byte(magic), version, byte(g.objective))
	b = binary.AppendUvarint(b, uint64(g.features))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(g.base))
	b = binary.AppendUvarint(b, uint64(len(g.trees)))
	for _, t := range g.trees {
		b = binary.AppendUvarint(b, uint64(len(t.nodes)))
		for _, nd := range t.nodes {
			if nd.feature < 0 {
				b = append(b, 0)
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nd.value))
				continue
			}
			b = binary.AppendUvarint(b, uint64(nd.feature)+1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nd.threshold))
			b = binary.AppendUvarint(b, uint64(nd.left))
			b = binary.AppendUvarint(b, uint64(nd.right))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary replaces the model with one saved by MarshalBinary. The
// receiver keeps its Options, which govern the next Fit. Bytes that are
// truncated, corrupt or of another format version give an error and leave
// the model as it was.
func (g *GBT) UnmarshalBinary(data []byte) error {
	m, err := decode(data)
	if err != nil {
		return fmt.Errorf("costmodel: loading a model: %w", err)
	}
	g.objective, g.features, g.base, g.trees = m.objective, m.features, m.base, m.trees
	g.warm = 0
	return nil
}

// Limits on what decode accepts, far above what real models need, so that
// corrupt input cannot ask for huge allocations. Fit refuses wider rows.
const (
	maxFeatures = 1 << 16
	minNodeSize = 9 // a tag byte and a float
)

func decode(data []byte) (*GBT, error) {
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, errors.New("not a costmodel model")
	}
	if len(data) < len(magic)+2+4 {
		return nil, errShort
	}
	if v := data[len(magic)]; v != version {
		return nil, fmt.Errorf("format version %d, this build reads %d", v, version)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, errors.New("checksum mismatch: the data is corrupt or truncated")
	}
	d := decoder{b: body[len(magic)+1:]}
	m := &GBT{objective: Objective(d.byte())}
	if m.objective > Regression {
		return nil, fmt.Errorf("unknown objective %d", m.objective)
	}
	features := d.uvarint()
	m.base = d.float()
	nt := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if features > maxFeatures {
		return nil, fmt.Errorf("%d features", features)
	}
	m.features = int(features)
	if nt == 0 || nt > uint64(len(d.b))/(1+minNodeSize) {
		return nil, fmt.Errorf("%d trees in %d bytes", nt, len(d.b))
	}
	m.trees = make([]tree, nt)
	for t := range m.trees {
		nn := d.uvarint()
		if d.err != nil {
			return nil, d.err
		}
		if nn == 0 || nn > uint64(len(d.b))/minNodeSize {
			return nil, fmt.Errorf("tree %d: %d nodes in %d bytes", t, nn, len(d.b))
		}
		nodes := make([]node, nn)
		for i := range nodes {
			tag := d.uvarint()
			if tag == 0 {
				nodes[i] = node{feature: -1, value: d.float()}
				continue
			}
			threshold := d.float()
			left, right := d.uvarint(), d.uvarint()
			if d.err != nil {
				return nil, d.err
			}
			if tag > features || math.IsNaN(threshold) {
				return nil, fmt.Errorf("tree %d node %d: split on feature %d at %v", t, i, tag-1, threshold)
			}
			// Children after their parent: every walk ends at a leaf.
			if left <= uint64(i) || right <= uint64(i) || left >= nn || right >= nn {
				return nil, fmt.Errorf("tree %d node %d: children %d and %d of %d nodes", t, i, left, right, nn)
			}
			nodes[i] = node{feature: int32(tag - 1), left: int32(left), right: int32(right), threshold: threshold}
		}
		m.trees[t].nodes = nodes
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d bytes after the last tree", len(d.b))
	}
	if !finite(m) {
		return nil, errors.New("a score is not finite")
	}
	return m, nil
}

// finite reports whether every leaf value and the base are finite.
func finite(m *GBT) bool {
	if math.IsNaN(m.base) || math.IsInf(m.base, 0) {
		return false
	}
	for _, t := range m.trees {
		for _, nd := range t.nodes {
			if nd.feature < 0 && (math.IsNaN(nd.value) || math.IsInf(nd.value, 0)) {
				return false
			}
		}
	}
	return true
}

// decoder reads from b, remembering the first error; reads after it return
// zeros.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated")

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.err = firstErr(d.err, errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) float() float64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = firstErr(d.err, errShort)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
