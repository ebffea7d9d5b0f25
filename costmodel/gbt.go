package costmodel

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
)

// Objective is the loss a GBT minimizes.
type Objective uint8

const (
	// Rank is a pairwise logistic loss (RankNet) over pairs of rows of the
	// same group whose targets differ, each pair weighted by the gap in
	// relative throughput (LambdaRank-style). Scores are unitless: only
	// their order means something. It is the default.
	Rank Objective = iota
	// Regression is squared error on the relative throughput best/cost;
	// predictions estimate it.
	Regression
)

func (o Objective) String() string {
	switch o {
	case Rank:
		return "rank"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("Objective(%d)", uint8(o))
}

// Options configure a GBT. The zero value gives the defaults noted with each
// field; out-of-range values make NewGBT panic.
type Options struct {
	// Objective is the loss: Rank (the zero value) or Regression.
	Objective Objective
	// Trees is the number of boosting rounds; default 100.
	Trees int
	// Depth is the largest depth of a tree (a tree of depth d has up to 2^d
	// leaves), at most 16; default 6.
	Depth int
	// LearningRate shrinks each tree's contribution; default 0.1.
	LearningRate float64
	// MinLeaf is the fewest (subsampled) rows a leaf may hold; default 2.
	MinLeaf int
	// Subsample is the share of rows, drawn without replacement, that each
	// tree is grown on, in (0, 1]; default 0.8.
	Subsample float64
	// Rand drives subsampling and the choice of pairs for Rank. Nil means
	// a generator with a fixed seed; either way the model depends only on
	// the seed and the rows.
	Rand *rand.Rand

	// WarmRounds, above 0, makes Fit incremental once the rows are many:
	// a model trained before (on rows of the same layout, with the same
	// objective) keeps its trees and adds WarmRounds boosting rounds fitted
	// to what they still get wrong on every row, instead of Trees rounds
	// from scratch. 0 (the default) always fits from scratch.
	WarmRounds int
	// WarmFrom is the fewest rows for an incremental Fit; default 1000.
	// Below it a fit from scratch is cheap, and the first trees, fitted to
	// a few rows, are worth replacing.
	WarmFrom int
	// RefitEvery bounds the incremental fits in a row: every RefitEvery-th
	// Fit starts from scratch, so that the trees do not pile up and the
	// early ones are replaced; default 8.
	RefitEvery int
}

const (
	maxDepth = 16
	// maxBins bounds the distinct split points per feature. Features are
	// mostly log2 sizes and 0/1 flags, with a handful of values each.
	maxBins = 64
	// lambda is the L2 penalty on leaf values (XGBoost's lambda): it keeps
	// leaves of a few rows from chasing noise.
	lambda = 1.0
	// partners is how many partners each row of a large group draws per
	// tree under Rank, so that it takes part in about twice as many pairs;
	// groups of at most 2·partners+1 rows use every pair. It bounds the
	// work per tree to O(rows·partners).
	partners = 8
)

func (o Options) withDefaults() Options {
	o.Trees = cmp.Or(o.Trees, 100)
	o.Depth = cmp.Or(o.Depth, 6)
	o.LearningRate = cmp.Or(o.LearningRate, 0.1)
	o.MinLeaf = cmp.Or(o.MinLeaf, 2)
	o.Subsample = cmp.Or(o.Subsample, 0.8)
	o.WarmFrom = cmp.Or(o.WarmFrom, 1000)
	o.RefitEvery = cmp.Or(o.RefitEvery, 8)
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(0x636f73746d6f64, 0x656c)) // "costmodel"
	}
	return o
}

// GBT is a gradient-boosted ensemble of regression trees (XGBoost-style:
// second-order leaf values, L2-penalised, histogram splits). Higher
// predictions mean faster configs.
//
// Fit and UnmarshalBinary replace the model; Predict and MarshalBinary only
// read it and may run concurrently with each other, not with Fit or
// UnmarshalBinary. The zero value is an untrained model with default Options.
type GBT struct {
	opts Options // filled in by NewGBT, or on first use

	objective Objective // what the trees were trained with
	features  int       // feature count of every row, 0 until trained
	base      float64   // initial score
	trees     []tree
	warm      int // incremental fits since the last fit from scratch
}

// NewGBT returns an untrained model. It panics on out-of-range options.
func NewGBT(opts Options) *GBT {
	switch {
	case opts.Objective > Regression:
		panic(fmt.Sprintf("costmodel: unknown objective %d", opts.Objective))
	case opts.WarmRounds < 0, opts.WarmFrom < 0, opts.RefitEvery < 0:
		panic(fmt.Sprintf("costmodel: WarmRounds %d, WarmFrom %d, RefitEvery %d: want >= 0", opts.WarmRounds, opts.WarmFrom, opts.RefitEvery))
	case opts.Trees < 0, opts.Depth < 0, opts.Depth > maxDepth, opts.MinLeaf < 0:
		panic(fmt.Sprintf("costmodel: Trees %d, Depth %d, MinLeaf %d: want Trees, MinLeaf >= 0, 0 <= Depth <= %d",
			opts.Trees, opts.Depth, opts.MinLeaf, maxDepth))
	case !(opts.LearningRate >= 0), math.IsInf(opts.LearningRate, 0), !(opts.Subsample >= 0 && opts.Subsample <= 1):
		panic(fmt.Sprintf("costmodel: LearningRate %v, Subsample %v: want LearningRate >= 0, 0 <= Subsample <= 1",
			opts.LearningRate, opts.Subsample))
	}
	return &GBT{opts: opts.withDefaults()}
}

func (g *GBT) options() Options {
	if g.opts.Trees == 0 { // the zero GBT
		g.opts = g.opts.withDefaults()
	}
	return g.opts
}

// NumFeatures returns the feature count the model was trained with, 0 before
// it is trained. Check it against the caller's layout after loading a saved
// model: Predict panics on rows of another width.
func (g *GBT) NumFeatures() int { return g.features }

// String describes the trained model, e.g. "GBT(rank, 100 trees, 31 features)".
func (g *GBT) String() string {
	if g.trees == nil {
		return "GBT(untrained)"
	}
	return fmt.Sprintf("GBT(%s, %d trees, %d features)", g.objective, len(g.trees), g.features)
}

// Fit trains the model on rows, replacing what it held: from scratch, or,
// with Options.WarmRounds and at least WarmFrom rows, incrementally, by
// boosting the trees it has for a few more rounds (see Options). Rows of
// every group train one model; targets are normalized within each group
// (see the package doc).
//
// Fit reports an error, and keeps the previous model, when there are no rows,
// rows differ in feature count, a feature is NaN or infinite, or a cost is
// not positive (+Inf, a failure, is fine).
func (g *GBT) Fit(rows []Sample) error {
	width, err := check(rows)
	if err != nil {
		return err
	}
	opts := g.options()
	grp := groups(rows)
	y := targets(rows, grp)
	bins := binFeatures(rows, width)

	n := len(rows)
	warm := opts.WarmRounds > 0 && n >= opts.WarmFrom && g.trees != nil &&
		g.features == width && g.objective == opts.Objective && g.warm+1 < opts.RefitEvery
	base := 0.0
	rounds := opts.Trees
	var trees []tree
	score := make([]float64, n)
	if warm {
		// The trees carry on from where they were; a tree's thresholds
		// are feature values, so they apply to rows binned anew.
		base, rounds = g.base, opts.WarmRounds
		trees = make([]tree, len(g.trees), len(g.trees)+rounds)
		copy(trees, g.trees)
		for i, r := range rows {
			score[i] = base
			for t := range trees {
				score[i] += trees[t].predict(r.Features)
			}
		}
	} else {
		if opts.Objective == Regression {
			for _, v := range y {
				base += v
			}
			base /= float64(n)
		}
		for i := range score {
			score[i] = base
		}
		trees = make([]tree, 0, rounds)
	}
	grad := make([]float64, n)
	hess := make([]float64, n)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	sample := make([]int32, max(1, int(math.Round(opts.Subsample*float64(n)))))
	b := newBuilder(bins, grad, hess, opts)

	for range rounds {
		switch opts.Objective {
		case Regression:
			for i := range grad {
				grad[i], hess[i] = score[i]-y[i], 1
			}
		case Rank:
			rankGradients(score, y, grp, opts.Rand, grad, hess)
		}
		// Partial Fisher–Yates: the first len(sample) rows of a shuffle.
		for i := range sample {
			j := i + opts.Rand.IntN(n-i)
			all[i], all[j] = all[j], all[i]
			sample[i] = all[i]
		}
		t := b.grow(sample)
		for i := range score {
			score[i] += t.predictBinned(bins, i)
		}
		trees = append(trees, t)
	}
	g.objective, g.features, g.base, g.trees = opts.Objective, width, base, trees
	if warm {
		g.warm++
	} else {
		g.warm = 0
	}
	return nil
}

// Predict scores each feature vector: higher means predicted faster. Under
// Regression a score estimates best/cost within the row's workload; under
// Rank only the order of scores means something.
//
// Before the model is trained (or loaded) Predict returns nil, which means
// "no opinion": package search then scores at random. It panics when a
// vector's length is not NumFeatures, a programmer error.
func (g *GBT) Predict(features [][]float64) []float64 {
	if g.trees == nil {
		return nil
	}
	out := make([]float64, len(features))
	for i, x := range features {
		if len(x) != g.features {
			panic(fmt.Sprintf("costmodel: Predict: vector %d has %d features, the model was trained on %d", i, len(x), g.features))
		}
		s := g.base
		for t := range g.trees {
			s += g.trees[t].predict(x)
		}
		out[i] = s
	}
	return out
}

// rankGradients sets grad and hess to the first and second derivatives of
// the pairwise logistic loss with respect to each row's score. Pairs are
// taken within groups; a pair (i, j) with y[i] > y[j] costs
// w·log(1+exp(-(s_i-s_j))), w = y[i]-y[j], so that swapping two fast configs
// costs more than swapping two slow ones and pairs of failures cost nothing.
func rankGradients(score, y []float64, grp [][]int, r *rand.Rand, grad, hess []float64) {
	clear(grad)
	clear(hess)
	add := func(i, j int) {
		if y[i] < y[j] {
			i, j = j, i
		}
		w := y[i] - y[j]
		if w == 0 {
			return
		}
		p := 1 / (1 + math.Exp(score[i]-score[j])) // probability the pair is misordered
		grad[i] -= w * p
		grad[j] += w * p
		h := w * p * (1 - p)
		hess[i] += h
		hess[j] += h
	}
	for _, g := range grp {
		n := len(g)
		if n-1 <= 2*partners {
			for a := range n {
				for b := a + 1; b < n; b++ {
					add(g[a], g[b])
				}
			}
			continue
		}
		for a := range n {
			for range partners {
				b := r.IntN(n - 1)
				if b >= a {
					b++
				}
				add(g[a], g[b])
			}
		}
	}
}
