package measure_test

import (
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/harness"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name             string
		samples          []float64
		median, p20, p80 float64
	}{
		{"none", nil, 0, 0, 0},
		{"one", []float64{7}, 7, 7, 7},
		{"two", []float64{10, 20}, 15, 12, 18},
		{"five unsorted", []float64{5, 1, 4, 2, 3}, 3, 1.8, 4.2},
		{"six", []float64{1, 2, 3, 4, 5, 6}, 3.5, 2, 5},
		{"ties", []float64{2, 2, 2, 9}, 2, 2, 4.8},
		{"outlier does not move the median", []float64{100, 101, 102, 103, 1e9}, 102, 100.8, 103 + 0.2*(1e9-103)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.samples)
			median, p20, p80 := measure.Summarize(in)
			if !near(median, tt.median) || !near(p20, tt.p20) || !near(p80, tt.p80) {
				t.Errorf("Summarize(%v) = %v, %v, %v; want %v, %v, %v",
					tt.samples, median, p20, p80, tt.median, tt.p20, tt.p80)
			}
			if !slices.Equal(in, tt.samples) {
				t.Errorf("Summarize reordered its input: %v", in)
			}
		})
	}
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-9*(1+abs(b)) && -d < 1e-9*(1+abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The harness reports statuses as plain strings (it is a leaf, built into
// the child process); each must be one of the closed list.
func TestHarnessStatusesValid(t *testing.T) {
	for _, s := range []string{harness.StatusOK, harness.StatusWrongAnswer, harness.StatusCrash} {
		if !measure.Status(s).Valid() {
			t.Errorf("harness status %q is not a measure.Status", s)
		}
	}
	if measure.Status("slow").Valid() {
		t.Error(`"slow" is valid`)
	}
	var transient []measure.Status
	for _, s := range measure.Statuses() {
		if s.Transient() {
			transient = append(transient, s)
		}
	}
	if want := []measure.Status{measure.StatusRuntimeError, measure.StatusCrash, measure.StatusTimeout}; !slices.Equal(transient, want) {
		t.Errorf("transient statuses %v, want %v", transient, want)
	}
}
