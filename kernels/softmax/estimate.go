package softmax

import (
	"math"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// The machine the estimate assumes where the target does not say: a core
// of about 3 GHz, 8 bytes a cycle from memory per core, and the caches of
// the smallest CPUs templates expect.
const (
	estGHz         = 3.0
	estMemBytesCyc = 8.0
	estL2          = 256 << 10
	// estExpF64Lane is the cycles of math.Exp on one lane: exp=f64 calls
	// it a lane at a time (the polynomials cost 6 or 7 cycles a vector).
	estExpF64Lane = 20.0
	// estSpawnNS is what starting a goroutine and waiting for it costs,
	// estChunkNS what taking one chunk of rows from the counter does.
	estSpawnNS = 2000.0
	estChunkNS = 40.0
	// estLatency is the cycles of the add or max that carries a row's
	// reduction from one vector step to the next: unrolling runs that
	// many chains side by side.
	estLatency = 4.0
)

// estimate is Template.Estimate: a rough time per call of cfg in
// nanoseconds, from the vector steps each pass takes per row (tails a
// lane at a time), the reductions' latency against the unroll, the exp's
// cost (online computes it twice a row, three passes once), the bytes the
// passes move once a row outgrows L2, and the rows of the busiest
// goroutine with the cost of starting them. It reads only the knobs
// revision softmax-2 has, and code where the space has it.
func estimate(shape []int, target device.Target, cfg schedule.Config) float64 {
	rows, cols := checkShape(shape)
	vec, unroll := float64(cfg.Int("vec")), float64(cfg.Int("unroll"))
	steps := math.Floor(float64(cols)/vec) + float64(cols%int(vec)) // tails a lane at a time
	var exp float64                                                 // cycles per vector step of one exp
	switch cfg.Str("exp") {
	case "f64":
		exp = estExpF64Lane * vec
	case "poly4":
		exp = 6
	case poly3:
		exp = 5
	default:
		exp = 7
	}
	chain := math.Max(1, estLatency/unroll) // a reduction step's cycles, latency-bound
	var cycles, passes float64
	if cfg.Str("algo") == "online" {
		// One pass of max, rescaled sum and exp; one of exp and scale.
		cycles, passes = steps*(math.Max(exp+2, chain)+exp+1), 2
	} else {
		cycles, passes = steps*(chain+math.Max(exp, chain)+1), 3
	}
	if v, ok := cfg.Lookup("code"); ok && v.Str() == "asm" {
		cycles *= 0.8 // no bounds checks, fewer moves
	}
	l2 := estL2
	if target.CPU != nil && target.CPU.L2 > 0 {
		l2 = target.CPU.L2
	}
	bytes := float64(2 * 4 * cols) // in once, out once
	if 4*cols > l2/2 {
		bytes = float64(4*cols) * (passes + 1) // every pass from memory
	}
	rowNS := math.Max(cycles, bytes/estMemBytesCyc) / estGHz

	threads, cores := cfg.Int("threads"), 1
	if target.CPU != nil {
		cores = max(target.CPU.Cores, 1)
	}
	if threads <= 1 {
		return float64(rows) * rowNS
	}
	per := cfg.Int("rows_per_chunk")
	chunks := (rows + per - 1) / per
	busiest := (chunks + min(threads, cores) - 1) / min(threads, cores) // chunks of the busiest goroutine
	return float64(min(busiest*per, rows))*rowNS + float64(threads)*estSpawnNS + float64(busiest)*estChunkNS
}
