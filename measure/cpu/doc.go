// Package cpu measures Go kernels on this machine: it is the CPU backend of
// package measure.
//
// A Measurer takes a batch (a template, a shape, the CPU target, configs)
// through two steps, a build and a run, and times each separately.
//
// # Build
//
// Each batch gets a throw-away module in a temporary directory:
//
//	go.mod           module autotuneharness, go 1.26, no requirements
//	k007/k007.go     candidate 7 (the batch index): the template's Go emitter's Kernel, package k007
//	main.go, ...     the harness: a copy of the Go program in measure/cpu/harness
//	measure/...      copies of the packages it imports (measure/harness, measure/cpu/peak)
//	table.go         generated: the harness's table of the candidates that build
//	harness          the binary
//	workload.json, set0/in0.f32, ...  the input sets and their references (measure/harness)
//
// The harness is a real Go program with tests of its own; the builder
// copies it (go:embed) and generates only the kernels and table.go, a
// list of entries that call each candidate's Kernel with the inputs.
// Every candidate has a package of its own, so that helpers a template
// emits beside the kernel cannot clash, and so that go build reports every
// failing candidate at once (the compiler stops after ten errors per
// package) and keeps the compiled packages of the others in its cache when
// the batch is built again without the failures. One go build builds the
// batch, with GOEXPERIMENT=simd (for simd/archsimd), GOWORK=off, an empty
// GOFLAGS, GOTOOLCHAIN=local and CGO_ENABLED=0, using the normal build cache,
// for the architecture autotune runs as (GOARCH): the kernels are the
// target's form (kernels.ArchOf: amd64, or arm64 with NEON), and the
// harness starts through AUTOTUNE_EXEC_WRAPPER when it is set (package
// emul), as under qemu-user.
// A candidate whose source cannot be emitted, or whose package the build
// output blames ("k007/k007.go:12:3: ..."), becomes build_error with those
// messages; table.go is generated again without it and the batch is rebuilt,
// until what is left builds. Output that blames no candidate is an error.
//
// # Run
//
// Every candidate is checked on each of the template's input sets
// (Template.Inputs: for softmax, logits in ±[0.125, 4], logits in the
// hundreds and rows with -Inf entries; for GEMM, inputs in ±[0.125, 4] and
// 256 times that; for attention, moderate and large scores; by default,
// ±[0.125, 4] and 256 times that), because one tame set lets real bugs
// through: a softmax that does not subtract the row's max passes on small
// logits. The sets are drawn once per workload from PCGs seeded with
// Options.Seed (measure.Inputs: never zero, which hides bugs), and
// Template.Reference computes each one's expected output in float64; the
// Measurer keeps them for the next batch of the same workload. They are
// written to the batch directory once per batch (measure/harness).
//
// The harness runs the candidates one after the other in a single process:
//
//	harness -data DIR -ids 0,2,5 -warmup 3 -samples 10 -mintime 20ms -minsample 10µs -budget 10s
//
// For each candidate and each input set it poisons the output with NaN,
// calls the kernel once and compares the output with the reference: an
// element is wrong where |got-want| > abs + rel×|want| (Template.Tolerance,
// or the set's own, kernels.InputSet.Tolerance),
// where exactly one of got and want is NaN, or where want is infinite and
// got is not the same infinity (harness.Check); and a kernel must not write
// to its inputs. A candidate that passes says so (checked), with the
// slowest call of its check and the calls its timing will make. Then, on
// the first input set, it finds
// the number k of calls (a power of two) that makes one sample last at least
// -minsample (in two timings, so that one interruption of a loaded machine
// cannot leave k at 1 for a fast kernel), runs -warmup untimed samples, and
// times samples of k calls until it has at least -samples of them and they
// add up to at least -mintime, or it has 10,000. Each sample is the mean
// time of one call, in ns. A clearly slow candidate gets Options.SlowSamples
// samples and no warm-up instead: one whose first timed call is
// Options.SlowFactor times slower than the fastest known, and one whose
// full timing would take longer than -budget (Options.TimingBudget) at
// the speed of its check.

// Unless Options.NoEvidence is set (harness -evidence=false), the harness
// gathers the evidence of contention while it times (measure.Disturbance):
// the process's CPU time and involuntary context switches over each
// sample (CLOCK_PROCESS_CPUTIME_ID and getrusage on Linux, getrusage on
// other Unix systems), the steal of /proc/stat over the candidate's
// timing, and a calibration probe, a short loop of multiply-adds on one
// goroutine per core (package measure/cpu/peak), timed after the samples
// against the fastest probe the Measurer has seen (-probe), and the
// machine's runnable tasks not its own (/proc/loadavg less its threads
// in state R) before and after the samples.
// harness.Judge marks a sample disturbed when it lost a tenth of its wall
// time to other work: the CPU time it fell short of what an undisturbed
// sample of the kernel gets (one core's worth on one goroutine; on more,
// the samples' median between one core and the candidate's thread count,
// which the harness's table carries), per core, beyond what the late
// accounting of the other threads' time can hide (a tick per other
// thread). A preemption that cost nothing does not count. A kernel on
// several goroutines whose samples, preempted, lost a quarter together
// against its thread count's cores had fewer cores than it runs on, and
// every sample counts; so does every sample when other work was runnable
// before and after the samples, when steal took a quarter of the cores'
// time, or when the probe ran 1.6 times slower than its best, since that
// means another process held a core that the configs compared with this
// one may need. Disturbed samples are taken again, up to as many again as the first round took (within the
// deadline below); the result keeps only the undisturbed ones when there
// are -samples of them, and every one otherwise. The evidence costs two
// system calls per sample, whose samples then last at least 200 µs
// whatever -minsample says, and per candidate a few file reads (one per
// thread of the harness) and a probe of well under a millisecond.
//
// # Protocol
//
// The harness speaks the protocol of package measure/harness (whose Event
// and Sequence the runner uses too): one JSON object per line to stdout,
// each with a system call of its own, and nothing else there (it points
// os.Stdout at stderr, in case a kernel prints):
//
//	{"id":-1,"event":"ready"}                         inputs loaded
//	{"id":7,"event":"start"}                          candidate 7 is about to run
//	{"id":7,"event":"checked","call_ns":2.1e6,"calls":15}  it passed its check; timing follows
//	{"id":7,"event":"result","status":"ok","reps":4,"samples_ns":[812.5,...],"evidence":{...},"probe_ns":9.1e4}
//	{"id":7,"event":"result","status":"wrong_answer","error":"input set large: out[3] = ..."}
//	{"id":7,"event":"result","status":"crash","error":"panic: ...\n\ngoroutine 1 ..."}
//	{"id":-1,"event":"done"}                          every candidate has a result
//
// Because start comes before the kernel runs, the runner always knows which
// candidate was running when the harness died; because checked comes
// before the timing, it knows how long the timing should take. The harness
// is built from the source the runner embeds, so the two always speak the
// same protocol; the runner still follows a harness that sends no checked
// (the limit before the check then covers the whole candidate).
//
// # Failures
//
//   - invalid: the config breaks a constraint of Template.Space; not built.
//   - build_error: not emitted, not valid Go, or not compiled.
//   - wrong_answer: the check above failed.
//   - crash: the kernel panicked (the harness recovers and goes on), or the
//     harness died while the candidate ran: a fault the runtime cannot turn
//     into a panic, a fatal error, os.Exit. The error holds the exit status or
//     signal and the start and end of stderr (for a Go crash, the fatal error
//     and the crashing goroutine). The runner starts a new harness for the
//     candidates after it.
//   - timeout: the candidate ran past its limit. The runner kills the
//     harness's process group and goes on with a new harness. The limit is
//     Options.Timeout when set; otherwise one derived from Batch.Best (10s
//     without one) until the candidate has passed its check, and from then
//     on 2s plus three times what its checked event says timing will take
//     (call × calls), at most 2min. So a slow but correct candidate, which
//     a limit for the whole batch would kill, is timed, while one that
//     hangs is killed within seconds of when it should have finished.
//
// runtime_error is not used here. A harness that fails before its first
// candidate, breaks the protocol or stalls between candidates is an error of
// Measure, and so is a cancelled context, which kills the harness at once.
//
// # Time
//
// Result.BuildNS is an equal share of the batch's build time (emitting,
// writing and every go build) for each candidate that was not invalid.
// Result.RunNS is the candidate's own time, from its start event to its
// result (or death, or kill) as the runner saw it, plus an equal share of
// the run time spent outside any candidate (computing and writing inputs,
// starting harnesses). Over a batch, the shares add up to the build and run
// wall times.
//
// With the defaults, a batch of 64 one-millisecond kernels takes under a
// second to build and about two to run on two cores: over a thousand
// candidates a minute (BenchmarkMeasure).
//
// # Bench
//
// Measurer.Bench serves autotune bench: one module with the tuned kernel and
// the template's baselines, a package each, and the same harness, run with
// -bench, whose table adds an FMA peak (package measure/cpu/peak, Go
// assembly) and a memory-copy floor (bench.go). It checks the kernels
// once, counts the heap allocations of a call of each, and then times
// everything in interleaved rounds, one sample of each per round, each
// after 10 ms of untimed calls of the entry (at least one; the harness's
// -settle), so that every ratio is measured side
// by side in one process. Each round carries what the process used over
// each sample; the harness makes up for rounds in which an entry's sample
// was disturbed (harness.Judge, up to as many rounds again), and such
// rounds are left out whole when BenchBatch.MinSamples others remain
// (BenchResult.Dropped). It reuses the
// module layout, the data files, the checks and the process handling
// above.
package cpu
