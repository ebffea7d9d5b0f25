// Command harness checks and times kernels for autotune's CPU backend
// (package measure/cpu). It is built in a throw-away module with the
// kernels of one tuning batch, or of one bench, and a table of them: the
// builder copies this package there and adds table.go, which fills table
// in an init function, and nothing else is generated.
//
// It reads the workload, the input sets and the float64 references from
// the directory -data (package measure/harness writes and reads them) and
// speaks the protocol of that package on stdout: ready, then start and
// result for each kernel, then done.
//
// Tuning (the default) runs the candidates -ids, in that order:
//
//	harness -data DIR -ids 0,2,5 -warmup 3 -samples 10 -mintime 20ms -minsample 10µs -best 0 -slowfactor 10 -slowsamples 3 -budget 10s
//
// For each candidate it checks the output on every input set (poisoned
// with NaN before each call) and that the inputs were left alone, and
// sends checked with the slowest call of the check and the calls its
// timing will make, so that the parent can give it a deadline of its own.
// Then it times it on the first set: it finds the calls per sample, a power of
// two, that make a sample last -minsample (timed twice, so that one
// interruption does not decide it), runs -warmup untimed samples, and
// times samples until there are -samples of them adding up to -mintime,
// or 10,000 of them. A candidate whose first call takes more than -slowfactor times
// the fastest sample known (-best, or a candidate timed before it) gets
// -slowsamples samples and no warm-up, and so does one whose full timing
// would take longer than -budget at the speed of its check. A panic is the candidate's crash,
// reported with the head of its stack; the harness goes on.
//
// With -evidence (the default) it also gathers the evidence of contention
// for each candidate (sampleJudged), with its thread count (Entry.Threads):
// the process's CPU time and preemptions over each sample, which then lasts at least 200 µs, the
// steal of the timing, the machine's runnable tasks before and after, and
// a calibration probe after the samples, judged
// against -probe, the fastest probe the parent has seen; disturbed
// samples are taken again and left out when enough others are not.
//
// -bench times every entry of the table in interleaved rounds instead:
//
//	harness -bench -data DIR -warmup 3 -samples 30 -mintime 1s -minsample 10µs -settle 10ms
//
// It checks the entries that verify, as above, and counts what a call of
// each allocates; if all passed, it runs -warmup untimed rounds and then
// rounds of one sample of each entry, each round starting one entry later,
// each sample after untimed calls of its entry lasting -settle, until
// there are -samples rounds adding up to -mintime, and sends each as a
// round event.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure/harness"
)

// A Kernel runs a kernel whose elements are float32 on out and the
// inputs, in argument order.
type Kernel func(out []float32, ins [][]float32)

// A Kernel16 runs a kernel whose elements are stored in 16 bits, as the
// workload's dtype (bf16, f16) encodes them.
type Kernel16 func(out []uint16, ins [][]uint16)

// An Entry is a kernel of the build: Fn, or Fn16 for a kernel of a 16-bit
// dtype. A bench of a 16-bit workload may hold both: its float32
// baselines run on the same values, decoded.
type Entry struct {
	ID     int    // tuning: the candidate's index in the batch; bench: the entry's index
	Name   string // bench: tuned, a baseline's name, peak or floor
	Verify bool   // bench: check the output against the reference (not the peak and the floor)
	Skip   []int  // bench: the input sets Verify leaves out (kernels.Baseline.KnownWrong)
	// Threads is how many goroutines the kernel runs on (its threads knob,
	// 1 without one; harness.Judge); 0 where not known (bench's entries).
	Threads int
	Fn      Kernel
	Fn16    Kernel16
}

// table holds the kernels of this build; the generated table.go fills it.
var table []Entry

// proto is the original stdout. main points os.Stdout at stderr, so that a
// kernel that prints cannot corrupt the protocol.
var proto = harness.Sender{W: os.Stdout}

// send writes e, and exits when the parent is gone.
func send(e harness.Event) {
	if proto.Send(e) != nil {
		os.Exit(1)
	}
}

// maxReps bounds the calls per sample, so that calibrating ends even for a
// kernel too fast for the clock to see.
const maxReps = 1 << 24

// maxSamples bounds the samples of a candidate, whatever -mintime asks:
// ten thousand settle a median, and a record holds at most 100,000
// (tunedb.MaxSamples).
const maxSamples = 10_000

// settings says how long to time each kernel.
type settings struct {
	warmup, minSamples int
	minTime, minSample time.Duration
	settle             time.Duration // bench: untimed calls of an entry before each of its samples (settle)
	bestNS             float64       // fastest sample known, this run's included; 0: none yet
	slowFactor         float64       // a first call slower than slowFactor × bestNS is clearly slow
	slowSamples        int
	budget             time.Duration // the most full timing may take; 0: no limit
	evidence           bool          // gather the evidence of contention (sampleJudged)
}

func main() {
	var s settings
	dataDir := flag.String("data", ".", "directory holding the workload, the inputs and the references")
	ids := flag.String("ids", "", "comma-separated candidates to run, in order (tuning)")
	bench := flag.Bool("bench", false, "time every entry in interleaved rounds")
	flag.IntVar(&s.warmup, "warmup", 3, "untimed samples (rounds) before timing")
	flag.IntVar(&s.minSamples, "samples", 10, "least number of timed samples (rounds); at most 10,000 are taken whatever -mintime asks")
	flag.DurationVar(&s.minTime, "mintime", 20*time.Millisecond, "least total time of the timed samples")
	flag.DurationVar(&s.minSample, "minsample", 10*time.Microsecond, "least time of one sample")
	flag.DurationVar(&s.settle, "settle", 10*time.Millisecond, "bench: untimed calls of an entry before each of its samples last at least this long (at least one call)")
	flag.Float64Var(&s.bestNS, "best", 0, "fastest known ns per call, 0 if none")
	flag.Float64Var(&s.slowFactor, "slowfactor", 10, "a candidate whose first timed call is this many times slower than the best is timed briefly")
	flag.IntVar(&s.slowSamples, "slowsamples", 3, "samples of a clearly slow candidate")
	flag.DurationVar(&s.budget, "budget", 0, "a candidate whose full timing would take longer is timed as clearly slow; 0 for no limit")
	flag.BoolVar(&s.evidence, "evidence", true, "gather the evidence of contention for each candidate and take disturbed samples again")
	flag.DurationVar(&probeBest, "probe", 0, "fastest known time of the calibration probe, 0 if none")
	flag.Parse()
	os.Stdout = os.Stderr

	// The parent holds stdin open: end of file means it is gone, and a
	// kernel that hangs must not outlive it. The buffer is made here, not
	// when the goroutine first runs, so that a bench does not count it as
	// an entry's allocation.
	buf := make([]byte, 512)
	go func() {
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				fmt.Fprintln(os.Stderr, "harness: stdin closed, so the runner is gone; exiting")
				os.Exit(1)
			}
		}
	}()

	w, sets, err := harness.Read(*dataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(2)
	}
	d := newData(w, sets)
	send(harness.Event{ID: -1, Event: harness.Ready})
	if *bench {
		runBench(d, s)
	} else {
		var entries []Entry
		for _, field := range strings.Split(*ids, ",") {
			e, ok := lookup(field)
			if !ok {
				fmt.Fprintf(os.Stderr, "harness: no candidate %q\n", field)
				os.Exit(2)
			}
			entries = append(entries, e)
		}
		tune(d, entries, s)
	}
	send(harness.Event{ID: -1, Event: harness.Done})
}

// lookup returns the entry of the table whose ID is field.
func lookup(field string) (Entry, bool) {
	id, err := strconv.Atoi(field)
	for _, e := range table {
		if err == nil && e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// data is the workload's input sets with the buffers kernels run on.
type data struct {
	w    harness.Workload
	sets []harness.Set
	ins  [][]float32 // what float32 kernels get: a copy of a set's inputs
	out  []float32

	// A workload of a 16-bit dtype (half) also has the inputs encoded,
	// for its kernels of that dtype (Entry.Fn16), and their output, which
	// a check decodes into out.
	half  dtype.DType
	ins16 [][]uint16
	out16 []uint16
}

func newData(w harness.Workload, sets []harness.Set) *data {
	d := &data{w: w, sets: sets, out: make([]float32, w.Output)}
	for _, n := range w.Inputs {
		d.ins = append(d.ins, make([]float32, n))
	}
	if dt := dtype.DType(w.DType); dt.Size() == 2 {
		d.half, d.out16 = dt, make([]uint16, w.Output)
		for _, n := range w.Inputs {
			d.ins16 = append(d.ins16, make([]uint16, n))
		}
	}
	d.use(0)
	return d
}

// use copies the inputs of set s into the kernels' buffers.
func (d *data) use(s int) {
	for i, in := range d.sets[s].Ins {
		copy(d.ins[i], in)
		if d.half != "" {
			for j, v := range in {
				d.ins16[i][j] = d.half.Encode(v)
			}
		}
	}
}

// call runs e's kernel once on the kernels' buffers.
func (d *data) call(e Entry) {
	if e.Fn16 != nil {
		e.Fn16(d.out16, d.ins16)
		return
	}
	e.Fn(d.out, d.ins)
}

// check runs e on every input set, each time with the output poisoned, and
// describes the first wrong output or written input, or returns "". It
// returns the slowest of its calls too, a first estimate of e's time. It
// leaves the first set in the buffers.
func (d *data) check(e Entry, skip []int) (msg string, slowest time.Duration) {
	defer d.use(0)
	for s, set := range d.sets {
		if slices.Contains(skip, s) {
			continue
		}
		d.use(s)
		var took time.Duration
		if e.Fn16 != nil {
			if d.half == "" {
				return "a kernel of 16-bit elements, but the workload is " + d.w.DType, 0
			}
			harness.Poison16(d.out16)
			t0 := time.Now()
			d.call(e)
			took = time.Since(t0)
			for i, h := range d.out16 {
				d.out[i] = d.half.Decode(h)
			}
		} else {
			harness.Poison(d.out)
			t0 := time.Now()
			d.call(e)
			took = time.Since(t0)
		}
		slowest = max(slowest, took)
		msg = harness.Check(d.out, set.Want, set.Rel, set.Abs)
		if msg == "" {
			msg = d.written(set.Ins)
		}
		if msg != "" {
			if len(d.sets) > 1 {
				msg = fmt.Sprintf("input set %s: %s", set.Name, msg)
			}
			return msg, slowest
		}
	}
	return "", slowest
}

// written describes how the kernels changed the inputs in the buffers,
// which held pristine, or returns "".
func (d *data) written(pristine [][]float32) string {
	if msg := harness.Changed(d.ins, pristine); msg != "" || d.half == "" {
		return msg
	}
	return harness.Changed16(d.ins16, pristine, d.half)
}

// changed describes how the kernels changed the first set's inputs since
// it was put in the buffers, and puts it back.
func (d *data) changed() string {
	msg := d.written(d.sets[0].Ins)
	d.use(0)
	return msg
}

// crash turns a kernel's panic, recovered as r, into its result: the
// panic and the head of its stack.
func crash(r any, stack []byte) harness.Event {
	return harness.Event{Status: harness.StatusCrash, Error: fmt.Sprintf("panic: %v\n\n%s", r, stack)}
}
