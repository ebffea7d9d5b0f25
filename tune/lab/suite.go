package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// A Suite compares searches on several recorded landscapes at once, so that
// a change to the search is judged on all of them and not tuned to one.
// Every search runs on every landscape with the same seeds; random search
// is the baseline each is measured against.
type Suite struct {
	Landscapes []SuiteLandscape
	// Methods must include random search, the baseline.
	Methods []Method
	Seeds   int // each search runs with seeds 1..Seeds on each landscape
	// Budget is the trials per run; 0 means every recorded config, so that
	// random search always gets there. Runs stop early once within 1% of
	// the best (Simulation.StopEarly), so a large budget costs little for
	// a search that needs few trials.
	Budget    int
	BatchSize int // 0 means 16
	Parallel  int // as Simulation.Parallel
	// Progress, when set, hears about every run when it ends.
	Progress func(landscape string, s Method, r SimRun)
}

// A SuiteLandscape is one landscape of a Suite.
type SuiteLandscape struct {
	Name      string // e.g. "softmax 1024x1024"
	Template  kernels.Template
	Recording Recording
	// Prior, when set, are records of other shapes of the op on the same
	// device (Simulation.Prior): the guided searches also run with them
	// loaded, which measures transfer from the nearest tuned shapes.
	Prior []tunedb.Record
	// HeldOut marks a landscape kept out of the tuning of the search
	// itself: its figures say whether a change generalises, and are
	// reported apart from the others.
	HeldOut bool
}

// SuiteReport is the outcome of a Suite.
type SuiteReport struct {
	Seeds      int
	BatchSize  int
	Landscapes []SuiteResult
}

// SuiteResult is one landscape's: the searches cold, and the guided ones
// warmed by the landscape's prior when it has one.
type SuiteResult struct {
	Name    string
	HeldOut bool
	Cold    SimReport
	Warm    *SimReport // nil without a prior
}

var randomSearch = Method{Strategy: "random"}

// RunSuite runs every search of s on every landscape.
func RunSuite(ctx context.Context, s Suite) (SuiteReport, error) {
	hasRandom := false
	var guided []Method
	for _, x := range s.Methods {
		hasRandom = hasRandom || x == randomSearch
		if x.Model != "" {
			guided = append(guided, x)
		}
	}
	if !hasRandom {
		return SuiteReport{}, errors.New("lab: a suite needs random search, its baseline")
	}
	out := SuiteReport{Seeds: s.Seeds}
	for _, l := range s.Landscapes {
		sim := Simulation{
			Template: l.Template, Recording: l.Recording, Methods: s.Methods, Seeds: s.Seeds,
			Budget: s.Budget, BatchSize: s.BatchSize, StopEarly: true, Parallel: s.Parallel,
		}
		if sim.Budget == 0 {
			sim.Budget = len(l.Recording.Records)
		}
		if s.Progress != nil {
			sim.Progress = func(x Method, r SimRun) { s.Progress(l.Name, x, r) }
		}
		cold, err := Simulate(ctx, sim)
		if err != nil {
			return SuiteReport{}, fmt.Errorf("%s: %w", l.Name, err)
		}
		res := SuiteResult{Name: l.Name, HeldOut: l.HeldOut, Cold: cold}
		if len(l.Prior) > 0 && len(guided) > 0 {
			sim.Prior, sim.Methods = l.Prior, guided
			if s.Progress != nil {
				sim.Progress = func(x Method, r SimRun) { s.Progress(l.Name+" with prior", x, r) }
			}
			warm, err := Simulate(ctx, sim)
			if err != nil {
				return SuiteReport{}, fmt.Errorf("%s with prior: %w", l.Name, err)
			}
			res.Warm = &warm
		}
		out.BatchSize = cold.BatchSize
		out.Landscapes = append(out.Landscapes, res)
	}
	return out, nil
}

// Ratio is the median trials search needs to get within 5% (or 1%, with
// to1) of the best of landscape l, as a share of what random search needs
// there: 0.2 is five times fewer trials. warm takes search's runs with the
// prior. It is NaN when search did not run there, +Inf when half its runs
// or more never got there.
func (r SuiteResult) Ratio(search Method, to1, warm bool) float64 {
	rep := &r.Cold
	if warm {
		rep = r.Warm
	}
	if rep == nil {
		return math.NaN()
	}
	s, ok := findMethod(*rep, search)
	base, okBase := findMethod(r.Cold, randomSearch)
	if !ok || !okBase {
		return math.NaN()
	}
	if to1 {
		return s.TrialsTo1 / base.TrialsTo1
	}
	return s.TrialsTo5 / base.TrialsTo5
}

func findMethod(r SimReport, s Method) (MethodReport, bool) {
	for _, x := range r.Methods {
		if x.Method == s {
			return x, true
		}
	}
	return MethodReport{}, false
}

// GeoMean is the geometric mean of Ratio over the landscapes that are
// held out (heldOut) or not; NaN when there are none, +Inf when a ratio is.
func (r SuiteReport) GeoMean(search Method, to1, warm, heldOut bool) float64 {
	sum, n := 0.0, 0
	for _, l := range r.Landscapes {
		if l.HeldOut != heldOut {
			continue
		}
		x := l.Ratio(search, to1, warm)
		if math.IsNaN(x) {
			continue
		}
		sum += math.Log(x)
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

// WriteMarkdown writes the report as the tables of docs/benchmarks.md: one
// row per landscape and search, then the geometric means.
func (r SuiteReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d seeds, batch %d; trials are medians over the seeds; ×random is the search's median trials over random search's (0.20: five times fewer).\n\n", r.Seeds, r.BatchSize)
	b.WriteString("| landscape | configs | search | to 5% | to 1% | best@16 | best@32 | best@64 | ×random 5% | ×random 1% |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var searches []Method
	for _, l := range r.Landscapes {
		name := l.Name
		if l.HeldOut {
			name += " (held out)"
		}
		row := func(rep SimReport, s MethodReport, label string, warm bool) {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |", name, rep.Recorded, label, trials(s.TrialsTo5), trials(s.TrialsTo1))
			for i := range 3 {
				fmt.Fprintf(&b, " %s |", number(s.BestAt[i], "%.3f"))
			}
			fmt.Fprintf(&b, " %s | %s |\n", number(l.Ratio(s.Method, false, warm), "%.2f"), number(l.Ratio(s.Method, true, warm), "%.2f"))
		}
		for _, s := range l.Cold.Methods {
			row(l.Cold, s, s.Method.String(), false)
			if !containsMethod(searches, s.Method) {
				searches = append(searches, s.Method)
			}
		}
		if l.Warm != nil {
			for _, s := range l.Warm.Methods {
				row(*l.Warm, s, s.Method.String()+" with prior "+strings.Join(l.Warm.PriorShape, ", "), true)
			}
		}
	}
	b.WriteString("\nGeometric mean of ×random over the landscapes (with a prior: over those that have one):\n\n")
	b.WriteString("| search | to 5% | to 1% | to 5%, held out | to 1%, held out |\n| --- | --- | --- | --- | --- |\n")
	for _, warm := range []bool{false, true} {
		for _, s := range searches {
			label := s.String()
			if warm {
				if s.Model == "" {
					continue
				}
				label += " with prior"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", label,
				number(r.GeoMean(s, false, warm, false), "%.2f"), number(r.GeoMean(s, true, warm, false), "%.2f"),
				number(r.GeoMean(s, false, warm, true), "%.2f"), number(r.GeoMean(s, true, warm, true), "%.2f"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func containsMethod(ss []Method, s Method) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// trials formats a median trial count, "-" for never.
func trials(x float64) string { return strings.TrimSuffix(number(x, "%.1f"), ".0") }

// number formats x, "-" when it is +Inf or NaN.
func number(x float64, format string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}
