package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

func cfg(t *testing.T, text string) schedule.Config {
	t.Helper()
	c, err := schedule.ParseConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ok(t *testing.T, text string, median float64) measure.Result {
	return measure.Result{Config: cfg(t, text), Status: measure.StatusOK,
		SamplesNS: []float64{median, median}, MedianNS: median, P20NS: median, P80NS: median, BuildNS: 7, RunNS: 11}
}

func failed(t *testing.T, text string, st measure.Status, msg string) measure.Result {
	return measure.Result{Config: cfg(t, text), Status: st, Error: msg, BuildNS: 5}
}

func TestMeasureReplays(t *testing.T) {
	recorded := []measure.Result{
		ok(t, "vec=8,unroll=1", 300),
		failed(t, "vec=8,unroll=2", measure.StatusTimeout, "killed after 1s"),
		ok(t, "vec=8,unroll=2", 250), // an ok result beats an earlier failure
		ok(t, "vec=8,unroll=1", 200),
		ok(t, "vec=8,unroll=1", 260), // the latest ok result of a config is replayed, as the database ranks it
		failed(t, "vec=16,unroll=1", measure.StatusBuildError, "first"),
		failed(t, "vec=16,unroll=1", measure.StatusCrash, "second"), // with no ok result, the first failure
		ok(t, "vec=1,unroll=1", 200),
	}
	m := New(recorded)
	if m.Len() != 4 {
		t.Errorf("Len = %d, want 4", m.Len())
	}
	tests := []struct {
		config string
		status measure.Status
		median float64
		err    string
	}{
		{"vec=8,unroll=1", measure.StatusOK, 260, ""},
		{"vec=8,unroll=2", measure.StatusOK, 250, ""},
		{"vec=16,unroll=1", measure.StatusBuildError, 0, "first"},
		{"vec=16,unroll=4", measure.StatusRuntimeError, 0, NotRecorded},
		{"vec=1,unroll=1", measure.StatusOK, 200, ""},
	}
	b := measure.Batch{}
	for _, tc := range tests {
		b.Configs = append(b.Configs, cfg(t, tc.config))
	}
	got, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tests) {
		t.Fatalf("%d results for %d configs", len(got), len(tests))
	}
	for i, tc := range tests {
		t.Run(tc.config, func(t *testing.T) {
			r := got[i]
			if r.Config.String() != tc.config || r.Status != tc.status || r.MedianNS != tc.median || r.Error != tc.err {
				t.Errorf("got %s %s median %v error %q; want %s %s median %v error %q",
					r.Config, r.Status, r.MedianNS, r.Error, tc.config, tc.status, tc.median, tc.err)
			}
		})
	}
	if got[0].BuildNS != 7 || got[0].RunNS != 11 || len(got[0].SamplesNS) != 2 {
		t.Errorf("build %d run %d samples %v: the recorded times and samples are not kept", got[0].BuildNS, got[0].RunNS, got[0].SamplesNS)
	}
	// What Measure returns is the caller's: changing it must not change the replay.
	got[0].SamplesNS[0] = -1
	if r, _ := m.Lookup(cfg(t, "vec=8,unroll=1")); r.SamplesNS[0] != 260 {
		t.Errorf("a caller's change to the samples reached the recording: %v", r.SamplesNS)
	}
	best, found := m.Best()
	if !found || best.Config.String() != "vec=1,unroll=1" || best.MedianNS != 200 {
		t.Errorf("Best = %s %v, %v; want vec=1,unroll=1 200, true", best.Config, best.MedianNS, found)
	}
}

func TestMeasureStopsOnCancel(t *testing.T) {
	m := New([]measure.Result{ok(t, "vec=8", 1)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := m.Measure(ctx, measure.Batch{Configs: []schedule.Config{cfg(t, "vec=8")}})
	if !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Errorf("got %d results and %v; want none and context.Canceled", len(got), err)
	}
}

func TestBestWithoutOK(t *testing.T) {
	m := New([]measure.Result{failed(t, "vec=8", measure.StatusWrongAnswer, "index 0")})
	if _, found := m.Best(); found {
		t.Error("Best found a config where none is ok")
	}
}
