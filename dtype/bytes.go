package dtype

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AppendBytes appends x as d's elements in memory, little-endian, to b: the
// float32 bits, or for bf16 and f16 the 16 bits that Encode gives (x
// should be representable in d, as inputs rounded by Round are). It is the
// buffer a kernel of d reads, for a backend that copies bytes (a GPU's).
func (d DType) AppendBytes(b []byte, x []float32) []byte {
	for _, v := range x {
		if d.Size() == 2 {
			b = binary.LittleEndian.AppendUint16(b, d.Encode(v))
		} else {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return b
}

// DecodeBytes fills x with the elements of d in b, exactly: the inverse of
// AppendBytes. b must hold len(x) elements.
func (d DType) DecodeBytes(x []float32, b []byte) error {
	if len(b) != d.Size()*len(x) {
		return fmt.Errorf("dtype: %d bytes for %d elements of %s", len(b), len(x), d)
	}
	for i := range x {
		if d.Size() == 2 {
			x[i] = d.Decode(binary.LittleEndian.Uint16(b[2*i:]))
		} else {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	}
	return nil
}
