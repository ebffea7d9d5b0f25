package cuda

// WorkerArg is the first argument that makes the autotune binary (or a
// test binary of this package) serve as a worker: see [ServeWorker].
const WorkerArg = "cuda-worker"

// job is what the parent sends the worker on its stdin, as one JSON value.
type job struct {
	DriverPath string   // "" for libcuda.so.1 on the loader's path
	Arch       string   // sm_90
	Dir        string   // the input sets and their references (harness.Write)
	Samples    int      // timed launches, at least
	MinTimeNS  int64    // and at least this long
	Warmup     int      // untimed launches first
	Kernels    []kernel // in the order to run
	// Bench, when set, makes the worker bench Kernels[0] instead
	// (Measurer.Bench) and answer with one "bench" event.
	Bench *benchJob `json:",omitempty"`
}

// benchJob is what a bench needs beyond the tuned kernel.
type benchJob struct {
	TunedDoc     string
	Bytes, FLOPs float64 // of one call of the op in the workload's dtype
	BytesF32     float64 // the same in float32, what cuBLAS moves
	GEMM         []int   // M, N, K when the op is gemm: cuBLAS is benched too
}

type kernel struct {
	ID          int // index in the batch
	Source      string
	Entry       string
	Grid, Block [3]int
	SharedBytes int
}

// event is one line the worker writes on its stdout, as JSON: a "start"
// before each kernel, then its "result"; "fatal" when the worker cannot go
// on (no device, a wrong architecture) before any kernel; for a bench, one
// "bench" event, with the entries or an error.
type event struct {
	Kind string // start, result, fatal
	ID   int

	Status    string `json:",omitempty"`
	Error     string `json:",omitempty"`
	SamplesNS []float64
	BuildNS   int64
	RunNS     int64
	Registers int // per thread, from cuFuncGetAttribute
	LocalB    int // local memory per thread, bytes (spills)

	Bench []BenchResult `json:",omitempty"` // a bench's entries, with their samples
	Notes []string      `json:",omitempty"` // a bench's entries left out, and why
}
