package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/autotune-dev/autotune/measure/cpu/peak"
	"github.com/autotune-dev/autotune/measure/harness"
)

// runBench checks every entry of the table and counts its allocations;
// if all passed, it times them in rounds. A wrong entry makes every ratio
// meaningless: then nothing is timed.
func runBench(d *data, s settings) {
	reps := make([]int, len(table))
	allOK := true
	for i, e := range table {
		send(harness.Event{ID: i, Event: harness.Start})
		r := prepare(d, e, s.minSample)
		if msg := d.changed(); msg != "" && r.Status == harness.StatusOK {
			r = harness.Event{Status: harness.StatusWrongAnswer, Error: msg}
		}
		r.ID, r.Event = i, harness.Result
		send(r)
		reps[i], allOK = r.Reps, allOK && r.Status == harness.StatusOK
	}
	if allOK {
		rounds(d, reps, s)
	}
}

// prepare checks e's output when e verifies, counts what a call allocates,
// and finds the calls per sample: a power of two that makes a sample last
// minSample. A panic is the entry's crash.
func prepare(d *data, e Entry, minSample time.Duration) (r harness.Event) {
	defer func() {
		if p := recover(); p != nil {
			stack := make([]byte, 2048)
			r = crash(p, stack[:runtime.Stack(stack, false)])
		}
	}()
	if e.Verify {
		if msg, _ := d.check(e, e.Skip); msg != "" {
			return harness.Event{Status: harness.StatusWrongAnswer, Error: msg}
		}
	} else {
		d.call(e)
	}
	allocBytes, allocs := allocated(d, e)
	for reps := 1; ; reps *= 2 {
		t0 := time.Now()
		for range reps {
			d.call(e)
		}
		if time.Since(t0) >= minSample || reps >= maxReps {
			return harness.Event{Status: harness.StatusOK, Reps: reps, AllocBytes: allocBytes, Allocs: allocs}
		}
	}
}

// allocHeadroomGiB is how much more memory than it holds, in GiB, the
// harness lets the two calls that count allocations allocate, with the
// collector off, before the memory limit starts a collection anyway.
const allocHeadroomGiB = 4

// allocated calls e twice and returns the bytes and the objects that the
// call that allocated fewer bytes allocated on the heap, on every
// goroutine, from the runtime's exact counts (ReadMemStats flushes the
// per-P caches): what a call needs beyond its inputs and output, goroutine
// stacks aside. The collector is off meanwhile (a cycle would start
// workers, and waiting for it allocates), unless the calls allocate so
// much that the memory limit starts one. The runtime may still allocate
// for itself during a call, for a new thread say, but hardly during both.
func allocated(d *data, e Entry) (bytes, objects uint64) {
	gc := debug.SetGCPercent(-1) // waits for a cycle in progress
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	limit := debug.SetMemoryLimit(int64(before.Sys-before.HeapReleased) + allocHeadroomGiB<<30)
	bytes = math.MaxUint64
	for range 2 {
		runtime.ReadMemStats(&before)
		d.call(e)
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n < bytes {
			bytes, objects = n, after.Mallocs-before.Mallocs
		}
	}
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(gc)
	return bytes, objects
}

// rounds times the entries in rounds of one sample of each, after warmup
// untimed rounds, until there are minSamples rounds and the samples add up
// to minTime, then, while fewer than minSamples rounds are undisturbed,
// up to as many rounds again. Each round starts one entry later
// than the one before, so that every entry takes every place in a round
// as often, and drift of the machine falls on all of them alike. Each
// timed round is sent as it ends, with what the process used over each
// sample (the parent leaves the disturbed rounds out).
//
// Before each sample, an entry runs untimed (settle): tuning times a
// kernel's samples back to back, after its check, calibration and warm-up
// have run it for some milliseconds, and a bench that timed an entry right
// after another one's long single-threaded call would charge it for waking
// the idle cores (on a VM, the hypervisor's idle vCPUs) and for the other
// entry's cache footprint: the two-goroutine memory floor of a GEMM 256³
// bench read 21–52 µs that way, and 5.7–9 µs after one untimed call.
func rounds(d *data, reps []int, s settings) {
	var total time.Duration
	used := make([][]harness.Sample, len(table)) // per entry, over the timed rounds
	r := -s.warmup
	for ; r < s.minSamples || total < s.minTime; r++ {
		total += round(d, reps, r, s, used)
	}
	// Rounds in which an entry's sample was disturbed are made up for,
	// up to as many again, so that the parent can leave them out and keep
	// minSamples rounds (each entry judged against its own samples of the
	// first rounds).
	refs := make([]float64, len(table))
	for i := range table {
		refs[i] = harness.Reference(used[i])
	}
	for extra := 0; extra < r && cleanRounds(used, refs) < s.minSamples; extra++ {
		round(d, reps, r+extra, s, used)
	}
}

// round times round r (warm-up rounds are negative) and sends it when it
// is timed, adding what each entry's sample used to used; it returns the
// time of its timed samples.
func round(d *data, reps []int, r int, s settings, used [][]harness.Sample) time.Duration {
	var m meter
	var total time.Duration
	samples := make([]float64, len(table))
	for j := range table {
		i := (r + s.warmup + j) % len(table)
		e := table[i]
		settle(d, e, s.settle)
		clearUpper() // the previous entry's vector code must not slow this one
		m.start()
		t0 := time.Now()
		for range reps[i] {
			d.call(e)
		}
		took := time.Since(t0)
		m.stop(took)
		samples[i] = float64(took) / float64(reps[i])
		total += took
	}
	if r < 0 {
		return 0
	}
	usage := make([]harness.Sample, len(table))
	for j, u := range m.samples {
		i := (r + s.warmup + j) % len(table)
		usage[i] = u
		used[i] = append(used[i], u)
	}
	send(harness.Event{ID: -1, Event: harness.Round, SamplesNS: samples, Usage: usage})
	return total
}

// settle calls e untimed until at least d has passed, and at least once,
// so that its sample finds the machine as a run of its own calls leaves
// it. One call was not enough: a softmax 4096×1024 on two goroutines, 0.7
// ms a call, read a bench median of 0.9–1.3 ms after one untimed call and
// 0.68–0.76 ms after 10 ms of them, as in tuning (0.69 ms), on a quiet
// 2-vCPU VM, while the entries before it (a 45 ms single-threaded loop, a
// copy, an FMA loop) left the cache as the one call did. What takes
// milliseconds rather than calls to settle there, the clock of a core or
// the hypervisor's scheduling of an idle vCPU, was not told apart.
func settle(d *data, e Entry, least time.Duration) {
	for t0 := time.Now(); ; {
		d.call(e)
		if time.Since(t0) >= least {
			return
		}
	}
}

// cleanRounds returns how many rounds no entry's sample was disturbed in,
// each judged against its entry's reference share.
func cleanRounds(used [][]harness.Sample, refs []float64) int {
	if len(used) == 0 {
		return 0
	}
	clean := 0
	for r := range used[0] {
		ok := true
		for i, u := range used {
			ok = ok && !harness.Disturbed(u[r], refs[i], 0)
		}
		if ok {
			clean++
		}
	}
	return clean
}

// floorKernel returns the memory floor: a kernel that copies the first n
// elements of its first input to its output, in threads equal parts on
// threads goroutines, the caller's included; the least memory traffic of
// a kernel that reads its input and writes its output once. Starting the
// goroutines at each call, as the tuned kernels do, puts their cost in the
// floor too.
func floorKernel(n, threads int) Kernel { return copyFloor[float32](n, threads) }

// floorKernel16 is floorKernel for a workload stored in 16 bits: the
// floor of its kernels moves half the bytes of a float32 one.
func floorKernel16(n, threads int) Kernel16 { return copyFloor[uint16](n, threads) }

func copyFloor[E float32 | uint16](n, threads int) func(out []E, ins [][]E) {
	if threads <= 1 {
		return func(out []E, ins [][]E) { copy(out[:n], ins[0][:n]) } // allocates nothing
	}
	return func(out []E, ins [][]E) {
		out, in := out[:n], ins[0][:n]
		var wg sync.WaitGroup
		for t := 1; t < threads; t++ {
			wg.Go(func() { copy(out[t*n/threads:(t+1)*n/threads], in[t*n/threads:(t+1)*n/threads]) })
		}
		copy(out[:n/threads], in[:n/threads])
		wg.Wait()
	}
}

// peakDotKernel returns the bf16 peak: a kernel that runs
// peak.RunDot(goroutines, steps) and writes its result to out[0].
func peakDotKernel(goroutines, steps int) Kernel {
	return func(out []float32, _ [][]float32) { out[0] = peak.RunDot(goroutines, steps) }
}

// peakKernel returns the FMA peak: a kernel that runs peak.Run(lanes,
// goroutines, steps) and writes its result to out[0], reading no input.
func peakKernel(lanes, goroutines, steps int) Kernel {
	return func(out []float32, _ [][]float32) { out[0] = peak.Run(lanes, goroutines, steps) }
}
