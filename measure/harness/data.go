package harness

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"unsafe"
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
// The sets are written at once, one goroutine each: a workload people
// tune on GPUs (softmax 16384×16384) has gigabytes of them.
func Write(dir string, w Workload, sets []Set) error {
	if len(sets) != len(w.Sets) || len(sets) == 0 {
		return fmt.Errorf("harness: %d sets for a workload of %d", len(sets), len(w.Sets))
	}
	for s, set := range sets {
		if len(set.Ins) != len(w.Inputs) || len(set.Want) != w.Output || set.SetInfo != w.Sets[s] {
			return fmt.Errorf("harness: set %d (%s) does not match the workload", s, set.Name)
		}
		for i, in := range set.Ins {
			if len(in) != w.Inputs[i] {
				return fmt.Errorf("harness: set %s: input %d has %d elements, want %d", set.Name, i, len(in), w.Inputs[i])
			}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, workloadFile), b, 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return eachSet(len(sets), func(s int) error {
		if err := os.MkdirAll(setDir(dir, s), 0o755); err != nil {
			return fmt.Errorf("harness: %w", err)
		}
		for i, in := range sets[s].Ins {
			if err := writeFloats(inputFile(dir, s, i), in); err != nil {
				return err
			}
		}
		return writeFloats(wantFile(dir, s), sets[s].Want)
	})
}

// Read reads what Write wrote to dir, the sets at once.
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
	err = eachSet(len(sets), func(s int) (err error) {
		sets[s].SetInfo = w.Sets[s]
		sets[s].Ins = make([][]float32, len(w.Inputs))
		for i, n := range w.Inputs {
			if sets[s].Ins[i], err = readFloats[float32](inputFile(dir, s, i), n); err != nil {
				return err
			}
		}
		sets[s].Want, err = readFloats[float64](wantFile(dir, s), w.Output)
		return err
	})
	if err != nil {
		return w, nil, err
	}
	return w, sets, nil
}

// eachSet calls f for sets 0..n-1, each on a goroutine of its own, and
// returns their errors joined (nil when there are none).
func eachSet(n int, f func(s int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for s := range n {
		wg.Go(func() { errs[s] = f(s) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// nativeLittleEndian reports whether this machine stores numbers as the
// files do (amd64 and arm64 do), so that a slice's memory is a file's
// bytes and is written and read without a conversion: an element at a
// time, gigabytes took a minute.
var nativeLittleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// memory is xs's memory as bytes.
func memory[T float32 | float64](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(xs)*int(unsafe.Sizeof(xs[0])))
}

// writeFloats writes xs to path, little-endian.
func writeFloats[T float32 | float64](path string, xs []T) error {
	b := memory(xs)
	if !nativeLittleEndian {
		b = make([]byte, 0, len(b))
		for _, x := range xs {
			switch x := any(x).(type) {
			case float32:
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			case float64:
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// readFloats reads the n little-endian numbers of path, which must hold
// exactly those.
func readFloats[T float32 | float64](path string, n int) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	xs := make([]T, n)
	size := n * int(unsafe.Sizeof(xs[0]))
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if fi.Size() != int64(size) {
		return nil, fmt.Errorf("%s: %d bytes, want %d", path, fi.Size(), size)
	}
	b := memory(xs)
	if !nativeLittleEndian {
		b = make([]byte, size)
	}
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !nativeLittleEndian {
		for i := range xs {
			switch p := any(&xs[i]).(type) {
			case *float32:
				*p = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			case *float64:
				*p = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		}
	}
	return xs, nil
}
