package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/autotune-dev/autotune/tunedb"
)

// Size of a chart, in points; the page scales it to its column.
const (
	chartW = 6.4 * vg.Inch
	chartH = 3.2 * vg.Inch
)

var (
	svgProlog = regexp.MustCompile(`(?s)^.*?<svg `)
	svgNS     = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
	svgSize   = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)
)

// svg renders p as an SVG element to inline in HTML: without the XML
// prolog and the namespace declarations (HTML gives inline SVG its
// namespace), and without a fixed size (the page's style gives it one).
func svg(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(false))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := svgProlog.ReplaceAllString(buf.String(), "<svg ")
	s = svgNS.ReplaceAllString(s, "")
	s = svgSize.ReplaceAllString(s, fmt.Sprintf(`<svg role="img" width="%.0f" height="%.0f"`, w.Points(), h.Points()))
	return template.HTML(s), nil // #nosec: drawn by vgsvg, which escapes its text
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// nsTicks labels a logarithmic axis of nanoseconds as best prints times:
// at powers of ten over a wide range, at round values within a decade or
// two, where a log scale has few powers of ten to mark.
var nsTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	if hi/lo > 100 {
		ticks = plot.LogTicks{}.Ticks(lo, hi)
	} else {
		ticks = plot.DefaultTicks{}.Ticks(lo, hi)
	}
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = tunedb.FormatNS(ticks[i].Value)
		}
	}
	return ticks
})

// logNS makes an axis of nanoseconds logarithmic.
func logNS(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = nsTicks
}

// curvesChart plots the best median so far of each run against the trial
// number (byTime false) or the seconds since the run began, with the
// re-measured leaders marked.
func curvesChart(runs []*run, byTime bool) (template.HTML, error) {
	x := "trial (within its run)"
	if byTime {
		x = "seconds since the run began"
	}
	p := newPlot("best so far", x, "median")
	logNS(&p.Y)
	any := false
	var marks plotter.XYs
	for i, r := range runs {
		pts := r.curve()
		if len(pts) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(pts))
		for j, pt := range pts {
			xys[j] = plotter.XY{X: float64(pt.trial), Y: pt.ns}
			if byTime {
				xys[j].X = pt.seconds
			}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return "", err
		}
		l.StepStyle = plotter.PostStep
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(runName(i, r), l)
		any = true
		for j, rec := range r.recs {
			if r.remeasured[j] && rec.Status == tunedb.StatusOK {
				xy := plotter.XY{X: float64(j + 1), Y: rec.MedianNS}
				if byTime {
					xy.X = rec.Time.Sub(r.start()).Seconds()
				}
				marks = append(marks, xy)
			}
		}
	}
	if !any {
		return "", nil
	}
	if len(marks) > 0 {
		s, err := plotter.NewScatter(marks)
		if err != nil {
			return "", err
		}
		s.GlyphStyle.Shape = draw.CrossGlyph{}
		s.GlyphStyle.Radius = vg.Points(3)
		p.Add(s)
		p.Legend.Add("re-measured leader", s)
	}
	return svg(p, chartW, chartH)
}

func runName(i int, r *run) string {
	return fmt.Sprintf("run %d: %s, %s", i+1, r.start().Format("2006-01-02 15:04"), r.recs[0].Tool)
}

// latencyChart is a histogram of the ok medians on a logarithmic axis.
func latencyChart(medians []float64) (template.HTML, error) {
	if len(medians) == 0 {
		return "", nil
	}
	vs := make(plotter.Values, len(medians))
	for i, m := range medians {
		vs[i] = math.Log10(m)
	}
	bins := min(40, max(5, len(medians)/5))
	h, err := plotter.NewHist(vs, bins)
	if err != nil {
		return "", err
	}
	h.FillColor = plotutil.Color(0)
	h.LineStyle.Width = 0
	p := newPlot("medians of the correct configs", "median", "configs")
	p.Add(h)
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		ticks := nsTicks.Ticks(math.Pow(10, lo), math.Pow(10, hi))
		for i := range ticks {
			ticks[i].Value = math.Log10(ticks[i].Value)
		}
		return ticks
	})
	return svg(p, chartW, chartH)
}

// batchChart stacks each batch's run time on its build time, in seconds,
// batches of every run in order.
func batchChart(runs []*run) (template.HTML, error) {
	var build, exec plotter.Values
	for _, r := range runs {
		for _, b := range r.batches {
			t := timesOf(b)
			build = append(build, t.build.Seconds())
			exec = append(exec, t.run.Seconds())
		}
	}
	if len(build) == 0 {
		return "", nil
	}
	width := vg.Length(math.Max(0.5, math.Min(12, 360/float64(len(build)))))
	bb, err := plotter.NewBarChart(build, width)
	if err != nil {
		return "", err
	}
	bb.Color, bb.LineStyle.Width = plotutil.Color(1), 0
	be, err := plotter.NewBarChart(exec, width)
	if err != nil {
		return "", err
	}
	be.Color, be.LineStyle.Width = plotutil.Color(0), 0
	be.StackOn(bb)
	p := newPlot("time per batch", "batch", "seconds")
	p.Add(bb, be)
	p.Legend.Add("compile (generate and build)", bb)
	p.Legend.Add("execute (check and time)", be)
	return svg(p, chartW, chartH)
}

// rooflineChart draws min(peak, bandwidth × intensity) on log-log axes and
// the winner at its arithmetic intensity.
func rooflineChart(l Limits, intensity, gflops float64, label string) (template.HTML, error) {
	ridge := l.PeakGFLOPs / l.GBps
	lo := math.Min(intensity, ridge) / 8
	hi := math.Max(intensity, ridge) * 8
	var roof plotter.XYs
	for k := 0; k <= 64; k++ {
		ai := lo * math.Pow(hi/lo, float64(k)/64)
		roof = append(roof, plotter.XY{X: ai, Y: math.Min(l.PeakGFLOPs, l.GBps*ai)})
	}
	roof = append(roof, plotter.XY{X: ridge, Y: l.PeakGFLOPs})
	slices.SortFunc(roof, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	line, err := plotter.NewLine(roof)
	if err != nil {
		return "", err
	}
	line.Width = vg.Points(2)
	p := newPlot("roofline", "arithmetic intensity (FLOP/byte)", "GFLOP/s")
	p.Legend.Top = false // below the roof, out of its way
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Add(line)
	p.Legend.Add(fmt.Sprintf("peak %.1f GFLOP/s, bandwidth %.1f GB/s", l.PeakGFLOPs, l.GBps), line)
	pt := plotter.XYs{{X: intensity, Y: gflops}}
	s, err := plotter.NewScatter(pt)
	if err != nil {
		return "", err
	}
	s.GlyphStyle.Shape = draw.CircleGlyph{}
	s.GlyphStyle.Radius = vg.Points(4)
	s.GlyphStyle.Color = plotutil.Color(1)
	p.Add(s)
	p.Legend.Add(label, s)
	p.Y.Min = math.Min(p.Y.Min, gflops/2)
	return svg(p, chartW, chartH)
}

// modelChart plots the model's score of each ok test record against its
// measured median.
func modelChart(e modelEval) (template.HTML, error) {
	if len(e.Scores) == 0 {
		return "", nil
	}
	xys := make(plotter.XYs, len(e.Scores))
	for i := range e.Scores {
		xys[i] = plotter.XY{X: e.MedianNS[i], Y: e.Scores[i]}
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return "", err
	}
	s.GlyphStyle.Radius = vg.Points(2)
	s.GlyphStyle.Color = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xa0} // not RGBA: that is premultiplied, and B > A is no colour
	p := newPlot(fmt.Sprintf("held-out records: Kendall τ %.2f", e.Tau), "measured median", "predicted score (higher: faster)")
	logNS(&p.X)
	p.Add(s)
	return svg(p, chartW, chartH)
}
