package measure_test

import (
	"fmt"

	"github.com/autotune-dev/autotune/measure"
)

func ExampleSummarize() {
	// ns per call of ten samples; one was disturbed by the scheduler.
	samples := []float64{812, 805, 799, 2950, 808, 801, 810, 803, 806, 809}
	median, p20, p80 := measure.Summarize(samples)
	fmt.Printf("median %.1f ns, p20 %.1f ns, p80 %.1f ns\n", median, p20, p80)
	// Output: median 807.0 ns, p20 802.6 ns, p80 810.4 ns
}
