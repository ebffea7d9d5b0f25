package tune

import (
	"embed"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/schedule"
)

// shippedModels are cost models trained on landscapes recorded on other
// machines (tune/lab's TestShipPriors writes them), one per template
// version, in costmodel's saved form: shipped/<version>.atcm. The
// "shipped" strategy ranks its first batches by the one of the tuned
// template's version (search.Guide.Estimate), as a tuner on a machine that
// has measured nothing yet; a template version with none falls back to
// the template's own estimate. They are device-agnostic: the features are
// the knobs, the template's analytic features and the shape.
//
//go:embed shipped/*.atcm
var shippedModels embed.FS

// shippedModel returns the shipped model of the template version, when
// there is one and it takes features vectors of the given length (a
// model of another layout is of no use).
func shippedModel(version string, features int) (*costmodel.GBT, bool) {
	b, err := shippedModels.ReadFile("shipped/" + version + ".atcm")
	if err != nil {
		return nil, false
	}
	m := costmodel.NewGBT(costmodel.Options{})
	if m.UnmarshalBinary(b) != nil || m.NumFeatures() != features {
		return nil, false
	}
	return m, true
}

// modelEstimate is a search.Estimator from a trained model: its
// predictions of the configs' features.
type modelEstimate struct {
	model    costmodel.Model
	features func(schedule.Config) []float64
}

func (e modelEstimate) Estimate(cfgs []schedule.Config) []float64 {
	feats := make([][]float64, len(cfgs))
	for i, c := range cfgs {
		feats[i] = e.features(c)
	}
	return e.model.Predict(feats)
}
