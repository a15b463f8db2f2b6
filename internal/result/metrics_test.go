package result

import "testing"

func TestWorstP99(t *testing.T) {
	wal := func(s *MetricsSignals) *Latency { return s.WALFsync }
	m := &Metrics{Members: []MetricsMember{
		{Name: "never answered"},
		{Name: "a", Overall: &MetricsSignals{WALFsync: &Latency{Count: 10, P99: 0.004}}},
		{Name: "b", Overall: &MetricsSignals{WALFsync: &Latency{Count: 10, P99: 0.02}}},
		{Name: "idle", Overall: &MetricsSignals{WALFsync: &Latency{Count: 0, P99: 1}}},
		{Name: "no histogram", Overall: &MetricsSignals{}},
	}}
	if l := m.WorstP99(wal); l == nil || l.P99 != 0.02 {
		t.Errorf("worst %+v, want b's p99 0.02", l)
	}
	if l := m.WorstP99(func(s *MetricsSignals) *Latency { return s.PeerRTT }); l != nil {
		t.Errorf("worst of what no member observed: %+v, want nil", l)
	}
}
