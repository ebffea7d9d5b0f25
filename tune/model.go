package tune

import (
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/search"
	"github.com/autotune-dev/autotune/tunedb"
)

// transferShapes and transferConfigs bound the seeds taken from other
// shapes: the best few configs of the nearest few tuned shapes, nearest
// as tunedb.Nearest has it.
const (
	transferShapes  = 2
	transferConfigs = 3
)

// learner is the run's search strategy with the cost model that guides it,
// trained on every record of the op on the device, all shapes together.
type learner struct {
	strategy search.Strategy
	model    costmodel.Model // nil unless the strategy is guided; shared.model
	shared   *sharedModel
	features func(schedule.Config) []float64
	group    string

	// For a guided strategy, what predictedGain weighs: the configs of
	// the workload measured so far, in canonical text, and those that
	// succeeded with their costs.
	measured map[string]bool
	mine     []measuredConfig
	errs     []float64 // the calibrated model's latest errors (noteErrors)
}

// measuredConfig is a successful measurement of the run's workload.
type measuredConfig struct {
	cfg  schedule.Config
	cost float64
}

// sharedModel is a cost model with the rows it is trained on. A run has
// its own; the runs of a RunTasks share one per op on a device (sharedModels),
// so that every task of the op learns from the others' measurements as
// they are made, not only from what the database held when the run began.
type sharedModel struct {
	model costmodel.Model
	key   tunedb.ModelKey
	rows  []costmodel.Sample
	saved bool // by the first run that closed: the others would save the same
	// compiled holds what the compiler gave each config of a CUDA
	// template recorded at any shape, by canonical text: the model's
	// compiled features (kernels.Template.ModelFeaturesCompiled).
	compiled compiledKernels
}

// compiledKernels holds what the compiler gave the kernels of configs, by
// the configs' canonical text.
type compiledKernels map[string]resources

// resources are a compiled CUDA kernel's registers and local bytes per
// thread.
type resources struct{ registers, localBytes int }

// note keeps r's resources, when it has them.
func (m compiledKernels) note(r tunedb.Record) {
	if r.Registers > 0 {
		m[r.Config.String()] = resources{r.Registers, r.LocalBytes}
	}
}

// lookup is a kernels.Compiled over m.
func (m compiledKernels) lookup(c schedule.Config) (registers, localBytes int, ok bool) {
	r, ok := m[c.String()]
	return r.registers, r.localBytes, ok
}

// sharedModels are the models of a RunTasks run by op, device, template
// version (the model's key in the database) and model kind.
type sharedModels map[sharedModelID]*sharedModel

type sharedModelID struct {
	key  tunedb.ModelKey
	kind string
}

// savedModel is a cost model that is kept in the database between runs.
type savedModel interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	NumFeatures() int // 0 until trained
}

var _ savedModel = (*costmodel.GBT)(nil)

// newLearner builds t's strategy. For a guided one it makes the cost
// model (loading the saved one when it is kept in the database), trains it
// on the database's records and gathers the elite of this workload and the
// seeds transferred from the nearest tuned shapes. With models (RunTasks),
// a model of the same op, device and kind made for another task of the
// run is used instead: it holds every row this one would load.
func newLearner(t Task, w tunedb.Workload, measured map[string]bool, models sharedModels) (*learner, error) {
	opts := search.Options{Seed: t.Seed, Measured: measured}
	key := tunedb.ModelKey{Op: w.Op, Device: w.Device, Template: w.Template, DType: w.DType}
	l := &learner{group: w.Key()}
	kind, err := search.Lookup(cmp.Or(t.Strategy, search.Names()[0]))
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	if !kind.Guided {
		l.features = t.Template.ModelFeatures(t.Space, t.Shape, t.Target)
		l.strategy = kind.New(t.Space, opts, search.Guide{})
		return l, nil
	}
	mkind, err := costmodel.Lookup(cmp.Or(t.Model, costmodel.Names()[0]))
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	history, err := loadHistory(t, w)
	if err != nil {
		return nil, err
	}
	l.measured = maps.Clone(measured)
	for i, c := range history.elite {
		l.mine = append(l.mine, measuredConfig{c, history.eliteCosts[i]})
	}
	id := sharedModelID{key, mkind.Name}
	l.shared = models[id]
	fresh := l.shared == nil
	if fresh {
		l.shared = &sharedModel{model: mkind.New(t.Seed), key: key, rows: history.rows, compiled: history.compiled}
	}
	l.features = t.Template.ModelFeaturesCompiled(t.Space, t.Shape, t.Target, l.shared.compiled.lookup)
	if fresh {
		if m, ok := l.shared.model.(savedModel); ok {
			if saved, ok, err := t.Store.LoadModel(key); err != nil {
				return nil, err
			} else if ok && (m.UnmarshalBinary(saved) != nil || m.NumFeatures() != len(l.features(t.Space.At(0)))) {
				l.shared.model = mkind.New(t.Seed) // unusable: start cold
			}
		}
		l.model = l.shared.model
		if err := l.fit(); err != nil {
			return nil, err
		}
		if models != nil {
			models[id] = l.shared
		}
	}
	l.model = l.shared.model
	// The search holds the model from the start, trained or not: an
	// untrained one predicts nothing (the search then scores at random),
	// and tell trains it after the first batch.
	g := search.Guide{
		Model: l.model, Features: l.features,
		Elite: history.elite, EliteCosts: history.eliteCosts, Seeds: history.seeds,
		Learned: len(l.shared.rows),
	}
	if t.Template.Dominated != nil {
		g.Prior = templatePrior{t}
	}
	g.Estimate = l.estimate(t, kind.Estimates)
	l.strategy = kind.New(t.Space, opts, g)
	return l, nil
}

// templatePrior is the search's prior from the template's own analysis
// (kernels.Template.Dominated) of the task's shape and target.
type templatePrior struct{ t Task }

func (p templatePrior) Dominated(c schedule.Config) bool {
	return p.t.Template.Dominated(p.t.Shape, p.t.Target, c)
}

// estimate returns the search's estimate of the kind asked for: the
// shipped model of the template's version, or the template's own
// estimate (also where no model is shipped); nil for none.
func (l *learner) estimate(t Task, kind string) search.Estimator {
	if kind == search.Shipped && t.Shipped != nil {
		return modelEstimate{t.Shipped, l.features}
	}
	if kind == search.Shipped {
		if m, ok := shippedModel(t.Template.Version, len(l.features(t.Space.At(0)))); ok {
			return modelEstimate{m, l.features}
		}
	}
	if kind != "" && t.Template.Estimate != nil {
		return templateEstimate{t}
	}
	return nil
}

// templateEstimate is the search's estimate from the template's own
// quantities (kernels.Template.Estimate) at the task's shape and target:
// faster is higher.
type templateEstimate struct{ t Task }

var _ search.Timer = templateEstimate{}

// Times marks the scores as negated times (search.Timer).
func (templateEstimate) Times() {}

func (e templateEstimate) Estimate(cfgs []schedule.Config) []float64 {
	out := make([]float64, len(cfgs))
	for i, c := range cfgs {
		out[i] = -e.t.Template.Estimate(e.t.Shape, e.t.Target, c)
	}
	return out
}

// tell passes a committed batch to the strategy and retrains the model.
func (l *learner) tell(recs []tunedb.Record) error {
	cfgs := make([]schedule.Config, len(recs))
	costs := make([]float64, len(recs))
	for i, r := range recs {
		cfgs[i], costs[i] = r.Config, cost(r.Status == tunedb.StatusOK, r.MedianNS)
	}
	if l.model != nil {
		for i, r := range recs {
			l.shared.compiled.note(r)
			l.shared.rows = append(l.shared.rows, costmodel.Sample{Features: l.features(r.Config), Group: l.group, Cost: costs[i]})
		}
		var batch []measuredConfig
		for i, c := range cfgs {
			l.measured[c.String()] = true
			if !math.IsInf(costs[i], 1) {
				batch = append(batch, measuredConfig{c, costs[i]})
			}
		}
		l.noteErrors(batch)
		l.mine = append(l.mine, batch...)
		if err := l.fit(); err != nil {
			return err
		}
	}
	l.strategy.Tell(cfgs, costs)
	return nil
}

// fit retrains the model from every row; with too little data to learn
// from it keeps what it has.
func (l *learner) fit() error {
	if len(l.shared.rows) < 2 {
		return nil
	}
	if err := l.model.Fit(l.shared.rows); err != nil {
		return fmt.Errorf("tune: training the cost model: %w", err)
	}
	return nil
}

// save stores the model for the next run, if it is one that is kept, it
// learned something and no other run sharing it saved it already.
func (l *learner) save(db Store) error {
	if l.shared == nil || l.shared.saved {
		return nil
	}
	m, ok := l.model.(savedModel)
	if !ok || m.NumFeatures() == 0 {
		return nil
	}
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if err := db.SaveModel(l.shared.key, b); err != nil {
		return err
	}
	l.shared.saved = true
	return nil
}

// cost is what the search and the model learn from: the median, or +Inf
// for a failure, whatever kind.
func cost(ok bool, medianNS float64) float64 {
	if !ok {
		return math.Inf(1)
	}
	return medianNS
}

// history is what the database knows that helps this run.
type history struct {
	rows       []costmodel.Sample // every record of the op on the device, as training rows
	elite      []schedule.Config  // this workload's ok records
	eliteCosts []float64
	seeds      []schedule.Config // best configs of the nearest other shapes
	compiled   compiledKernels   // of the op's records, all shapes
}

// loadHistory reads the records of every shape of t's op on t's device for
// the current template version, and those of other ops whose templates
// give the model the same features (kinship): GEMM with and without an
// epilogue share their knobs, and what one taught the model, and its best
// configs, carry over to the other.
func loadHistory(t Task, w tunedb.Workload) (history, error) {
	h := history{compiled: compiledKernels{}}
	sums, err := t.Store.Workloads()
	if err != nil {
		return h, err
	}
	var others, kin []tunedb.Workload
	for _, s := range sums {
		o := s.Workload
		if o.Device != w.Device || o.DType != w.DType || len(o.Shape) != len(w.Shape) {
			continue
		}
		tmpl := t.Template
		if o.Op != w.Op {
			var ok bool
			if tmpl, ok = KinTemplate(t.Template, t.Shape, t.Target, o); !ok {
				continue
			}
		} else if o.Template != w.Template {
			continue
		}
		recs, err := t.Store.Records(o)
		if err != nil {
			return h, err
		}
		same := o.Key() == w.Key()
		space, shape := t.Space, t.Shape
		if !same {
			space, shape = tmpl.SearchSpace(o.Shape, o.DType, t.Target), o.Shape
		}
		// Each row has what the compiler gave its own kernel.
		var cur tunedb.Record
		feats := tmpl.ModelFeaturesCompiled(space, shape, t.Target, func(schedule.Config) (int, int, bool) {
			return cur.Registers, cur.LocalBytes, cur.Registers > 0
		})
		for _, r := range recs {
			if space.Check(r.Config) != nil {
				continue // e.g. measured on a CPU whose ISA has since changed
			}
			c, _ := space.Canonical(r.Config)
			cur = r
			cur.Config = c
			if o.Op == w.Op {
				h.compiled.note(cur)
			}
			h.rows = append(h.rows, costmodel.Sample{Features: feats(c), Group: o.Key(), Cost: cost(r.Status == tunedb.StatusOK, r.MedianNS)})
			if same && r.Status == tunedb.StatusOK {
				h.elite, h.eliteCosts = append(h.elite, c), append(h.eliteCosts, r.MedianNS)
			}
		}
		switch {
		case o.Op != w.Op:
			kin = append(kin, o)
		case !same:
			others = append(others, o)
		}
	}
	// Seeds: the best configs of the nearest other shapes of the op, then
	// of the nearest workloads of its kin.
	near := tunedb.Nearest(w, others, transferShapes)
	if len(kin) > 0 {
		relabelled := make([]tunedb.Workload, len(kin))
		for i, o := range kin {
			relabelled[i] = o
			relabelled[i].Op, relabelled[i].Template = w.Op, w.Template
		}
		used := make([]bool, len(kin)) // kin of one shape relabel alike
		for _, r := range tunedb.Nearest(w, relabelled, transferShapes) {
			i := slices.IndexFunc(relabelled, func(x tunedb.Workload) bool { return x.Key() == r.Key() })
			for used[i] || relabelled[i].Key() != r.Key() {
				i++
			}
			used[i] = true
			near = append(near, kin[i])
		}
	}
	for _, o := range near {
		top, err := t.Store.TopK(o, transferConfigs)
		if err != nil {
			return h, err
		}
		for _, r := range top {
			h.seeds = append(h.seeds, r.Config)
		}
	}
	return h, nil
}

// KinTemplate returns the template of workload o, of another op than
// tmpl's, when its records can train the model of tmpl at shape on target:
// it is o's op's template on tmpl's backend in the revision o was recorded
// with (the current one, or an earlier one, kernels.Template.Earlier, which
// a replay of recorded landscapes tunes), and its model features are named
// as tmpl's are (the same knobs, analytic features and dimensions), so that
// a row means the same.
func KinTemplate(tmpl kernels.Template, shape []int, target device.Target, o tunedb.Workload) (kernels.Template, bool) {
	current, ok := kernels.TemplateFor(o.Op, tmpl.Backend)
	if !ok || o.Op == tmpl.Name || len(o.Shape) != len(shape) {
		return kernels.Template{}, false
	}
	other, ok := current.Revision(o.Template)
	if !ok {
		return kernels.Template{}, false
	}
	a := tmpl.ModelFeatureNames(tmpl.SearchSpace(shape, o.DType, target), shape, target)
	b := other.ModelFeatureNames(other.SearchSpace(o.Shape, o.DType, target), o.Shape, target)
	return other, slices.Equal(a, b)
}

var errNoStore = errors.New("tune: the task has no database")
