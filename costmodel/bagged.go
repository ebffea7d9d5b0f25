package costmodel

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
)

// Bagged is an ensemble of GBTs, each fitted to a bootstrap resample of the
// rows (drawn with replacement, within each group), whose disagreement
// estimates how unsure the prediction is: where the members were trained on
// similar rows they agree, and far from the measured configs they part.
// PredictSpread returns the members' mean score and their standard
// deviation; Predict returns an upper confidence bound, mean + Kappa·spread,
// so that a search ranking by it is optimistic where the model is unsure
// (with Kappa 0, the mean).
//
// Like GBT, Fit replaces the model; Predict and PredictSpread only read it.
// A Bagged is not saved in the tuning database: a run trains it afresh.
type Bagged struct {
	members []*GBT
	kappa   float64
	r       *rand.Rand
}

// BaggedOptions configure NewBagged.
type BaggedOptions struct {
	// Members is the ensemble's size; default 5.
	Members int
	// GBT are each member's options. Its Rand is ignored: each member
	// draws from its own generator, seeded from Rand below. Trees
	// defaults to 50, half a lone GBT's, so that the ensemble costs
	// Members/2 fits.
	GBT Options
	// Kappa weighs the spread in Predict's upper confidence bound; 0
	// ranks by the mean alone.
	Kappa float64
	// Rand draws the resamples and seeds the members; nil means a fixed
	// seed.
	Rand *rand.Rand
}

var _ Model = (*Bagged)(nil)

// NewBagged returns an untrained ensemble. It panics on out-of-range
// options, as NewGBT does.
func NewBagged(opts BaggedOptions) *Bagged {
	if opts.Members < 0 || !(opts.Kappa >= 0) || math.IsInf(opts.Kappa, 0) {
		panic(fmt.Sprintf("costmodel: Members %d, Kappa %v: want >= 0", opts.Members, opts.Kappa))
	}
	opts.Members = cmp.Or(opts.Members, 5)
	opts.GBT.Trees = cmp.Or(opts.GBT.Trees, 50)
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(0x626167, 0x676564)) // "bagged"
	}
	b := &Bagged{kappa: opts.Kappa, r: opts.Rand}
	for range opts.Members {
		o := opts.GBT
		o.Rand = rand.New(rand.NewPCG(opts.Rand.Uint64(), opts.Rand.Uint64()))
		b.members = append(b.members, NewGBT(o))
	}
	return b
}

// String describes the ensemble, e.g. "Bagged(5 × GBT(rank, 50 trees, 31 features), κ 0.3)".
func (b *Bagged) String() string {
	return fmt.Sprintf("Bagged(%d × %v, κ %g)", len(b.members), b.members[0], b.kappa)
}

// Fit trains every member on its own bootstrap resample of rows: as many
// rows of each group as it has, drawn with replacement, so that groups keep
// their size and targets their normalization. It reports the errors Fit
// does, and keeps the previous model on one.
func (b *Bagged) Fit(rows []Sample) error {
	if _, err := check(rows); err != nil {
		return err
	}
	grp := groups(rows)
	resamples := make([][]Sample, len(b.members))
	for m := range resamples {
		s := make([]Sample, 0, len(rows))
		for _, g := range grp {
			for range g {
				s = append(s, rows[g[b.r.IntN(len(g))]])
			}
		}
		resamples[m] = s
	}
	trained := make([]*GBT, len(b.members))
	for m, g := range b.members {
		c := *g // a failed fit must leave every member as it was
		if err := c.Fit(resamples[m]); err != nil {
			return err
		}
		trained[m] = &c
	}
	b.members = trained
	return nil
}

// Predict returns per vector the upper confidence bound mean + Kappa·spread
// of the members' scores, nil before the ensemble is trained.
func (b *Bagged) Predict(features [][]float64) []float64 {
	mean, spread := b.PredictSpread(features)
	for i := range mean {
		mean[i] += b.kappa * spread[i]
	}
	return mean
}

// PredictSpread returns per vector the members' mean score and their
// standard deviation; nil, nil before the ensemble is trained.
func (b *Bagged) PredictSpread(features [][]float64) (mean, spread []float64) {
	k := float64(len(b.members))
	for _, g := range b.members {
		p := g.Predict(features)
		if p == nil {
			return nil, nil
		}
		if mean == nil {
			mean, spread = make([]float64, len(p)), make([]float64, len(p))
		}
		for i, x := range p {
			mean[i] += x / k
			spread[i] += x * x / k // E[x²] for now
		}
	}
	for i := range mean {
		spread[i] = math.Sqrt(max(0, spread[i]-mean[i]*mean[i]))
	}
	return mean, spread
}
