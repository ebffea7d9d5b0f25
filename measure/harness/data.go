package harness

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// A Workload describes the data a parent writes for a harness.
type Workload struct {
	// DType is the element type of the kernel's inputs and output, as
	// package dtype writes it: "f32", "bf16". The files hold every value
	// as a float32 whatever the dtype, already rounded to it by the
	// parent, so that the harness can hand the same values to a kernel of
	// the dtype (encoded in 16 bits for bf16 and f16) and to a float32
	// baseline; Read fills in "f32" when a file names none.
	DType  string    `json:"dtype"`
	Inputs []int     `json:"inputs"` // element counts of the kernel's inputs, in argument order
	Output int       `json:"output"` // element count of its output
	Sets   []SetInfo `json:"sets"`   // the input sets, the first the one kernels are timed on
}

// SetInfo names an input set and gives the tolerance of Check on it.
type SetInfo struct {
	Name string  `json:"name"`
	Rel  float64 `json:"rel"`
	Abs  float64 `json:"abs"`
}

// A Set is one input set: the inputs, in argument order, and the
// reference output computed from them in float64.
type Set struct {
	SetInfo
	Ins  [][]float32
	Want []float64
}

// DefaultDType is the dtype of a workload file that names none; it is
// dtype.Default, which this package cannot import (see the package doc).
const DefaultDType = "f32"

// Names of the files in a data directory: workload.json, and per set i the
// directory set<i> with in0.f32, in1.f32, … and want.f64, little-endian.
const workloadFile = "workload.json"

func setDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("set%d", i)) }
func inputFile(dir string, set, i int) string {
	return filepath.Join(setDir(dir, set), fmt.Sprintf("in%d.f32", i))
}
func wantFile(dir string, set int) string { return filepath.Join(setDir(dir, set), "want.f64") }

// Write writes w and sets to dir, which must exist. Sets must match w.
func Write(dir string, w Workload, sets []Set) error {
	if len(sets) != len(w.Sets) || len(sets) == 0 {
		return fmt.Errorf("harness: %d sets for a workload of %d", len(sets), len(w.Sets))
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, workloadFile), b, 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	for s, set := range sets {
		if len(set.Ins) != len(w.Inputs) || len(set.Want) != w.Output || set.SetInfo != w.Sets[s] {
			return fmt.Errorf("harness: set %d (%s) does not match the workload", s, set.Name)
		}
		if err := os.MkdirAll(setDir(dir, s), 0o755); err != nil {
			return fmt.Errorf("harness: %w", err)
		}
		for i, in := range set.Ins {
			if len(in) != w.Inputs[i] {
				return fmt.Errorf("harness: set %s: input %d has %d elements, want %d", set.Name, i, len(in), w.Inputs[i])
			}
			if err := os.WriteFile(inputFile(dir, s, i), EncodeFloat32s(in), 0o644); err != nil {
				return fmt.Errorf("harness: %w", err)
			}
		}
		buf := make([]byte, 0, 8*len(set.Want))
		for _, v := range set.Want {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		if err := os.WriteFile(wantFile(dir, s), buf, 0o644); err != nil {
			return fmt.Errorf("harness: %w", err)
		}
	}
	return nil
}

// Read reads what Write wrote to dir.
func Read(dir string) (Workload, []Set, error) {
	var w Workload
	b, err := os.ReadFile(filepath.Join(dir, workloadFile))
	if err != nil {
		return w, nil, err
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return w, nil, fmt.Errorf("%s: %w", workloadFile, err)
	}
	if len(w.Sets) == 0 {
		return w, nil, fmt.Errorf("%s: no input sets", workloadFile)
	}
	if w.DType == "" {
		w.DType = DefaultDType
	}
	sets := make([]Set, len(w.Sets))
	for s := range sets {
		sets[s].SetInfo = w.Sets[s]
		for i, n := range w.Inputs {
			b, err := readSized(inputFile(dir, s, i), 4*n)
			if err != nil {
				return w, nil, err
			}
			sets[s].Ins = append(sets[s].Ins, DecodeFloat32s(b))
		}
		b, err := readSized(wantFile(dir, s), 8*w.Output)
		if err != nil {
			return w, nil, err
		}
		sets[s].Want = make([]float64, w.Output)
		for j := range sets[s].Want {
			sets[s].Want[j] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
		}
	}
	return w, sets, nil
}

// readSized reads the file path, which must hold size bytes.
func readSized(path string, size int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, len(b), size)
	}
	return b, nil
}

// EncodeFloat32s returns xs as little-endian float32.
func EncodeFloat32s(xs []float32) []byte {
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// DecodeFloat32s reads little-endian float32 from b.
func DecodeFloat32s(b []byte) []float32 {
	xs := make([]float32, len(b)/4)
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return xs
}
