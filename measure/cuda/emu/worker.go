package emu

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WorkerArg is the first argument that makes the autotune binary (or a test
// binary of a package that checks kernels) serve as an emulation worker:
// see [ServeWorker].
const WorkerArg = "cuda-emu-worker"

// Order is an order in which the emulator runs the blocks of the grid and
// the threads of each block up to their next synchronisation: "forward",
// "reverse" or "shuffle" (seeded).
type Order struct {
	Blocks, Threads string
}

func (o Order) String() string { return "blocks " + o.Blocks + ", threads " + o.Threads }

// Orders are the orders a check runs, each of which must give the same
// output: a thread that reads shared memory another wrote without a barrier
// between them reads before the write in one of them.
var Orders = []Order{{"forward", "forward"}, {"reverse", "reverse"}, {"shuffle", "shuffle"}}

var orderModes = map[string]int64{"forward": 0, "reverse": 1, "shuffle": 2}

// job is what the parent sends a worker on its stdin, as one JSON value.
type job struct {
	Lib         string // the library Build made
	Grid, Block [3]int
	SharedBytes int
	Extents     []int32 `json:",omitempty"` // int arguments after the pointers
	Dir         string  // holds in0.raw, ...; the worker writes out0.raw, ...
	InLens      []int   // elements
	OutLen      int
	ElemSize    int // bytes of an element of every buffer: 4, or 2 for bf16 and f16
	Orders      []Order
	Seed        uint64
}

// reply is the worker's answer on its stdout. A fault ends the worker
// without one; emu.h's handler then says what it hit on stderr.
type reply struct {
	Error        string `json:",omitempty"` // the emulator's report
	Order        int    // the order it came from
	FloatAtomics bool   // the kernel added floats atomically
	Wrote        string `json:",omitempty"` // an output written out of bounds
}

// The files of a job hold each buffer's elements as they are in memory,
// little-endian: float32, or the bits of bf16 and f16.
func inputFile(i int) string  { return fmt.Sprintf("in%d.raw", i) }
func outputFile(i int) string { return fmt.Sprintf("out%d.raw", i) }

// ServeWorker runs the job the parent writes on stdin and answers on stdout,
// then returns the process's exit code. The autotune command calls it for
// its hidden argument WorkerArg; so do the tests' TestMain functions.
func ServeWorker(stdin io.Reader, stdout io.Writer) int {
	var j job
	if err := json.NewDecoder(stdin).Decode(&j); err != nil {
		fmt.Fprintf(os.Stderr, "emu worker: reading the job: %v\n", err)
		return 1
	}
	r, err := serve(j)
	if err != nil {
		fmt.Fprintf(os.Stderr, "emu worker: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(r); err != nil {
		return 1
	}
	return 0
}

// readFile reads a buffer of n elements of size bytes from path.
func readFile(path string, n, size int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) != size*n {
		return nil, fmt.Errorf("%s holds %d bytes, want %d", filepath.Base(path), len(b), size*n)
	}
	return b, nil
}
