package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium returns the first Chromium binary on the PATH, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium, chromium-browser or google-chrome on the PATH (Debian: apt-get install chromium)")
	return ""
}

// consoleLine is how Chromium logs a page's console message (console.log,
// console.error, an uncaught exception) to stderr with
// --enable-logging=stderr: `[pid:tid:time:INFO:CONSOLE:1] "msg", source: URL (1)`,
// or CONSOLE(1) in older versions. The level is not in the line.
var consoleLine = regexp.MustCompile(`:CONSOLE[:(]`)

// screenshot opens the page at path in headless Chromium with a window of
// w×h pixels and returns the screenshot and the messages the page logged to
// its console.
func screenshot(t *testing.T, bin, path string, w, h int) (image.Image, []string) {
	t.Helper()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), // not the user's, and not shared with a parallel run
		"--enable-logging=stderr", "--v=0",
		"--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h),
		"file://"+path)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.Bytes())
	}
	var console []string
	for line := range strings.Lines(stderr.String()) {
		if consoleLine.MatchString(line) {
			console = append(console, strings.TrimSpace(line))
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("%s wrote no screenshot: %v\n%s", bin, err, stderr.Bytes())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot: %v", err)
	}
	return img, console
}

// blank says why a screenshot looks like nothing was drawn: too few
// distinct colours (a page of text and charts has hundreds, anti-aliasing
// included), or almost every pixel white.
func blank(img image.Image) string {
	b := img.Bounds()
	colours := map[color.RGBA]bool{}
	white := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			colours[c] = true
			if c.R == 0xff && c.G == 0xff && c.B == 0xff {
				white++
			}
		}
	}
	n := b.Dx() * b.Dy()
	switch {
	case len(colours) < 16:
		return fmt.Sprintf("%d distinct colours", len(colours))
	case float64(white) > 0.995*float64(n):
		return fmt.Sprintf("%d of %d pixels white", white, n)
	}
	return ""
}

// TestBrowser renders the report of TestPageStructure's fixture in headless
// Chromium and fails if the page logged anything to its console (it has no
// scripts, so any message is an error) or the screenshot is blank. A page
// that is broken both ways checks that the test would notice.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()

	db := newStore(t, softmaxFixture, gemmFixture)
	host := testCPU.Fingerprint()
	page, _ := writeReport(t, db, &Options{Limits: map[string]Limits{host: {PeakGFLOPs: 200, GBps: 40, Source: "given by the test"}}})
	broken := `<!DOCTYPE html><html><body><script>console.error("broken"); notDefined();</script></body></html>`

	for _, tc := range []struct {
		name, page string
		bad        bool
	}{
		{"report", page, false},
		{"broken", broken, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(path, []byte(tc.page), 0o644); err != nil {
				t.Fatal(err)
			}
			const w, h = 1000, 1400
			img, console := screenshot(t, bin, path, w, h)
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				t.Errorf("the screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
			}
			why := blank(img)
			if !tc.bad {
				for _, m := range console {
					t.Errorf("the page logged: %s", m)
				}
				if why != "" {
					t.Errorf("the screenshot is blank: %s", why)
				}
				return
			}
			if len(console) < 2 {
				t.Errorf("a page that logs an error and throws logged %q; want both", console)
			}
			if why == "" {
				t.Errorf("an empty page's screenshot does not look blank")
			}
		})
	}
}

// svgColour is a colour of an SVG element's style, as vgsvg writes it.
var svgColour = regexp.MustCompile(`(fill|stroke):([^;"]*)`)

// TestColours checks that every fill and stroke in the report's charts is
// a colour a browser can parse: one it cannot (a premultiplied color.RGBA
// with a channel above its alpha becomes "#31BD11E") draws nothing, and
// neither the XML parser nor a screenshot's colour count notices.
func TestColours(t *testing.T) {
	db := newStore(t, softmaxFixture, gemmFixture)
	host := testCPU.Fingerprint()
	page, _ := writeReport(t, db, &Options{Limits: map[string]Limits{host: {PeakGFLOPs: 200, GBps: 40, Source: "given by the test"}}})
	valid := regexp.MustCompile(`^(none|#[0-9A-Fa-f]{6})$`)
	seen := map[string]bool{}
	for _, m := range svgColour.FindAllStringSubmatch(page, -1) {
		if c := m[2]; !valid.MatchString(c) && !seen[c] {
			seen[c] = true
			t.Errorf("%s:%s is not a colour", m[1], c)
		}
	}
	if len(svgColour.FindAllString(page, -1)) < 100 {
		t.Errorf("fewer than 100 fills and strokes on the page: is vgsvg's style format still %s?", svgColour)
	}
}
