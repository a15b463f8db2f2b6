package limits

// The levels of the upkeep findings: what a defragmentation's stall and
// compaction's spikes are judged by.
const (
	DefragStall          = "defrag_stall"
	CompactionSpikeShare = "compaction_spike_share"
	CompactionsRegular   = "compactions_regular"
)

// leaderElection is where a Kubernetes controller's lease timings come from.
const leaderElection = "client-go leader election's defaults (k8s.io/component-base/config/v1alpha1 RecommendedDefaultLeaderElectionConfiguration: lease 15s, renew deadline 10s, retry 2s)"

var upkeepLevels = []Criterion{
	{ID: DefragStall, Title: "one defragmentation's stall (expected, or measured)", Unit: Seconds, Op: Below, Limit: 10, Findings: "defrag_stall, defrag_stall_expected",
		Source: leaderElection + ": a member that blocks longer than the renew deadline makes the controllers whose lease it serves lose it (gardener/etcd-backup-restore#1061); " + maintenance},
	{ID: CompactionSpikeShare, Title: "share of a member's latency spikes within seconds of a scheduled compaction", Unit: Fraction, Op: Below, Limit: 0.5, Findings: "compaction_spikes",
		Source: "etcd-io/etcd#11099 and #19406: backend commit and request latency spikes every 5 minutes, with the API server's compactions; half of the spikes with them is their pattern"},
	{ID: CompactionsRegular, Title: "scheduled compactions a period needs", Unit: Count, Op: AtLeast, Limit: 3, Findings: "compaction_spikes",
		Source: "three compactions give two intervals: the least that shows a period (kube-apiserver's --etcd-compaction-interval, 5m by default)"},
}

func init() { Table = append(Table, upkeepLevels...) }
