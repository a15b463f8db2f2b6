package result

// Host holds the host's USE metrics for the storage under test while the
// run lasted, from /proc/diskstats and /proc/stat (as iostat and
// node-exporter read them).
type Host struct {
	// Hostname is the host the figures were measured on: the one etcdperf
	// ran on. They describe a member only when it runs there too.
	Hostname string `json:"hostname,omitempty"`
	// Device is the block device the metrics are of ("" when the storage
	// has none, e.g. tmpfs: then only the CPU figures are present).
	Device string `json:"device,omitempty"`
	// Summary covers the whole run; Series one sample per interval.
	Summary HostSample   `json:"summary"`
	Series  []HostSample `json:"series,omitempty"`
}

// HostSample is one interval of host metrics. Fractions are 0..1; times are
// seconds; rates per second.
type HostSample struct {
	// T is the sample's end, in seconds since the run started.
	T       float64 `json:"t,omitempty"`
	Seconds float64 `json:"seconds"`
	// Util is the fraction of time the device had I/O in flight (iostat %util).
	Util float64 `json:"util"`
	// WriteIOPS and WriteBytes are completed writes and bytes per second.
	WriteIOPS  float64 `json:"write_iops"`
	WriteBytes float64 `json:"write_bytes"`
	ReadIOPS   float64 `json:"read_iops"`
	// WriteAwait is the mean time a write spent queued and serviced (iostat w_await).
	WriteAwait float64 `json:"write_await"`
	// AvgWriteSize is bytes per completed write.
	AvgWriteSize float64 `json:"avg_write_size"`
	// QueueDepth is the mean number of requests in flight (iostat aqu-sz).
	QueueDepth float64 `json:"queue_depth"`
	// FlushIOPS and FlushAwait are the device's cache flushes (what
	// fdatasync sends), on kernels that count them.
	FlushIOPS  float64 `json:"flush_iops,omitempty"`
	FlushAwait float64 `json:"flush_await,omitempty"`
	// IOWait, Steal and CPUBusy are fractions of all CPU time.
	IOWait  float64 `json:"iowait"`
	Steal   float64 `json:"steal"`
	CPUBusy float64 `json:"cpu_busy"`
}
