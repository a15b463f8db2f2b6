package etcdlog

import "testing"

// Every wording in the class table, written as its etcd release writes
// it, is read and classified into its class.
func TestClassTableExamples(t *testing.T) {
	p := NewParser(ParserOptions{Year: 2021})
	for _, c := range AllClasses() {
		info := Classes[c]
		if info.ID == "" || info.Title == "" || len(info.Wordings) == 0 {
			t.Errorf("class %d has no id, title or wording", c)
		}
		for _, w := range info.Wordings {
			var e Entry
			if !p.Parse([]byte(w.Example), &e) {
				t.Errorf("%s: example not parsed: %s", info.ID, w.Example)
				continue
			}
			var ev Event
			if !new(Classifier).Classify(&e, &ev) || ev.Class != c {
				t.Errorf("%s: example classified as %s: %s", info.ID, ev.Class.ID(), w.Example)
			}
			if info.Took != "" && ev.Took <= 0 && w.Text != "finished defragmenting the storage backend" {
				// Every wording of a timed class says how long, except
				// capnslog's defrag line.
				t.Errorf("%s: no duration read from %s", info.ID, w.Example)
			}
			if e.Time.IsZero() {
				t.Errorf("%s: no time read from %s", info.ID, w.Example)
			}
		}
	}
	if id := SlowApply.ID(); id != "slow_apply" {
		t.Fatalf("SlowApply.ID() = %q", id)
	}
	if c, ok := ClassByID("heartbeat_late"); !ok || c != HeartbeatLate {
		t.Fatal("ClassByID(heartbeat_late)")
	}
}
