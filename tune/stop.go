package tune

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/autotune-dev/autotune/schedule"
)

// DefaultStopGainAfter is the fewest trials before Task.StopGain may end a
// run when Task.StopGainAfter is 0: a model trained on a batch or two
// knows too little to say that nothing better is left.
const DefaultStopGainAfter = 64

// Bounds of the candidates whose predicted speed is compared with the
// measured best: every unmeasured valid config when there are at most
// gainCandidates of them, else that many random ones plus gainMutants
// neighbours of each of the gainParents best measured configs, where the
// evolutionary search looks.
const (
	gainCandidates = 4096
	gainParents    = 8
	gainMutants    = 32
	// gainMinOK is the fewest successful measurements of the workload
	// to calibrate the model's scores by.
	gainMinOK = 8
	// gainMinCorr is the least correlation of the model's scores with the
	// measured log speed for the estimate to be believed: below it, the
	// model does not know this workload and cannot tell that nothing
	// better is left (a random model, for one).
	gainMinCorr = 0.3
	// gainErrs is how many of the latest errors of the calibrated model
	// make its uncertainty, and gainMinErrs the fewest it takes.
	gainErrs    = 64
	gainMinErrs = 16
)

// predictedGain is the gain the cost model still expects from the
// unmeasured configs of the workload: the largest expected improvement
// (0.05: 5% faster) over the best measured config of any candidate. It is
// +Inf when the model cannot say (not trained, too few measurements, or
// scores that do not follow the measured speeds).
//
// The default model's scores are unitless (a ranking), and a tree model
// seldom scores a config above the best it was trained on, so its scores
// alone never promise a gain. They are calibrated instead: a least-squares
// line from score to log speed over the workload's measured configs gives
// each candidate a predicted log speed μ, and the line's errors on the
// configs of the last batches, predicted before they were measured (see
// learner.tell), give its uncertainty σ. A candidate's expected improvement
// is E[max(0, X)] for X normal with those, in log speed relative to the
// best; the gain is that of the best candidate.
func (l *learner) predictedGain(space *schedule.Space, rng *rand.Rand) float64 {
	cal, ok := l.calibrate()
	if !ok || len(l.errs) < gainMinErrs {
		return math.Inf(1)
	}
	var ss float64
	for _, e := range l.errs {
		ss += e * e
	}
	sigma := math.Sqrt(ss / float64(len(l.errs)))
	cands := l.candidates(space, rng)
	if len(cands) == 0 {
		return 0 // the space is exhausted: nothing is left to gain
	}
	feats := make([][]float64, len(cands))
	for i, c := range cands {
		feats[i] = l.features(c)
	}
	top := slices.Max(l.model.Predict(feats))
	return math.Exp(expectedImprovement(cal.at(top), sigma)) - 1
}

// expectedImprovement is E[max(0, X)] for X normal with mean mu and
// standard deviation sigma.
func expectedImprovement(mu, sigma float64) float64 {
	if sigma <= 0 {
		return max(mu, 0)
	}
	z := mu / sigma
	pdf := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	cdf := 0.5 * math.Erfc(-z/math.Sqrt2)
	return sigma*pdf + mu*cdf
}

// calibration maps the model's score to a predicted log speed relative to
// the best measured config of the workload: 0 is as fast, −0.1 about 10%
// slower.
type calibration struct{ a, slope float64 }

func (c calibration) at(score float64) float64 { return c.a + c.slope*score }

// calibrate fits the calibration on the workload's successful
// measurements; ok is false when the model does not follow them.
func (l *learner) calibrate() (_ calibration, ok bool) {
	if l.model == nil || len(l.mine) < gainMinOK {
		return calibration{}, false
	}
	feats := make([][]float64, len(l.mine))
	for i, m := range l.mine {
		feats[i] = l.features(m.cfg)
	}
	scores := l.model.Predict(feats)
	if scores == nil {
		return calibration{}, false
	}
	best := l.bestCost()
	logSpeed := make([]float64, len(l.mine))
	for i, m := range l.mine {
		logSpeed[i] = math.Log(best / m.cost)
	}
	a, slope, corr := fitLine(scores, logSpeed)
	if !(corr >= gainMinCorr) || slope <= 0 {
		return calibration{}, false
	}
	return calibration{a, slope}, true
}

// bestCost is the cost of the fastest measured config of the workload.
func (l *learner) bestCost() float64 {
	return slices.MinFunc(l.mine, func(a, b measuredConfig) int { return cmp.Compare(a.cost, b.cost) }).cost
}

// noteErrors keeps the calibrated model's errors on a batch about to be
// learned from: predicted before it saw them, they are honest.
func (l *learner) noteErrors(batch []measuredConfig) {
	cal, ok := l.calibrate()
	if !ok || len(batch) == 0 {
		return
	}
	feats := make([][]float64, len(batch))
	for i, m := range batch {
		feats[i] = l.features(m.cfg)
	}
	best := l.bestCost()
	for i, s := range l.model.Predict(feats) {
		l.errs = append(l.errs, math.Log(best/batch[i].cost)-cal.at(s))
	}
	if n := len(l.errs); n > gainErrs {
		l.errs = slices.Delete(l.errs, 0, n-gainErrs)
	}
}

// candidates returns the unmeasured valid configs the gain is taken over
// (see gainCandidates).
func (l *learner) candidates(space *schedule.Space, rng *rand.Rand) []schedule.Config {
	var out []schedule.Config
	if space.Size() <= 16*gainCandidates {
		for i := range space.Size() {
			c := space.At(i)
			if space.Valid(c) && !l.measured[c.String()] {
				out = append(out, c)
			}
		}
		if len(out) <= gainCandidates {
			return out
		}
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		out = out[:gainCandidates]
	} else {
		seen := map[string]bool{}
		for range 2 * gainCandidates {
			if len(out) == gainCandidates {
				break
			}
			c, err := space.Sample(rng)
			if err != nil {
				break
			}
			if k := c.String(); !l.measured[k] && !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
	}
	ranked := slices.SortedStableFunc(slices.Values(l.mine), func(a, b measuredConfig) int { return cmp.Compare(a.cost, b.cost) })
	for _, p := range ranked[:min(len(ranked), gainParents)] {
		for range gainMutants {
			if c, err := space.Mutate(rng, p.cfg); err == nil && !l.measured[c.String()] {
				out = append(out, c)
			}
		}
	}
	return out
}

// fitLine fits y = a + slope·x by least squares and returns a and the
// slope with the correlation of x and y (NaN when either is constant).
func fitLine(x, y []float64) (a, slope, corr float64) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxx, syy, sxy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	slope = sxy / sxx
	return my - slope*mx, slope, sxy / math.Sqrt(sxx*syy)
}
