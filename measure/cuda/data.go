package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// File names of a workload's data in the directory the parent shares with
// its workers.
func inputFile(i int) string { return fmt.Sprintf("in%d.f32", i) }

const wantFile = "want.f64"

// writeData stores the inputs and the reference in dir, little-endian.
func writeData(dir string, ins [][]float32, want []float64) error {
	for i, in := range ins {
		b := make([]byte, 0, 4*len(in))
		for _, v := range in {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
		if err := os.WriteFile(filepath.Join(dir, inputFile(i)), b, 0o644); err != nil {
			return fmt.Errorf("cuda: writing inputs: %w", err)
		}
	}
	b := make([]byte, 0, 8*len(want))
	for _, v := range want {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if err := os.WriteFile(filepath.Join(dir, wantFile), b, 0o644); err != nil {
		return fmt.Errorf("cuda: writing the reference: %w", err)
	}
	return nil
}

func readF32(path string, n int) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("%s holds %d bytes, want %d", path, len(b), 4*n)
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

func readF64(path string, n int) ([]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != 8*n {
		return nil, fmt.Errorf("%s holds %d bytes, want %d", path, len(b), 8*n)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x, nil
}
