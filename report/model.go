package report

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Bounds of the model section: fewer records than minModelRecords teach
// too little to judge, and the test set is capped so that τ (quadratic)
// and the permutations stay fast on a large database.
const (
	minModelRecords = 20
	maxTestRows     = 2000
	trainShare      = 0.8
	permutations    = 3
)

// modelEval is the cost model's quality on one workload's held-out records.
type modelEval struct {
	Train, Test int
	Tau         float64
	// Predicted score and measured median of each ok test record, for the
	// scatter (failures are in τ, not in the chart).
	Scores, MedianNS []float64
	Importance       []importance // descending
	Saved            string       // the saved model, described; "" when none
	Why              string       // why there is no evaluation, when Tau is NaN
}

type importance struct {
	Name string
	Drop float64 // mean fall of τ when the feature group is shuffled
}

// evalModel trains a fresh default model on the first 80% of recs in time
// order and tests it on the rest.
func evalModel(tmpl kernels.Template, w tunedb.Workload, target device.Target, recs []tunedb.Record) modelEval {
	e := modelEval{Tau: math.NaN()}
	space := tmpl.Space(w.Shape, target)
	// Each row has what the compiler gave its own kernel, as in tuning.
	var cur tunedb.Record
	feats := tmpl.ModelFeaturesCompiled(space, w.Shape, target, func(schedule.Config) (int, int, bool) {
		return cur.Registers, cur.LocalBytes, cur.Registers > 0
	})
	type row struct {
		x    []float64
		cost float64
		ok   bool
		ns   float64
	}
	var rows []row
	for _, r := range sortedByTime(recs) {
		cur = r
		c, err := space.Canonical(r.Config)
		if err != nil || space.Check(c) != nil {
			continue // not a point of today's space on this machine
		}
		cost := math.Inf(1)
		if r.Status == tunedb.StatusOK {
			cost = r.MedianNS
		}
		rows = append(rows, row{feats(c), cost, r.Status == tunedb.StatusOK, r.MedianNS})
	}
	if len(rows) < minModelRecords {
		e.Why = fmt.Sprintf("%d usable records, fewer than %d: too few to train on and test", len(rows), minModelRecords)
		return e
	}
	cut := int(trainShare * float64(len(rows)))
	train := make([]costmodel.Sample, cut)
	for i, r := range rows[:cut] {
		train[i] = costmodel.Sample{Features: r.x, Group: w.Key(), Cost: r.cost}
	}
	test := rows[cut:]
	if len(test) > maxTestRows {
		test = test[len(test)-maxTestRows:]
	}
	m := costmodel.NewGBT(costmodel.Options{Rand: rand.New(rand.NewPCG(1, 1))})
	if err := m.Fit(train); err != nil {
		e.Why = "the model could not be trained: " + err.Error()
		return e
	}
	x := make([][]float64, len(test))
	speed := make([]float64, len(test))
	for i, r := range test {
		x[i], speed[i] = r.x, 1/r.cost
	}
	scores := m.Predict(x)
	e.Train, e.Test = cut, len(test)
	e.Tau = costmodel.KendallTau(scores, speed)
	if math.IsNaN(e.Tau) {
		e.Why = "the test records all ran equally fast, or the model scored them alike: τ is undefined"
		return e
	}
	for i, r := range test {
		if r.ok {
			e.Scores, e.MedianNS = append(e.Scores, scores[i]), append(e.MedianNS, r.ns)
		}
	}
	e.Importance = permutationImportance(m, x, speed, e.Tau, featureGroups(tmpl.ModelFeatureNames(space, w.Shape, target)))
	return e
}

// featureGroup is the columns of the feature vector that one knob (or the
// template's analytic features) fills.
type featureGroup struct {
	name string
	cols []int
}

// featureGroups groups feature names by knob: "algo=online" and
// "algo=twopass" are knob algo; "analytic N" are one group; "log2 D" are
// constant within a workload and left out.
func featureGroups(names []string) []featureGroup {
	var groups []featureGroup
	index := map[string]int{}
	for col, n := range names {
		switch {
		case strings.HasPrefix(n, "log2 "):
			continue
		case strings.HasPrefix(n, "analytic "):
			n = "analytic features"
		default:
			n, _, _ = strings.Cut(n, "=")
		}
		g, ok := index[n]
		if !ok {
			g = len(groups)
			index[n] = g
			groups = append(groups, featureGroup{name: n})
		}
		groups[g].cols = append(groups[g].cols, col)
	}
	return groups
}

// permutationImportance is the mean fall of τ over a few shuffles of each
// group's columns among the test rows, largest first.
func permutationImportance(m *costmodel.GBT, x [][]float64, speed []float64, tau float64, groups []featureGroup) []importance {
	r := rand.New(rand.NewPCG(2, 2))
	var out []importance
	for _, g := range groups {
		drop := 0.0
		for range permutations {
			perm := r.Perm(len(x))
			shuffled := make([][]float64, len(x))
			for i := range x {
				shuffled[i] = slices.Clone(x[i])
				for _, c := range g.cols {
					shuffled[i][c] = x[perm[i]][c]
				}
			}
			t := costmodel.KendallTau(m.Predict(shuffled), speed)
			if !math.IsNaN(t) {
				drop += (tau - t) / permutations
			}
		}
		out = append(out, importance{g.name, drop})
	}
	slices.SortStableFunc(out, func(a, b importance) int { return cmp.Compare(b.Drop, a.Drop) })
	return out
}

// describeSaved describes the model saved for w, if there is one.
func describeSaved(db Store, w tunedb.Workload) (string, error) {
	b, ok, err := db.LoadModel(tunedb.ModelKey{Op: w.Op, Device: w.Device, Template: w.Template, DType: w.DType})
	if err != nil || !ok {
		return "", err
	}
	var m costmodel.GBT
	if err := m.UnmarshalBinary(b); err != nil {
		return fmt.Sprintf("a saved model that does not load (%v); the next tuning run retrains it", err), nil
	}
	return fmt.Sprintf("%s, saved by the last tuning run of %s on this device; trained on every record, so it is not evaluated here", m.String(), w.Op), nil
}

func sortedByTime(recs []tunedb.Record) []tunedb.Record {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b tunedb.Record) int { return a.Time.Compare(b.Time) })
	return recs
}
