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
)

// predictedGain is how much faster than the best measured config of the
// workload the cost model expects the best unmeasured one to be: 0.05 is
// 5% faster, 0 or less means the model sees nothing faster. It is +Inf
// when the model cannot say (not trained, too few successful
// measurements, or scores that do not follow the measured speeds).
//
// The default model's scores are unitless (a ranking), so they are
// calibrated on the workload's measured configs: a least-squares line from
// score to log speed. The gain is that line's slope times the score of the
// best candidate less the score of the measured best.
func (l *learner) predictedGain(space *schedule.Space, rng *rand.Rand) float64 {
	if l.model == nil || len(l.mine) < gainMinOK {
		return math.Inf(1)
	}
	feats := make([][]float64, len(l.mine))
	for i, m := range l.mine {
		feats[i] = l.features(m.cfg)
	}
	scores := l.model.Predict(feats)
	if scores == nil {
		return math.Inf(1)
	}
	best := slices.MinFunc(l.mine, func(a, b measuredConfig) int { return cmp.Compare(a.cost, b.cost) }).cost
	logSpeed := make([]float64, len(l.mine))
	bestScore := math.Inf(-1)
	for i, m := range l.mine {
		logSpeed[i] = math.Log(best / m.cost)
		if m.cost == best {
			bestScore = max(bestScore, scores[i])
		}
	}
	slope, corr := fitLine(scores, logSpeed)
	if !(corr >= gainMinCorr) || slope <= 0 {
		return math.Inf(1)
	}
	cands := l.candidates(space, rng)
	if len(cands) == 0 {
		return 0 // the space is exhausted: nothing is left to gain
	}
	feats = feats[:0]
	for _, c := range cands {
		feats = append(feats, l.features(c))
	}
	top := slices.Max(l.model.Predict(feats))
	return math.Exp(slope*(top-bestScore)) - 1
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

// fitLine fits y = a + slope·x by least squares and returns the slope with
// the correlation of x and y (NaN when either is constant).
func fitLine(x, y []float64) (slope, corr float64) {
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
	return sxy / sxx, sxy / math.Sqrt(sxx*syy)
}
