package promexport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// MaxPoints is the most points Prometheus returns per series in one range
// query (its API refuses more: "exceeded maximum resolution of 11,000
// points per timeseries").
const MaxPoints = 11000

// ParseDuration reads a positive duration written the Prometheus way
// ("90s", "5m", "1h30m", "1d", "2w") or the Go way ("1.5h", "500ms").
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty duration")
	}
	d, err := model.ParseDuration(t)
	if err != nil {
		gd, gerr := time.ParseDuration(t)
		if gerr != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 90s, 15m, 1h30m, 1d)", s)
		}
		d = model.Duration(gd)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return time.Duration(d), nil
}

// ParseTime reads a point in time: "now", a duration before now ("-1h",
// "now-1h"), RFC3339 ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00+02:00"),
// a date ("2024-05-01", midnight UTC) or unix seconds ("1714557600",
// "1714557600.5").
func ParseTime(s string, now time.Time) (time.Time, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return time.Time{}, fmt.Errorf("empty time")
	case t == "now":
		return now, nil
	case strings.HasPrefix(t, "now-") || strings.HasPrefix(t, "-"):
		rel := strings.TrimPrefix(strings.TrimPrefix(t, "now"), "-")
		d, err := ParseDuration(rel)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: %w", s, err)
		}
		return now.Add(-d), nil
	}
	if isUnixNumber(t) {
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || f > 1e11 {
			return time.Time{}, fmt.Errorf("time %q is not a plausible unix time in seconds", s)
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
	}
	if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
		return ts, nil
	}
	if ts, err := time.Parse(time.DateOnly, t); err == nil {
		return ts, nil
	}
	return time.Time{}, fmt.Errorf("time %q: use RFC3339 (2024-05-01T10:00:00Z), a date (2024-05-01), unix seconds, now or -1h", s)
}

// relativeEnd reports whether an --end value is now or relative to now.
func relativeEnd(s string) bool {
	t := strings.TrimSpace(s)
	return t == "" || strings.HasPrefix(t, "now") || strings.HasPrefix(t, "-")
}

func isUnixNumber(s string) bool {
	dots := 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && i > 0:
			dots++
		default:
			return false
		}
	}
	return dots <= 1 && s[len(s)-1] != '.'
}

// TimeRange is what the --start, --end, --since and --step flags say.
type TimeRange struct {
	Start, End, Since, Step string
	// DefaultSince applies when neither Start nor Since is given.
	DefaultSince time.Duration
	// DefaultPoints, when Step is empty, picks a step that gives about this
	// many points (at least 1s); without it Step is required.
	DefaultPoints int
}

// Resolved is a validated time range.
type Resolved struct {
	Start, End time.Time
	Step       time.Duration
}

// Resolve validates the flags against now: it rejects --start with
// --since, a start not before the end, and more than MaxPoints points.
func (tr TimeRange) Resolve(now time.Time) (Resolved, error) {
	var r Resolved
	var err error
	r.End = now
	if tr.End != "" {
		if r.End, err = ParseTime(tr.End, now); err != nil {
			return r, fmt.Errorf("--end: %w", err)
		}
	}
	switch {
	case tr.Start != "" && tr.Since != "":
		return r, fmt.Errorf("give --start or --since, not both")
	case tr.Start != "":
		if r.Start, err = ParseTime(tr.Start, now); err != nil {
			return r, fmt.Errorf("--start: %w", err)
		}
	default:
		since := tr.DefaultSince
		if tr.Since != "" {
			if since, err = ParseDuration(tr.Since); err != nil {
				return r, fmt.Errorf("--since: %w", err)
			}
		}
		if since <= 0 {
			return r, fmt.Errorf("give --start or --since")
		}
		r.Start = r.End.Add(-since)
	}
	if !r.Start.Before(r.End) {
		return r, fmt.Errorf("the start (%s) must be before the end (%s)", r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339))
	}
	span := r.End.Sub(r.Start)
	switch {
	case tr.Step != "":
		if r.Step, err = ParseDuration(tr.Step); err != nil {
			return r, fmt.Errorf("--step: %w", err)
		}
	case tr.DefaultPoints > 0:
		r.Step = max(time.Second, (span / time.Duration(tr.DefaultPoints)).Round(time.Second))
	default:
		return r, fmt.Errorf("give --step")
	}
	if relativeEnd(tr.End) && (tr.Start == "" || relativeEnd(tr.Start)) {
		// A period that ends now is aligned on the step, as dashboards do,
		// so that the rows fall on round times and two runs line up.
		off := time.Duration(r.End.UnixNano() % int64(r.Step))
		r.Start, r.End = r.Start.Add(-off), r.End.Add(-off)
	}
	if pts := span/r.Step + 1; pts > MaxPoints {
		return r, fmt.Errorf("%s at --step %s is %d points per series; Prometheus returns at most %d: use --step %s or more",
			model.Duration(span), model.Duration(r.Step), pts, MaxPoints, model.Duration((span/(MaxPoints-1)).Round(time.Second)+time.Second))
	}
	return r, nil
}
