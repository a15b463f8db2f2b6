package result

// BenchDetail is the part of the bench section beyond the summary; it is
// embedded in Bench, so its fields sit beside Bench's in the JSON.
type BenchDetail struct {
	// Description says in words what the workload made etcd do.
	Description string `json:"description,omitempty"`
	Clients     int    `json:"clients,omitempty"`
	Conns       int    `json:"conns,omitempty"`
	// Rate is the intended requests per second; absent when unpaced.
	Rate float64 `json:"rate,omitempty"`
	// Histogram is etcd benchmark's response time histogram: the number of
	// requests at or below each bound, in ten equal steps from the fastest
	// to the slowest.
	Histogram []HistogramBucket `json:"histogram,omitempty"`
	// Percentiles is etcd benchmark's latency distribution (10% ... 99.9%).
	Percentiles []Percentile `json:"percentiles,omitempty"`
	// Parts break a mixed workload down: txn-mixed's read and write,
	// watch-latency's put and watch.
	Parts []BenchPart `json:"parts,omitempty"`
	// Notes are facts the reader needs to trust the numbers.
	Notes []string `json:"notes,omitempty"`
	// Stalled is set when the run ended early because etcd stopped answering.
	Stalled *Stall `json:"stalled,omitempty"`
}

// HistogramBucket counts the requests in (previous bound, LE].
type HistogramBucket struct {
	LE    float64 `json:"le"`
	Count int64   `json:"count"`
}

// Percentile is the latency at percentile P (e.g. 99.9).
type Percentile struct {
	P     float64 `json:"p"`
	Value float64 `json:"value"`
}

// BenchPart is one kind of request of a mixed workload.
type BenchPart struct {
	Name    string   `json:"name"`
	Ops     int64    `json:"ops"`
	Errors  int64    `json:"errors,omitempty"`
	Latency *Latency `json:"latency,omitempty"`
}

// Target is the etcd cluster a run used.
type Target struct {
	// Kind is "embedded" (started by etcdperf) or "external".
	Kind      string   `json:"kind"`
	Endpoints []string `json:"endpoints,omitempty"`
	// EndpointsFrom names the environment variable the endpoints came
	// from (ETCDCTL_ENDPOINTS); empty when they were given as a flag.
	EndpointsFrom string `json:"endpoints_from,omitempty"`
	Version       string `json:"version,omitempty"`
	// DataDir is where the embedded members kept their data (removed after
	// the run unless kept).
	DataDir string         `json:"data_dir,omitempty"`
	Members []TargetMember `json:"members,omitempty"`
}

// TargetMember is one member of the target.
type TargetMember struct {
	Name       string `json:"name"`
	ClientURL  string `json:"client_url,omitempty"`
	MetricsURL string `json:"metrics_url,omitempty"`
	Leader     bool   `json:"leader,omitempty"`
	Version    string `json:"version,omitempty"`
	DataDir    string `json:"data_dir,omitempty"`
}
