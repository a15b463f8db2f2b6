package promexport

import (
	"strings"
	"testing"
	"time"
)

var now = time.Date(2024, 5, 1, 12, 0, 7, 0, time.UTC)

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
	}{
		{"now", now},
		{" now ", now},
		{"-1h", now.Add(-time.Hour)},
		{"now-90s", now.Add(-90 * time.Second)},
		{"-1d", now.Add(-24 * time.Hour)},
		{"-1.5h", now.Add(-90 * time.Minute)},
		{"2024-05-01T10:00:00Z", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"2024-05-01T12:00:00+02:00", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"2024-05-01T10:00:00.250Z", time.Date(2024, 5, 1, 10, 0, 0, 250e6, time.UTC)},
		{"2024-05-01", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)},
		{"1714557600", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"1714557600.5", time.Date(2024, 5, 1, 10, 0, 0, 500e6, time.UTC)},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-", "-0s", "now-", "now+1h", "2024-05-01 10:00", "2024-13-01", "1e9", "17145576000000", "1.2.3", "1714557600.", "-1x", "+5m"} {
		if got, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) accepted: %v", bad, got)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{"15s": 15 * time.Second, "5m": 5 * time.Minute, "1h30m": 90 * time.Minute, "1d": 24 * time.Hour, "2w": 14 * 24 * time.Hour, "1.5h": 90 * time.Minute, "500ms": 500 * time.Millisecond}
	for in, want := range cases {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0s", "-5m", "5", "m", "1h-", "10000000000000y"} {
		if got, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted: %v", bad, got)
		}
	}
}

func TestResolve(t *testing.T) {
	// --since: the period before now, aligned on the step.
	r, err := TimeRange{Since: "1h", Step: "15s"}.Resolve(now)
	if err != nil {
		t.Fatal(err)
	}
	if wantEnd := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC); !r.End.Equal(wantEnd) || !r.Start.Equal(wantEnd.Add(-time.Hour)) || r.Step != 15*time.Second {
		t.Errorf("since 1h: %+v", r)
	}
	// An absolute range is kept as given.
	r, err = TimeRange{Start: "2024-05-01T10:00:07Z", End: "2024-05-01T11:00:07Z", Step: "1m"}.Resolve(now)
	if err != nil || r.Start.Second() != 7 || r.End.Sub(r.Start) != time.Hour {
		t.Errorf("absolute: %+v %v", r, err)
	}
	// The default period, and a step picked for about 1000 points.
	r, err = TimeRange{DefaultSince: 24 * time.Hour, DefaultPoints: 1000}.Resolve(now)
	if err != nil || r.End.Sub(r.Start) != 24*time.Hour || r.Step != 86*time.Second {
		t.Errorf("defaults: %+v %v", r, err)
	}
	bad := []struct {
		tr   TimeRange
		want string
	}{
		{TimeRange{Start: "-2h", Since: "1h", Step: "15s"}, "not both"},
		{TimeRange{Start: "-1h", End: "-2h", Step: "15s"}, "must be before"},
		{TimeRange{Since: "1y", Step: "1s"}, "at most 11000"},
		{TimeRange{Since: "1h"}, "--step"},
		{TimeRange{Since: "1h", Step: "soon"}, "--step"},
		{TimeRange{Since: "an hour", Step: "15s"}, "--since"},
		{TimeRange{Start: "then", Step: "15s"}, "--start"},
		{TimeRange{Since: "1h", End: "later", Step: "15s"}, "--end"},
		{TimeRange{Step: "15s"}, "--start or --since"},
	}
	for _, c := range bad {
		if _, err := c.tr.Resolve(now); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.tr, err, c.want)
		}
	}
}

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery(`puts = sum by (instance) (rate(etcd_mvcc_put_total{job="etcd"}[5m]))`)
	if err != nil || q.Name != "puts" || q.Expr != `sum by (instance) (rate(etcd_mvcc_put_total{job="etcd"}[5m]))` {
		t.Errorf("%+v %v", q, err)
	}
	for _, bad := range []string{"", "puts", "puts=", "=up", "1x=up", "a-b=up", "time=up", "unix=up", "a b=up", "é=up"} {
		if q, err := ParseQuery(bad); err == nil {
			t.Errorf("ParseQuery(%q) accepted: %+v", bad, q)
		}
	}
	if err := CheckUnique([]Query{{Name: "a"}, {Name: "b"}, {Name: "a"}}); err == nil {
		t.Error("duplicate names accepted")
	}
}

func TestParseSelector(t *testing.T) {
	good := map[string]string{
		``:                                     ``,
		`job="etcd"`:                           `job="etcd"`,
		`{job="etcd"}`:                         `job="etcd"`,
		` { job="etcd", instance=~"10.0.*" } `: `job="etcd", instance=~"10.0.*"`,
		`instance=~"(a|b):2379",`:              `instance=~"(a|b):2379"`,
		`job!="x\"}"`:                          `job!="x\"}"`,
		"cluster=`prod{1}`":                    "cluster=`prod{1}`",
	}
	for in, want := range good {
		if got, err := ParseSelector(in); err != nil || got != want {
			t.Errorf("ParseSelector(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`etcd`, `job="etcd"} or vector(1) or x{a="b"`, `job="etcd`, `job=etcd}`, `{job="a"}[5m]`, `job="x\"`} {
		if got, err := ParseSelector(bad); err == nil {
			t.Errorf("ParseSelector(%q) accepted: %q", bad, got)
		}
	}
}

// The parsers of user input: never panic, and what they accept keeps
// their promises.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"now", "-1h", "now-5m", "2024-05-01T10:00:00Z", "2024-05-01", "1714557600.5", "", "-", "1e9", "9999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTime(s, now)
		if err == nil && strings.HasPrefix(strings.TrimSpace(s), "-") && !ts.Before(now) {
			t.Errorf("relative time %q is not before now: %v", s, ts)
		}
		if d, err := ParseDuration(s); err == nil && d <= 0 {
			t.Errorf("duration %q accepted as %v", s, d)
		}
	})
}

func FuzzTimeRange(f *testing.F) {
	f.Add("", "now", "1h", "15s")
	f.Add("-2h", "-1h", "", "1m")
	f.Add("2024-05-01T10:00:00Z", "1714557600", "", "1s")
	f.Fuzz(func(t *testing.T, start, end, since, step string) {
		r, err := TimeRange{Start: start, End: end, Since: since, Step: step}.Resolve(now)
		if err != nil {
			return
		}
		if !r.Start.Before(r.End) || r.Step <= 0 || r.End.Sub(r.Start)/r.Step+1 > MaxPoints {
			t.Errorf("accepted an unusable range %+v", r)
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"puts=rate(etcd_mvcc_put_total[5m])", "a=b=c", "=", "x", "time=up", "a:b_1=up{job=\"x\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			return
		}
		if q.Name == "" || q.Expr == "" || strings.ContainsAny(q.Name, "={} ,\"") {
			t.Errorf("ParseQuery(%q) = %+v", s, q)
		}
	})
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`job="etcd"`, `{job="etcd",instance=~"a|b"}`, `} or vector(1) or x{`, `a="\"}"`, "a=`}`", ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil || sel == "" {
			return
		}
		// What is accepted is matchers only, and reading it again, with or
		// without braces, gives it back: nothing in it closes or opens braces.
		if !matchersOnly(sel) {
			t.Errorf("ParseSelector(%q) = %q, which is not matchers only", s, sel)
		}
		for _, again := range []string{sel, "{" + sel + "}"} {
			if back, err := ParseSelector(again); err != nil || back != sel {
				t.Errorf("ParseSelector(%q) = %q, %v; want %q", again, back, err, sel)
			}
		}
	})
}

func TestWindowFor(t *testing.T) {
	cases := []struct{ w, step, want time.Duration }{
		{0, 15 * time.Second, DefaultWindow},
		{0, 10 * time.Minute, 10 * time.Minute},
		{time.Minute, 10 * time.Minute, time.Minute},
	}
	for _, c := range cases {
		if got := WindowFor(c.w, c.step); got != c.want {
			t.Errorf("WindowFor(%v, %v) = %v, want %v", c.w, c.step, got, c.want)
		}
	}
}
