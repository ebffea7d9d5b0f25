package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// Store is what the report reads of a tuning database; tunedb.DB and
// tunedb.Memory satisfy it.
type Store interface {
	Records(w tunedb.Workload) ([]tunedb.Record, error)
	TopK(w tunedb.Workload, k int) ([]tunedb.Record, error)
	LoadModel(k tunedb.ModelKey) ([]byte, bool, error)
}

var (
	_ Store = (*tunedb.DB)(nil)
	_ Store = (*tunedb.Memory)(nil)
)

// Limits are the ceilings of a roofline.
type Limits struct {
	PeakGFLOPs float64 // multiply-add peak
	GBps       float64 // memory bandwidth
	Source     string  // how they were found, for the page: "measured in process by autotune report"
}

// Options say what the report knows beyond the database. A nil *Options
// means the zero Options.
type Options struct {
	// Title heads the page; "" means "autotune report".
	Title string
	// Limits are the roofline's ceilings by device fingerprint; a
	// workload whose device has none gets no roofline.
	Limits map[string]Limits
	// Generated is when the report was written, for its footer; zero
	// leaves it out (tests compare pages).
	Generated time.Time
	// Ranges are the tuned shape ranges (tunedb.DB.Ranges), shown with
	// the regret of dispatching their held-out shapes to their buckets.
	Ranges []tunedb.Range
}

// TopConfigs is how many configs the top table lists.
const TopConfigs = 10

// Write writes the HTML report of the workloads of sums (as
// tunedb.DB.Workloads returns them, or a selection) with the records db
// holds for them.
func Write(w io.Writer, db Store, sums []tunedb.Summary, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	pg := page{Title: o.Title, Many: len(sums) > 1}
	if pg.Title == "" {
		pg.Title = "autotune report"
	}
	if !o.Generated.IsZero() {
		pg.Generated = o.Generated.UTC().Format(time.RFC3339)
	}
	for _, r := range o.Ranges {
		pg.Ranges = append(pg.Ranges, newRangeRow(r))
	}
	for i, s := range sums {
		sec, err := newSection(db, s, o, i)
		if err != nil {
			return fmt.Errorf("report: %s: %w", s.Workload.Key(), err)
		}
		pg.Sections = append(pg.Sections, sec)
	}
	return pageTemplate.Execute(w, pg)
}

type page struct {
	Title     string
	Generated string
	Many      bool
	Ranges    []rangeRow
	Sections  []*section
}

// rangeRow is a tuned shape range in the page's table.
type rangeRow struct {
	Op, Range, Device, Buckets string
	HeldOut                    int
	Median, Max                string // "4.1%", "inf", "-" when none was measured
	Trials                     int
}

func newRangeRow(r tunedb.Range) rangeRow {
	row := rangeRow{Op: r.Workload.Op + " " + string(r.Workload.DType), Range: r.String(), Device: r.Workload.Device,
		HeldOut: len(r.HeldOut), Median: "-", Max: "-", Trials: r.Trials}
	var bs []string
	for _, b := range r.Buckets {
		bs = append(bs, kernels.FormatShape(b))
	}
	row.Buckets = strings.Join(bs, ", ")
	if len(r.HeldOut) > 0 {
		median, worst := tunedb.Regret(r.HeldOut)
		row.Median, row.Max = formatRegret(median), formatRegret(worst)
	}
	return row
}

// formatRegret is "4.1%", or "inf".
func formatRegret(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// section is one workload's part of the page.
type section struct {
	ID       string
	Name     string // "softmax 4096x1024 f32"
	Workload tunedb.Workload
	Note     string // about the template version, when it is not this autotune's

	Records, OK int
	Failures    []failure
	Best        *tunedb.Record
	BestMedian  string // tunedb.FormatNS, as best prints it
	BestP20     string
	BestP80     string
	Rates       string // "82.6 GB/s, 10.3 GFLOP/s"
	Within5     int    // trials to within 5% of the best; 0 when not known
	Runs        int
	Compile     string // total compile time
	Execute     string
	CompileShr  string // "34%"

	CurveTrials, CurveTime template.HTML
	Latency                template.HTML
	Batches                template.HTML
	BatchNote              string
	Roofline               template.HTML
	RoofNote               string
	Top                    []topRow
	TopKnobs               []string
	Model                  modelEval
	ModelTau               string
	ModelChart             template.HTML
}

type topRow struct {
	Rank                      int
	Median, P20, P80, Samples string
	GFLOPs, GBps, VsBest      string
	Knobs                     []string // values of the section's TopKnobs
	Config                    string
}

func newSection(db Store, s tunedb.Summary, o Options, i int) (*section, error) {
	w := s.Workload
	sec := &section{
		ID:       fmt.Sprintf("w%d", i+1),
		Name:     fmt.Sprintf("%s %s %s", w.Op, w.ShapeString(), w.DType),
		Workload: w, Records: s.Records, OK: s.ByStatus[tunedb.StatusOK],
		Failures: failuresOf(s.ByStatus), Best: s.Best,
	}
	recs, err := db.Records(w)
	if err != nil {
		return nil, err
	}
	target, terr := device.FromFingerprint(w.Device)
	tmpl, ok := kernels.TemplateFor(w.Op, kernels.BackendOf(target))
	current := terr == nil && ok && tmpl.Version == w.Template
	switch {
	case terr != nil:
		sec.Note = "this autotune does not know the device (" + terr.Error() + "): no throughput, roofline or model"
	case !ok:
		sec.Note = fmt.Sprintf("this autotune has no %s template of %s: no throughput, roofline or model", kernels.BackendOf(target), w.Op)
	case !current:
		sec.Note = fmt.Sprintf("template %s, not this autotune's %s: these records measured older code; best and bench ignore them", w.Template, tmpl.Version)
	}
	haveCounts := ok && tmpl.FLOPs != nil && tmpl.Bytes != nil
	if s.Best != nil {
		sec.BestMedian = tunedb.FormatNS(s.Best.MedianNS)
		sec.BestP20, sec.BestP80 = tunedb.FormatNS(s.Best.P20NS), tunedb.FormatNS(s.Best.P80NS)
		if haveCounts {
			gbps, gflops := tmpl.Rates(w.Shape, w.DType, s.Best.MedianNS)
			sec.Rates = fmt.Sprintf("%.3g GB/s, %.3g GFLOP/s", gbps, gflops)
		}
	}

	runs := splitRuns(recs)
	sec.Runs = len(runs)
	if s.Best != nil {
		sec.Within5 = trialsWithin(runs, s.Best.MedianNS, within5Percent)
	}
	t := timesOf(recs)
	sec.Compile, sec.Execute = formatSeconds(t.build), formatSeconds(t.run)
	sec.CompileShr = fmt.Sprintf("%.0f%%", 100*t.share())
	if sec.CurveTrials, err = curvesChart(runs, false); err != nil {
		return nil, err
	}
	if sec.CurveTime, err = curvesChart(runs, true); err != nil {
		return nil, err
	}
	if sec.Latency, err = latencyChart(okMedians(recs)); err != nil {
		return nil, err
	}
	if sec.Batches, err = batchChart(runs); err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.grouped {
			sec.BatchNote = fmt.Sprintf("Some runs' batches cannot be told apart (their records' build times differ: each candidate was compiled on its own); their bars are groups of %d consecutive trials.", fallbackBatch)
		}
	}

	switch l, ok := o.Limits[w.Device]; {
	case s.Best == nil:
	case !haveCounts:
		sec.RoofNote = "No roofline: the op's FLOP and byte counts are unknown to this autotune."
	case !ok || !(l.PeakGFLOPs > 0 && l.GBps > 0):
		sec.RoofNote = "No roofline: the peak and bandwidth of this device are not known here (a report written on the machine that tuned it measures them)."
	default:
		_, gflops := tmpl.Rates(w.Shape, w.DType, s.Best.MedianNS)
		ai := tmpl.FLOPs(w.Shape) / tmpl.BytesOf(w.Shape, w.DType)
		bound := math.Min(l.PeakGFLOPs, l.GBps*ai)
		label := fmt.Sprintf("winner: %.3g GFLOP/s at %.3g FLOP/byte, %.0f%% of its roof", gflops, ai, 100*gflops/bound)
		if sec.Roofline, err = rooflineChart(l, ai, gflops, label); err != nil {
			return nil, err
		}
		sec.RoofNote = fmt.Sprintf("%s. The winner runs at %.0f%% of the FMA peak and moves its minimum bytes at %.0f%% of the bandwidth; at %.3g FLOP/byte it is %s-bound (the ridge is at %.3g).",
			l.Source, 100*gflops/l.PeakGFLOPs, 100*(tmpl.BytesOf(w.Shape, w.DType)/s.Best.MedianNS)/l.GBps, ai,
			map[bool]string{true: "memory", false: "compute"}[ai < l.PeakGFLOPs/l.GBps], l.PeakGFLOPs/l.GBps)
	}

	top, err := db.TopK(w, TopConfigs)
	if err != nil {
		return nil, err
	}
	sec.TopKnobs = differingKnobs(top)
	for k, r := range top {
		row := topRow{Rank: k + 1, Median: tunedb.FormatNS(r.MedianNS), P20: tunedb.FormatNS(r.P20NS),
			P80: tunedb.FormatNS(r.P80NS), Samples: fmt.Sprint(len(r.SamplesNS)), Config: r.Config.String(),
			VsBest: fmt.Sprintf("%.2f×", r.MedianNS/top[0].MedianNS)}
		if haveCounts {
			gbps, gflops := tmpl.Rates(w.Shape, w.DType, r.MedianNS)
			row.GBps, row.GFLOPs = fmt.Sprintf("%.3g", gbps), fmt.Sprintf("%.3g", gflops)
		}
		for _, name := range sec.TopKnobs {
			v, _ := r.Config.Lookup(name)
			row.Knobs = append(row.Knobs, valueText(v))
		}
		sec.Top = append(sec.Top, row)
	}

	if current && tmpl.Space != nil {
		sec.Model = evalModel(tmpl, w, target, recs)
		if !math.IsNaN(sec.Model.Tau) {
			sec.ModelTau = fmt.Sprintf("%.3f", sec.Model.Tau)
		}
		if sec.ModelChart, err = modelChart(sec.Model); err != nil {
			return nil, err
		}
		if sec.Model.Saved, err = describeSaved(db, w); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

func valueText(v schedule.Value) string {
	s := v.String()
	if s == "" {
		return "-"
	}
	return s
}

// formatSeconds writes a total time: "2m05s", "3.4 s".
func formatSeconds(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(fmt.Sprintf("%.3g s", d.Seconds()), " ")
}
