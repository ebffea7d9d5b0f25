package sim_test

import (
	"context"
	"fmt"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/sim"
	"github.com/autotune-dev/autotune/schedule"
)

func ExampleMeasurer() {
	parse := func(text string) schedule.Config {
		c, _ := schedule.ParseConfig(text)
		return c
	}
	// Two measurements of one config and a failure of another, as a tuning
	// database would hold them.
	m := sim.New([]measure.Result{
		{Config: parse("vec=8,unroll=2"), Status: measure.StatusOK, MedianNS: 412},
		{Config: parse("vec=8,unroll=2"), Status: measure.StatusOK, MedianNS: 405},
		{Config: parse("vec=16,unroll=2"), Status: measure.StatusWrongAnswer, Error: "index 3: got NaN"},
	})
	batch := measure.Batch{Configs: []schedule.Config{parse("vec=8,unroll=2"), parse("vec=16,unroll=2"), parse("vec=1,unroll=8")}}
	results, _ := m.Measure(context.Background(), batch)
	missing := 0
	for _, r := range results {
		fmt.Printf("%s: %s %v %q\n", r.Config, r.Status, r.MedianNS, r.Error)
		if r.Error == sim.NotRecorded {
			missing++
		}
	}
	fmt.Println("never recorded:", missing)
	// Output:
	// vec=8,unroll=2: ok 405 ""
	// vec=16,unroll=2: wrong_answer 0 "index 3: got NaN"
	// vec=1,unroll=8: runtime_error 0 "sim: config never recorded"
	// never recorded: 1
}
