package cpu

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/measure"
)

// eventRound carries one sample of every entry of a bench, in entry order.
const eventRound = "round"

// allocHeadroomGiB is how much more memory than it holds, in GiB, the
// bench harness lets the two calls that count allocations allocate, with
// the collector off, before the memory limit starts a collection anyway
// (see allocated in the harness).
const allocHeadroomGiB = 4

// renderBenchHarness returns the source of the bench module's main.go,
// which checks, calibrates and times entries (each the function Kernel of
// the package entries[i].pkg) in interleaved rounds. See Bench for what it
// does and runBench for its protocol.
func renderBenchHarness(w workload, entries []benchEntry) ([]byte, error) {
	f := jen.NewFile("main")
	f.HeaderComment(generatedHeader)
	for _, line := range strings.Split(benchHarnessDoc, "\n") {
		f.PackageComment(line)
	}
	for _, e := range entries {
		f.ImportName(harnessModule+"/"+e.pkg, e.pkg)
	}

	addWorkload(f, w)
	f.Add(comment("entries are what the bench times, in the order of its results; verify says\nwhether an entry's output is compared with the reference."))
	var rows []jen.Code
	for _, e := range entries {
		rows = append(rows, jen.Values(jen.Qual(harnessModule+"/"+e.pkg, kernelName), jen.Lit(e.checked)))
	}
	f.Var().Id("entries").Op("=").Index().Struct(
		jen.Id("fn").Id("kernelFunc"),
		jen.Id("verify").Bool(),
	).Custom(jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}, rows...)
	f.Line()
	addProtocol(f, w)

	fail := jen.Block(
		jen.Qual("fmt", "Fprintf").Call(jen.Qual("os", "Stderr"), jen.Lit("bench harness: %v\n"), jen.Err()),
		jen.Qual("os", "Exit").Call(jen.Lit(2)),
	)
	ok := jen.Lit(string(measure.StatusOK))
	f.Func().Id("main").Params().Block(
		jen.Id("dataDir").Op(":=").Qual("flag", "String").Call(jen.Lit(flagData), jen.Lit("."), jen.Lit("directory holding the inputs and the reference")),
		jen.Id("warmup").Op(":=").Qual("flag", "Int").Call(jen.Lit(flagWarmup), jen.Lit(defaultWarmup), jen.Lit("untimed rounds before timing")),
		jen.Id("minSamples").Op(":=").Qual("flag", "Int").Call(jen.Lit(flagSamples), jen.Lit(DefaultBenchSamples), jen.Lit("least number of timed rounds")),
		jen.Id("minTime").Op(":=").Qual("flag", "Duration").Call(jen.Lit(flagMinTime), durationLit(DefaultBenchTime), jen.Lit("least total time of the timed samples, all entries together")),
		jen.Id("minSample").Op(":=").Qual("flag", "Duration").Call(jen.Lit(flagMinSample), durationLit(defaultMinSampleTime), jen.Lit("least time of one sample")),
		jen.Qual("flag", "Parse").Call(),
		jen.Qual("os", "Stdout").Op("=").Qual("os", "Stderr"),
		comment("The runner holds stdin open: end of file means it is gone. The buffer\nis made here, not when the goroutine first runs (as io.Copy's would be),\nso that it is not counted as an entry's allocation."),
		jen.Id("buf").Op(":=").Make(jen.Index().Byte(), jen.Lit(512)),
		jen.Go().Func().Params().Block(
			jen.For().Block(
				jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Qual("os", "Stdin").Dot("Read").Call(jen.Id("buf")), jen.Err().Op("!=").Nil()).Block(
					jen.Qual("os", "Exit").Call(jen.Lit(1)),
				),
			),
		).Call(),
		jen.Line(),
		jen.List(jen.Id("ins"), jen.Id("want"), jen.Err()).Op(":=").Id("load").Call(jen.Op("*").Id("dataDir")),
		jen.If(jen.Err().Op("!=").Nil()).Add(fail),
		jen.Id("pristine").Op(":=").Make(jen.Index().Index().Float32(), jen.Len(jen.Id("ins"))),
		jen.For(jen.List(jen.Id("i"), jen.Id("in")).Op(":=").Range().Id("ins")).Block(
			jen.Id("pristine").Index(jen.Id("i")).Op("=").Qual("slices", "Clone").Call(jen.Id("in")),
		),
		jen.Id("out").Op(":=").Make(jen.Index().Float32(), jen.Id("outLen")),
		jen.Id("send").Call(jen.Id("event").Values(jen.Dict{jen.Id("ID"): jen.Lit(-1), jen.Id("Event"): jen.Lit(eventReady)})),
		jen.Line(),
		jen.Id("reps").Op(":=").Make(jen.Index().Int(), jen.Len(jen.Id("entries"))),
		jen.Id("allOK").Op(":=").True(),
		jen.For(jen.List(jen.Id("i"), jen.Id("e")).Op(":=").Range().Id("entries")).Block(
			jen.Id("send").Call(jen.Id("event").Values(jen.Dict{jen.Id("ID"): jen.Id("i"), jen.Id("Event"): jen.Lit(eventStart)})),
			jen.Id("r").Op(":=").Id("prepare").Call(jen.Id("e").Dot("fn"), jen.Id("e").Dot("verify"), jen.Id("out"), jen.Id("ins"), jen.Id("want"), jen.Op("*").Id("minSample")),
			jen.If(jen.Id("msg").Op(":=").Id("changed").Call(jen.Id("ins"), jen.Id("pristine")), jen.Id("msg").Op("!=").Lit("").Op("&&").Id("r").Dot("Status").Op("==").Add(ok)).Block(
				jen.Id("r").Op("=").Id("event").Values(jen.Dict{jen.Id("Status"): jen.Lit(string(measure.StatusWrongAnswer)), jen.Id("Error"): jen.Id("msg")}),
			),
			jen.For(jen.List(jen.Id("j"), jen.Id("p")).Op(":=").Range().Id("pristine")).Block(
				jen.Copy(jen.Id("ins").Index(jen.Id("j")), jen.Id("p")),
			),
			jen.List(jen.Id("r").Dot("ID"), jen.Id("r").Dot("Event")).Op("=").List(jen.Id("i"), jen.Lit(eventResult)),
			jen.Id("send").Call(jen.Id("r")),
			jen.List(jen.Id("reps").Index(jen.Id("i")), jen.Id("allOK")).Op("=").List(jen.Id("r").Dot("Reps"), jen.Id("allOK").Op("&&").Id("r").Dot("Status").Op("==").Add(ok)),
		),
		jen.Comment("A wrong entry makes every ratio meaningless: time nothing."),
		jen.If(jen.Id("allOK")).Block(
			jen.Id("rounds").Call(jen.Id("out"), jen.Id("ins"), jen.Id("reps"), jen.Op("*").Id("warmup"), jen.Op("*").Id("minSamples"), jen.Op("*").Id("minTime")),
		),
		jen.Id("send").Call(jen.Id("event").Values(jen.Dict{jen.Id("ID"): jen.Lit(-1), jen.Id("Event"): jen.Lit(eventDone)})),
	)
	f.Line()

	call := jen.Id("call").Call(jen.Id("fn"), jen.Id("out"), jen.Id("ins"))
	f.Add(comment("prepare checks fn's output against want, when verify is set, counts what\na call allocates, and finds the calls per sample: a power of two\nthat makes a sample last minSample. A panic is the entry's crash, reported\nwith the head of the stack."))
	f.Func().Id("prepare").Params(
		jen.Id("fn").Id("kernelFunc"), jen.Id("verify").Bool(), jen.Id("out").Index().Float32(), jen.Id("ins").Index().Index().Float32(),
		jen.Id("want").Index().Float64(), jen.Id("minSample").Qual("time", "Duration"),
	).Params(jen.Id("e").Id("event")).Block(
		recoverCrash(),
		jen.Line(),
		jen.Comment("Poison the output, so that an element the kernel never writes is wrong."),
		poisonOutput(),
		call,
		jen.If(jen.Id("verify")).Block(
			jen.If(jen.Id("msg").Op(":=").Id("check").Call(jen.Id("out"), jen.Id("want")), jen.Id("msg").Op("!=").Lit("")).Block(
				jen.Return(jen.Id("event").Values(jen.Dict{jen.Id("Status"): jen.Lit(string(measure.StatusWrongAnswer)), jen.Id("Error"): jen.Id("msg")})),
			),
		),
		jen.List(jen.Id("allocBytes"), jen.Id("allocs")).Op(":=").Id("allocated").Call(jen.Id("fn"), jen.Id("out"), jen.Id("ins")),
		jen.Id("reps").Op(":=").Lit(1),
		jen.For().Block(
			jen.Id("t0").Op(":=").Qual("time", "Now").Call(),
			jen.For(jen.Range().Id("reps")).Block(call),
			jen.If(jen.Qual("time", "Since").Call(jen.Id("t0")).Op(">=").Id("minSample").Op("||").Id("reps").Op(">=").Lit(maxReps)).Block(
				jen.Return(jen.Id("event").Values(jen.Dict{jen.Id("Status"): ok, jen.Id("Reps"): jen.Id("reps"),
					jen.Id("AllocBytes"): jen.Id("allocBytes"), jen.Id("Allocs"): jen.Id("allocs")})),
			),
			jen.Id("reps").Op("*=").Lit(2),
		),
	)
	f.Line()

	f.Add(comment("allocated calls fn twice and returns the bytes and the objects that the\n" +
		"call that allocated fewer bytes allocated on the heap, on every goroutine,\n" +
		"from the runtime's exact counts (ReadMemStats flushes the per-P caches):\n" +
		"what a call needs beyond its inputs and output, goroutine stacks aside.\n" +
		"The collector is off meanwhile (a cycle would start workers, and waiting\n" +
		"for it allocates), unless the calls allocate so much that the memory limit\n" +
		"starts one. The runtime may still allocate for itself during a call, for a\n" +
		"new thread say, but hardly during both."))
	f.Func().Id("allocated").Params(jen.Id("fn").Id("kernelFunc"), jen.Id("out").Index().Float32(), jen.Id("ins").Index().Index().Float32()).Params(
		jen.List(jen.Id("bytes"), jen.Id("objects")).Uint64(),
	).Block(
		jen.Id("gc").Op(":=").Qual("runtime/debug", "SetGCPercent").Call(jen.Lit(-1)).Comment("waits for a cycle in progress"),
		jen.Var().List(jen.Id("before"), jen.Id("after")).Qual("runtime", "MemStats"),
		jen.Qual("runtime", "ReadMemStats").Call(jen.Op("&").Id("before")),
		jen.Id("limit").Op(":=").Qual("runtime/debug", "SetMemoryLimit").Call(
			jen.Int64().Call(jen.Id("before").Dot("Sys").Op("-").Id("before").Dot("HeapReleased")).Op("+").Lit(allocHeadroomGiB).Op("<<").Lit(30)),
		jen.Id("bytes").Op("=").Qual("math", "MaxUint64"),
		jen.For(jen.Range().Lit(2)).Block(
			jen.Qual("runtime", "ReadMemStats").Call(jen.Op("&").Id("before")),
			call,
			jen.Qual("runtime", "ReadMemStats").Call(jen.Op("&").Id("after")),
			jen.If(jen.Id("n").Op(":=").Id("after").Dot("TotalAlloc").Op("-").Id("before").Dot("TotalAlloc"), jen.Id("n").Op("<").Id("bytes")).Block(
				jen.List(jen.Id("bytes"), jen.Id("objects")).Op("=").List(jen.Id("n"), jen.Id("after").Dot("Mallocs").Op("-").Id("before").Dot("Mallocs")),
			),
		),
		jen.Qual("runtime/debug", "SetMemoryLimit").Call(jen.Id("limit")),
		jen.Qual("runtime/debug", "SetGCPercent").Call(jen.Id("gc")),
		jen.Return(),
	)
	f.Line()

	f.Add(comment("rounds times the entries in rounds of one sample of each, after warmup\nuntimed rounds, until there are minSamples rounds and the samples add up\nto minTime. Each round starts one entry later than the one before, so that\nevery entry takes every place in a round as often, and drift of the machine\nfalls on all of them alike. Each timed round is sent as it ends."))
	f.Func().Id("rounds").Params(
		jen.Id("out").Index().Float32(), jen.Id("ins").Index().Index().Float32(), jen.Id("reps").Index().Int(),
		jen.List(jen.Id("warmup"), jen.Id("minSamples")).Int(), jen.Id("minTime").Qual("time", "Duration"),
	).Block(
		jen.Var().Id("total").Qual("time", "Duration"),
		jen.For(
			jen.Id("r").Op(":=").Op("-").Id("warmup"),
			jen.Id("r").Op("<").Id("minSamples").Op("||").Id("total").Op("<").Id("minTime"),
			jen.Id("r").Op("++"),
		).Block(
			jen.Id("samples").Op(":=").Make(jen.Index().Float64(), jen.Len(jen.Id("entries"))),
			jen.For(jen.Id("j").Op(":=").Range().Id("entries")).Block(
				jen.Id("i").Op(":=").Parens(jen.Id("r").Op("+").Id("warmup").Op("+").Id("j")).Op("%").Len(jen.Id("entries")),
				jen.Id("fn").Op(":=").Id("entries").Index(jen.Id("i")).Dot("fn"),
				jen.Id("t0").Op(":=").Qual("time", "Now").Call(),
				jen.For(jen.Range().Id("reps").Index(jen.Id("i"))).Block(call),
				jen.Id("d").Op(":=").Qual("time", "Since").Call(jen.Id("t0")),
				jen.Id("samples").Index(jen.Id("i")).Op("=").Float64().Call(jen.Id("d")).Op("/").Float64().Call(jen.Id("reps").Index(jen.Id("i"))),
				jen.If(jen.Id("r").Op(">=").Lit(0)).Block(jen.Id("total").Op("+=").Id("d")),
			),
			jen.If(jen.Id("r").Op(">=").Lit(0)).Block(
				jen.Id("send").Call(jen.Id("event").Values(jen.Dict{jen.Id("ID"): jen.Lit(-1), jen.Id("Event"): jen.Lit(eventRound), jen.Id("SamplesNS"): jen.Id("samples")})),
			),
		),
	)
	f.Line()
	addChecks(f)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("cpu: rendering the bench harness: %w", err)
	}
	return buf.Bytes(), nil
}

// emitFloor adds to f the memory floor: func Kernel(out, in0, ...) that
// copies the first n elements of in0 to out, split into threads contiguous
// parts, one per goroutine, the caller's included. Starting the goroutines
// at each call, as the tuned kernels do, puts their cost in the floor too.
func emitFloor(f *jen.File, inputs, n, threads int) {
	params := []jen.Code{jen.Id("out")}
	for i := range inputs {
		params = append(params, jen.Id(fmt.Sprintf("in%d", i)))
	}
	doc := fmt.Sprintf("%s copies in0 to out, %d elements, on the calling goroutine: the least\n"+
		"memory traffic of a kernel that reads its input and writes its output once.", kernelName, n)
	if threads > 1 {
		doc = fmt.Sprintf("%s copies in0 to out, %d elements, in %d equal parts on %d goroutines,\n"+
			"the caller's included: the least memory traffic of a kernel that reads its\n"+
			"input and writes its output once.", kernelName, n, threads, threads)
	}
	f.Add(comment(doc))
	body := []jen.Code{
		jen.Const().Id("n").Op("=").Lit(n),
		jen.List(jen.Id("out"), jen.Id("in0")).Op("=").List(jen.Id("out").Index(jen.Empty(), jen.Id("n")), jen.Id("in0").Index(jen.Empty(), jen.Id("n"))),
	}
	for i := 1; i < inputs; i++ {
		body = append(body, jen.Id("_").Op("=").Id(fmt.Sprintf("in%d", i)))
	}
	if threads == 1 {
		body = append(body, jen.Copy(jen.Id("out"), jen.Id("in0")))
	} else {
		part := func(t jen.Code) jen.Code { // [t*n/threads : (t+1)*n/threads]
			return jen.Index(
				jen.Add(t).Op("*").Id("n").Op("/").Id("threads"),
				jen.Parens(jen.Add(t).Op("+").Lit(1)).Op("*").Id("n").Op("/").Id("threads"),
			)
		}
		body = append(body,
			jen.Const().Id("threads").Op("=").Lit(threads),
			jen.Var().Id("wg").Qual("sync", "WaitGroup"),
			jen.For(jen.Id("t").Op(":=").Lit(1), jen.Id("t").Op("<").Id("threads"), jen.Id("t").Op("++")).Block(
				jen.Id("wg").Dot("Go").Call(jen.Func().Params().Block(
					jen.Copy(jen.Id("out").Add(part(jen.Id("t"))), jen.Id("in0").Add(part(jen.Id("t")))),
				)),
			),
			jen.Copy(jen.Id("out").Index(jen.Empty(), jen.Id("n").Op("/").Id("threads")), jen.Id("in0").Index(jen.Empty(), jen.Id("n").Op("/").Id("threads"))),
			jen.Id("wg").Dot("Wait").Call(),
		)
	}
	f.Func().Id(kernelName).Params(jen.List(params...).Index().Float32()).Block(body...)
}

// benchHarnessDoc is the package documentation of the bench harness.
const benchHarnessDoc = `Command autotunebench times a tuned kernel next to its baselines and a
memory-copy floor for autotune bench (package measure/cpu). It reads the
inputs and the float64 reference from the directory -data, checks every
entry but the floor, then times them in interleaved rounds and writes one
JSON line per event to stdout: ready, start and result per entry, a round
event per timed round, then done.`
