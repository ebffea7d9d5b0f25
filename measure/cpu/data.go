package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
)

// data is a workload's inputs and its float64 reference output.
type data struct {
	ins  [][]float32
	want []float64
}

// dataCache keeps the data of the last workload measured, because the
// reference of a large kernel (a gemm in float64) can take longer to compute
// than a whole batch takes to measure.
type dataCache struct {
	mu   sync.Mutex
	key  string
	data *data
}

func (c *dataCache) get(t kernels.Template, shape []int, seed uint64) *data {
	key := fmt.Sprintf("%s\x00%s\x00%v\x00%d", t.Op.Name, t.Version, shape, seed)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.data == nil || c.key != key {
		c.key, c.data = key, newData(t, shape, seed)
	}
	return c.data
}

// newData fills the template's inputs from a PCG seeded with seed and
// computes the reference (measure.NewData).
func newData(t kernels.Template, shape []int, seed uint64) *data {
	ins, want := measure.NewData(t.Op, shape, seed)
	return &data{ins: ins, want: want}
}

// File names of the data in a batch directory; the harness reads them.
func inputFile(i int) string { return fmt.Sprintf("in%d.f32", i) }

const wantFile = "want.f64"

// write stores d in dir as little-endian raw arrays, one file per input plus
// the reference, for the harness to read.
func (d *data) write(dir string) error {
	for i, in := range d.ins {
		b := make([]byte, 0, 4*len(in))
		for _, v := range in {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		if err := os.WriteFile(filepath.Join(dir, inputFile(i)), b, 0o644); err != nil {
			return fmt.Errorf("cpu: writing inputs: %w", err)
		}
	}
	b := make([]byte, 0, 8*len(d.want))
	for _, v := range d.want {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if err := os.WriteFile(filepath.Join(dir, wantFile), b, 0o644); err != nil {
		return fmt.Errorf("cpu: writing the reference: %w", err)
	}
	return nil
}
