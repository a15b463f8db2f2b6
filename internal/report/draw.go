package report

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/etcdperf/etcdperf/internal/result"
)

// pngDPI makes PNG charts sharp on a ticket or a slide (about 1100 pixels
// wide).
const pngDPI = 150

func (c Chart) size() (vg.Length, vg.Length) {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = chartWidth
	}
	if h <= 0 {
		h = chartHeight
	}
	return w, h
}

// draw draws the chart on a canvas. The plotting library panics on data it
// cannot place (e.g. a value of zero on a log axis); one bad chart must not
// cost the whole report, so that becomes an error.
func (c Chart) draw(cv vg.CanvasSizer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart %s could not be drawn: %v", c.Name, r)
		}
	}()
	// A margin keeps the title and the last tick labels off the edges.
	dc := draw.Crop(draw.New(cv), 4, -8, 4, -6)
	if c.Lower == nil {
		c.Plot.Draw(dc)
		return nil
	}
	upper, lower := stacked(dc, c.Plot, c.Lower, c.LowerShare)
	c.Plot.Draw(upper)
	c.Lower.Draw(lower)
	return nil
}

// stacked splits a canvas into two, one above the other (the lower taking
// share of the height), so that the two plots' data areas span the same
// x: a shared x axis.
func stacked(dc draw.Canvas, up, low *plot.Plot, share float64) (draw.Canvas, draw.Canvas) {
	if !(share > 0 && share < 1) {
		share = 0.4
	}
	h := dc.Max.Y - dc.Min.Y
	lh := vg.Length(float64(h) * share)
	upper := draw.Crop(dc, 0, 0, lh, 0)
	lower := draw.Crop(dc, 0, 0, 0, lh-h)
	// Each plot's axis takes the width its tick labels need; twice,
	// because the padding for glyphs at the edges scales with the width.
	for range 2 {
		du, dl := up.DataCanvas(upper), low.DataCanvas(lower)
		lo, hi := max(du.Min.X, dl.Min.X), min(du.Max.X, dl.Max.X)
		upper = draw.Crop(upper, lo-du.Min.X, hi-du.Max.X, 0, 0)
		lower = draw.Crop(lower, lo-dl.Min.X, hi-dl.Max.X, 0, 0)
	}
	return upper, lower
}

// SVG returns the chart as an <svg> element to inline in HTML: no XML
// prolog, no namespace declarations, and a viewBox so that it scales. The
// page prints the title above it, so the plot's own title is left out.
func (c Chart) SVG() (string, error) {
	w, h := c.size()
	cv := vgsvg.New(w, h)
	title := c.Plot.Title.Text
	c.Plot.Title.Text = ""
	err := c.draw(cv)
	c.Plot.Title.Text = title
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("chart %s: no <svg> element", c.Name)
	}
	s = s[i:]
	end := strings.Index(s, ">")
	head := s[:end]
	for _, attr := range []string{`xmlns="http://www.w3.org/2000/svg"`, `xmlns:xlink="http://www.w3.org/1999/xlink"`} {
		head = strings.Replace(head, attr, "", 1)
	}
	head = strings.Join(strings.Fields(head), " ")
	return head + ` role="img" aria-label="` + html.EscapeString(title) + `"` + s[end:], nil
}

// PNG returns the chart as a PNG image.
func (c Chart) PNG() ([]byte, error) {
	w, h := c.size()
	cv := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))
	if err := c.draw(cv); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Charts returns every chart of the report, section by section.
func (rep *Report) Charts() []Chart {
	var out []Chart
	for _, b := range rep.blocks() {
		out = append(out, b.Charts...)
	}
	return out
}

// WritePNGs writes each chart as DIR/NAME.png (creating DIR) and returns
// the paths written.
func (rep *Report) WritePNGs(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the PNG directory: %w", err)
	}
	var paths []string
	for _, c := range rep.Charts() {
		b, err := c.PNG()
		if err != nil {
			return paths, err
		}
		p := filepath.Join(dir, c.Name+".png")
		if err := result.WriteFileAtomic(p, b); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
