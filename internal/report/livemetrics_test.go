package report

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The metrics Results are the real runs of internal/render/testdata: a
// 3-member cluster under load, and the same with a member killed midway.
func TestMetricsSection(t *testing.T) {
	in, err := Load([]string{filepath.Join("..", "render", "testdata", "metrics-3members-killed.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := New(Combine(in))
	out := pageOf(t, rep.Root)
	// The killed member answered some of the intervals.
	var answered string
	for _, m := range in[0].Result.Metrics.Members {
		if m.Unreachable > 0 {
			answered = fmt.Sprintf(`%s</td><td class="num">%d of %d</td>`, m.Name, len(m.Series)-m.Unreachable, len(m.Series))
		}
	}
	if answered == "" {
		t.Fatal("the capture was meant to have a member that did not answer")
	}
	for _, want := range []string{"etcd members over time", "WAL fsync p99 per interval", "database size over time",
		"p99 limit 10ms", "resolution 1ms", answered, "never answered", "worst member&#39;s WAL fsync p99 (metrics)", "scrapes not answered (metrics)"} {
		if want == "never answered" {
			if strings.Contains(out, want) {
				t.Errorf("page says %q of members that answered", want)
			}
			continue
		}
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var names []string
	for _, c := range rep.Charts() {
		if strings.HasPrefix(c.Name, "metrics-") {
			names = append(names, c.Name)
			if _, err := c.SVG(); err != nil {
				t.Errorf("chart %s: %v", c.Name, err)
			}
		}
	}
	if strings.Join(names, ",") != "metrics-wal-fsync-0,metrics-db-size-0" {
		t.Errorf("charts %v", names)
	}
	// Two runs: two charts of each.
	two, err := Load([]string{filepath.Join("..", "render", "testdata", "metrics-3members.json"), filepath.Join("..", "render", "testdata", "metrics-3members-killed.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range New(Combine(two)).Charts() {
		if strings.HasPrefix(c.Name, "metrics-wal-fsync-") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d fsync charts for two runs", n)
	}
}
