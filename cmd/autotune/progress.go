package main

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// progress shows a tuning run on stderr: a bar on a terminal, otherwise one
// plain line per batch, which reads well in CI logs and files.
type progress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar // nil when w is not a terminal
	bytes float64                  // moved per kernel call, for GB/s
}

func newProgress(w io.Writer, budget int, bytes float64) *progress {
	p := &progress{w: w, bytes: bytes}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(budget,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("tuning"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Batch implements tune.Observer.
func (p *progress) Batch(s tune.Progress) {
	best := "best: none yet"
	if s.Best != nil {
		best = fmt.Sprintf("best %s (%.3g GB/s)", tunedb.FormatNS(s.Best.MedianNS), p.bytes/s.Best.MedianNS)
	}
	line := fmt.Sprintf("%s, failures: %s, build %.1fs / run %.1fs", best, formatFailures(s.Failures),
		s.BuildTime.Seconds(), s.RunTime.Seconds())
	if s.Shared > 0 {
		line += fmt.Sprintf(", sharing the workload with another tuner: %d configs left to it", s.Shared)
	}
	if p.bar != nil {
		p.bar.Describe(line)
		p.bar.Set(s.Trials)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", s.Trials, s.Budget, line)
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
